// verify: compile every solution (in parallel), check it statically against its task, then run it
// against the reference in GPU worker processes; verdicts come out in input order.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/solution.h"
#include "kforge/common/task.h"
#include "kforge/common/verdict.h"
#include "kforge/verify/solution_reader.h"
#include "kforge/verify/worker_client.h"

namespace kforge::verify {

/// What a follow-up stage gets for a solution that passed: its worker, task, solution and CUBIN.
struct AfterCheck {
  WorkerClient& worker;
  const common::Task& task;
  const common::Solution& solution;
  const std::string& cubin;
  uint64_t seed;
};

struct VerifyOptions {
  /// Root of the task folders; task ids are looked up below it. Default "tasks".
  std::filesystem::path tasks_root = "tasks";
  /// Task id for solutions that do not name one. Default: none.
  std::string task;
  /// Trials on fresh inputs for the default shape; each extra variant adds one. Default 5.
  int trials = 5;
  /// Run seed; random when unset. Recorded in every verdict.
  std::optional<uint64_t> seed;
  /// Stop after compiling and checking the plan statically (no GPU needed). Default false.
  bool compile_only = false;
  /// GPUs to run workers on, one worker each. Default {0}.
  std::vector<int> devices = {0};
  /// Run workers under compute-sanitizer (memcheck), one worker per solution. Default false.
  bool sanitize = false;
  /// NVRTC target. Default sm_90a.
  std::string arch = "sm_90a";
  /// Longest a candidate's launches may run once. Default 10 s.
  std::chrono::milliseconds kernel_timeout{10000};
  /// Longest one compile may take. Default 30 s.
  std::chrono::milliseconds compile_timeout{30000};
  /// Use the on-disk CUBIN cache. Default true.
  bool use_cache = true;
  /// Compile threads; 0 means one per core.
  size_t compile_threads = 0;
  /// The kforge executable that serves `kforge worker`.
  std::filesystem::path worker_program;
  /// Run the GPU check. Default true; when false, compiled solutions go straight to `after_check`.
  bool gpu_check = true;
  /// Work for each solution that passed, on its device thread and worker (bench times it there). Its
  /// result reaches `emit` beside the verdict. Default none.
  std::function<nlohmann::json(const AfterCheck&)> after_check;
};

/// Counts by status, for the summary and the exit code.
struct VerifySummary {
  int total = 0;
  int ok = 0;
  std::map<std::string, int> by_status;
  bool no_gpu = false;
};

class Verifier {
 public:
  explicit Verifier(VerifyOptions options);
  ~Verifier();

  /// Checks every solution `reader` yields; `emit` receives each verdict, in input order, as soon
  /// as it and all earlier ones are done, with what `after_check` returned (null when it did not run).
  VerifySummary Run(SolutionReader& reader,
                    const std::function<void(const common::Verdict&, const nlohmann::json& after)>& emit);

  uint64_t seed() const { return seed_; }

 private:
  struct Impl;
  VerifyOptions options_;
  uint64_t seed_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kforge::verify
