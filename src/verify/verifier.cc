// verify over a stream of solutions, in input order.
#include "kforge/verify/verifier.h"

#include <spdlog/spdlog.h>

namespace kforge::verify {

VerifySummary Verifier::Run(SolutionReader& reader,
                            const std::function<void(const common::Verdict&, const nlohmann::json&)>& emit) {
  VerifySummary summary;
  ForEachInOrder<Judged>(
      reader, [this](SolutionInput input) { return service_.Submit(std::move(input)); },
      [&](Judged& judged) {
        const common::Verdict& verdict = judged.verdict;
        ++summary.total;
        if (verdict.status == common::VerdictStatus::kOk) ++summary.ok;
        ++summary.by_status[std::string(common::VerdictStatusName(verdict.status))];
        if (verdict.status == common::VerdictStatus::kNoGpu) summary.no_gpu = true;
        try {
          emit(verdict, judged.after);
        } catch (const std::exception& e) {
          spdlog::error("internal error while reporting {}: {}", verdict.solution, e.what());
        }
      });
  return summary;
}

}  // namespace kforge::verify
