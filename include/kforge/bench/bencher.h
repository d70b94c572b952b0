// bench: verify each solution briefly, then time it against its reference in the GPU worker
// (bench::Measure there) and turn the samples into records; or time references alone.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kforge/bench/measure.h"
#include "kforge/bench/report.h"
#include "kforge/bench/wire.h"
#include "kforge/verify/solution_reader.h"
#include "kforge/verify/verifier.h"
#include "kforge/verify/worker_session.h"

namespace kforge::bench {

struct BenchOptions {
  /// Compile, static checks, devices, seed and the brief GPU check before timing. Its `trials`
  /// default here is 2; `after_check` is set by the Bencher.
  verify::VerifyOptions verify;
  /// How to sample (cold or hot, noise target, bounds).
  MeasureOptions measure;
};

/// Records by status, for the summary and the exit code.
struct BenchSummary {
  int total = 0;
  int ok = 0;
  int harness_errors = 0;  ///< kforge's own failures (exit 2)
  bool no_gpu = false;
};

class Bencher {
 public:
  explicit Bencher(BenchOptions options);

  /// One record per solution, in input order: "ok" with timings, or the status that stopped it
  /// (the verdict's, or the timed runs').
  BenchSummary Run(verify::SolutionReader& reader, const std::function<void(const BenchResult&)>& emit);
  /// As Run; `emit` also gets the verdict of the check before timing (CI reports name the solution).
  BenchSummary RunJudged(verify::SolutionReader& reader,
                         const std::function<void(const BenchResult&, const common::Verdict&)>& emit);

  /// One record per task id: its reference alone, timed on the first device.
  BenchSummary RunReferences(const std::vector<std::string>& task_ids,
                             const std::function<void(const BenchResult&)>& emit);

  /// The stage that times a solution that passed, in its worker, for a VerifyService of one's own
  /// (VerifyOptions::after_check): its BenchResult, made there from the reply and the task the service
  /// holds. Record completes it.
  std::function<std::optional<BenchResult>(const verify::AfterCheck&)> TimingStage() const;
  /// options().verify with the timing stage: what a service (or a Verifier) that times is built from.
  verify::VerifyOptions TimedVerifyOptions() const;
  /// The record of a judged solution: the verdict's status when it did not pass (or was not timed),
  /// else the timing stage's result. Thread-safe.
  BenchResult Record(const common::Verdict& verdict, const std::optional<BenchResult>& timed) const;

  uint64_t seed() const { return seed_; }
  const BenchOptions& options() const { return options_; }

 private:
  BenchRequest RequestFor(const common::Task& task, uint64_t seed) const;
  /// How long a bench request may take before its worker is killed (three times --max-time, plus 2 min).
  std::chrono::milliseconds BenchDeadline() const;
  BenchResult FromReply(const common::Task& task, const BenchReply& reply) const;
  /// `first` (an implausible speedup) timed again in `worker` on fresh input draws and with the other
  /// timing mode: its `recheck_speedup` and flags, or the re-timing's own failure when the candidate
  /// failed a timed run there.
  BenchResult Recheck(BenchResult first, verify::WorkerSession& worker, const BenchRequest& request,
                      const common::Task& task, std::chrono::milliseconds deadline) const;

  BenchOptions options_;
  uint64_t seed_;
};

/// The cost of one run of the task's default variant from its formulas; nullopt without them.
std::optional<TaskCost> CostOf(const common::Task& task);

}  // namespace kforge::bench
