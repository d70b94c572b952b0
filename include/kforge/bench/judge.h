// The judge of one candidate: the check against its reference (verify) and, for a candidate that
// passed on a GPU, its timing (bench), as one typed judgment. generate's episodes take the `Judge`
// interface, so a test can script verdicts; `ServiceJudge` is the real one, built in one place for
// generate and bench.
#pragma once

#include <future>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "kforge/bench/bencher.h"
#include "kforge/common/verdict.h"
#include "kforge/verify/service.h"

namespace kforge::bench {

/// What the judge says of one candidate.
struct Judgment {
  common::Verdict verdict;
  /// The timing of a candidate that passed, from a judge that times (on a GPU, not compile-only):
  /// "ok" with its timings, or the status that stopped the timed runs.
  std::optional<BenchResult> bench;
};

class Judge {
 public:
  virtual ~Judge() = default;
  /// Queues one candidate (as read, or why it could not be read); its judgment arrives through the
  /// future. Never throws for a bad candidate. Thread-safe.
  virtual std::future<Judgment> Submit(verify::SolutionInput input) = 0;
};

/// The judge on the devices of `options.verify`: a VerifyService whose workers check each candidate
/// and time the ones that pass (Bencher::TimedVerifyOptions), or, compile-only, one that compiles and
/// checks plans only (judgments without timing).
class ServiceJudge final : public Judge {
 public:
  enum class Mode { kTimed, kCompileOnly };
  /// Starts the service (its workers start at once).
  ServiceJudge(const BenchOptions& options, Mode mode);

  /// The future is deferred: the timing record is made when get() is called, which must be before
  /// the judge is destroyed.
  std::future<Judgment> Submit(verify::SolutionInput input) override;
  /// The first worker's hello reply (VerifyService::Hello); nullopt when compile-only. Waits for it.
  std::optional<verify::HelloReply> Hello() const { return service_->Hello(); }

 private:
  std::unique_ptr<Bencher> bencher_;  ///< null when compile-only
  std::unique_ptr<verify::VerifyService> service_;
};

}  // namespace kforge::bench
