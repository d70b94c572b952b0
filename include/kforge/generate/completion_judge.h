// kforge as the reward of reinforcement learning: the judge of raw model completions. A client names a
// task by id (the server holds the tasks; no path or reference crosses the wire) and sends what the
// model wrote, text or tool calls, as generate would have received it. Each completion is read with
// generate's reply parser, judged as an episode's candidate is, and answered with the verdict, the
// reward components, a shaped reward (docs/rl.md) and the feedback generate would send. Served by
// `kforge serve` as the protocol kforge.rl/1 (verify::ServeProtocol); a batch is judged at once over
// every core (and GPU).
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/bench/bencher.h"
#include "kforge/bench/judge.h"
#include "kforge/common/status.h"
#include "kforge/common/task.h"
#include "kforge/verify/judge_server.h"

namespace kforge::generate {

inline constexpr const char* kRlProtocol = "kforge.rl/1";

struct CompletionJudgeOptions {
  /// Root of the task folders; clients name tasks by id below it. Default "tasks".
  std::filesystem::path tasks_root = "tasks";
  /// Prompt templates (system.md, task.md, feedback.md). Default "prompts".
  std::filesystem::path prompts_dir = "prompts";
  /// How candidates are judged (the bench::Judge's options): the verify options (devices, arch,
  /// trials, compile-only) and the timing of correct ones. `bench.verify.compile_only` makes the
  /// judge compile and check plans only.
  bench::BenchOptions bench;
  /// A correct completion at least this much faster than the reference ends an episode (`done`).
  /// Default 1.0, as generate's --target-speedup.
  double target_speedup = 1.0;
  /// Completions in one request at most. Default 512.
  size_t max_batch = 512;
  /// Bytes of one completion at most (its text, or its message's JSON). Default 256 KiB.
  size_t max_completion_bytes = size_t{256} << 10;
  /// Completions being judged at once over every client; a batch that would go past it is answered
  /// "busy" without being judged. Default 4096.
  size_t max_in_flight = 4096;
};

/// The default shaped reward (docs/rl.md): 0.1 for a candidate that compiled (compile-only: compiled
/// with a plan that checks out), 0.3 more when it is correct, and 0.6 × min(speedup, 4) / 4 more when
/// it is correct and its timing was accepted (`speedup` is empty for a refused or missing timing).
double ShapedReward(bool compiled, bool correct, std::optional<double> speedup);

class CompletionJudge final : public verify::ServeProtocol {
 public:
  /// Loads the tasks and the prompts; the judge itself (a bench::ServiceJudge on `options.bench`, its
  /// workers) starts with the first request that needs it. `judge`, when given, is used instead (not
  /// owned; it must outlive this): a scripted one in tests. Errors name the folder or file.
  static StatusOr<std::unique_ptr<CompletionJudge>> Create(CompletionJudgeOptions options,
                                                           bench::Judge* judge = nullptr);
  ~CompletionJudge() override;

  std::string Name() const override { return kRlProtocol; }
  nlohmann::json About() const override;
  size_t MaxRequestBytes() const override;
  /// {"op": "judge", "batch": [...]}, {"op": "prompt", "task": ID}, {"op": "tasks"} or {"op": "stats"}
  /// (docs/rl.md).
  nlohmann::json Answer(const nlohmann::json& request, const std::function<bool()>& gone) override;

 private:
  explicit CompletionJudge(CompletionJudgeOptions options);
  bench::Judge& judge();
  nlohmann::json Tasks() const;
  nlohmann::json Prompt(const nlohmann::json& request);
  nlohmann::json JudgeBatch(const nlohmann::json& request, const std::function<bool()>& gone);

  CompletionJudgeOptions options_;
  struct Loaded;
  std::unique_ptr<Loaded> loaded_;  ///< tasks and prompts
  bench::Judge* given_judge_ = nullptr;  ///< Create's `judge`; none: service_judge_
  std::once_flag judge_started_;
  std::unique_ptr<bench::ServiceJudge> service_judge_;
  std::atomic<size_t> in_flight_{0};
  std::atomic<size_t> judged_{0};     ///< completions answered, since the server started
  std::atomic<size_t> abandoned_{0};  ///< completions dropped because their client left
  std::mutex references_mu_;
  std::map<std::string, std::string> references_;  ///< task id -> reference as shown, read once
};

}  // namespace kforge::generate
