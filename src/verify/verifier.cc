// verify over a stream of solutions, in input order.
#include "kforge/verify/verifier.h"

#include <spdlog/spdlog.h>

namespace kforge::verify {

namespace {

/// A verdict with the solution it judged, when kept.
struct JudgedSolution {
  Judged judged;
  std::optional<common::Solution> solution;
};

}  // namespace

VerifySummary Verifier::Run(
    SolutionReader& reader,
    const std::function<void(const common::Verdict&, const std::optional<common::BenchResult>&)>& emit) {
  return RunWithSolutions(
      reader, [&emit](const common::Verdict& verdict, const std::optional<common::BenchResult>& bench,
                      const common::Solution*) { emit(verdict, bench); });
}

VerifySummary Verifier::RunWithSolutions(
    SolutionReader& reader,
    const std::function<void(const common::Verdict&, const std::optional<common::BenchResult>&,
                             const common::Solution*)>& emit) {
  VerifySummary summary;
  ForEachInOrder<JudgedSolution>(
      reader,
      [this](SolutionInput input) {
        std::optional<common::Solution> solution;
        if (input.solution.ok()) solution = *input.solution;
        // Deferred: the verdict's future is waited on by the thread that emits, in input order.
        return std::async(std::launch::deferred, [judged = submit_(std::move(input)),
                                                  solution = std::move(solution)]() mutable {
          return JudgedSolution{judged.get(), std::move(solution)};
        });
      },
      [&](JudgedSolution& entry) {
        const Judged& judged = entry.judged;
        const common::Verdict& verdict = judged.verdict;
        ++summary.total;
        if (verdict.status == common::VerdictStatus::kOk) ++summary.ok;
        ++summary.by_status[std::string(common::VerdictStatusName(verdict.status))];
        if (verdict.status == common::VerdictStatus::kNoGpu) summary.no_gpu = true;
        try {
          emit(verdict, judged.bench, entry.solution ? &*entry.solution : nullptr);
        } catch (const std::exception& e) {
          spdlog::error("internal error while reporting {}: {}", verdict.solution, e.what());
        }
      });
  return summary;
}

}  // namespace kforge::verify
