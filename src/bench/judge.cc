// The judge of a run (bench/judge.h).
#include "kforge/bench/judge.h"

#include <utility>

namespace kforge::bench {

ServiceJudge::ServiceJudge(const BenchOptions& options, Mode mode) {
  switch (mode) {
    case Mode::kTimed:
      bencher_ = std::make_unique<Bencher>(options);
      service_ = std::make_unique<verify::VerifyService>(bencher_->TimedVerifyOptions());
      return;
    case Mode::kCompileOnly: {
      verify::VerifyOptions verify_options = options.verify;
      verify_options.compile_only = true;
      service_ = std::make_unique<verify::VerifyService>(std::move(verify_options));
      return;
    }
  }
}

std::future<Judgment> ServiceJudge::Submit(verify::SolutionInput input) {
  // Deferred: the record is made on the thread that waits for it, from the service's reply.
  return std::async(std::launch::deferred, [this, judged = service_->Submit(std::move(input))]() mutable {
    verify::Judged reply = judged.get();
    Judgment judgment{std::move(reply.verdict), std::nullopt};
    if (bencher_ && judgment.verdict.status == common::VerdictStatus::kOk)
      judgment.bench = bencher_->Record(judgment.verdict, reply.bench);
    return judgment;
  });
}

}  // namespace kforge::bench
