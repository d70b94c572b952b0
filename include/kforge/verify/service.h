// The verify service: compiles solutions (in parallel), checks them statically against their task
// and runs them against the reference on GPU workers (one per device). Submit from any thread; each
// solution's verdict arrives through its own future. `kforge verify`, `kforge bench` and the
// generate loop share it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/bench_record.h"
#include "kforge/common/library_ops.h"
#include "kforge/common/solution.h"
#include "kforge/common/task.h"
#include "kforge/common/verdict.h"
#include "kforge/verify/solution_reader.h"
#include "kforge/verify/worker_protocol.h"
#include "kforge/verify/worker_session.h"

namespace kforge::verify {

/// What a follow-up stage gets for a solution that passed: its worker, task, solution and CUBIN.
struct AfterCheck {
  WorkerSession& worker;
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
  int trials = kDefaultTrials;
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
  std::chrono::milliseconds kernel_timeout = kDefaultKernelTimeout;
  /// Time a GPU check may take beside its launches (loading the reference, drawing inputs,
  /// comparing): the worker is killed, and the verdict is `timeout`, when a check takes longer than
  /// this plus kernel_timeout × (trials + 8). Default 120 s.
  std::chrono::milliseconds check_allowance{120000};
  /// Longest one compile may take. Default 30 s.
  std::chrono::milliseconds compile_timeout{30000};
  /// Which library ops plans may call (plan v2 `op` steps): --allow-ops none, library or all.
  common::OpPolicy op_policy = common::OpPolicy::kLibrary;
  /// Use the on-disk CUBIN cache. Default true.
  bool use_cache = true;
  /// Compile threads; 0 means one per core.
  size_t compile_threads = 0;
  /// The kforge executable that serves `kforge worker`.
  std::filesystem::path worker_program;
  /// Run the GPU check. Default true; when false, compiled solutions go straight to `after_check`.
  bool gpu_check = true;
  /// Workers measure (or read from the cache) the device's peak bandwidth and FLOP/s when they
  /// start, for Hello(). Default false.
  bool peak_at_start = false;
  /// Work for each solution that passed, on its device thread and worker: bench's timing
  /// (Bencher::TimingStage), whose record reaches the caller beside the verdict. Default none.
  std::function<std::optional<common::BenchResult>(const AfterCheck&)> after_check;
};

/// A solution's verdict and what `after_check` returned for it (none when it did not run).
struct Judged {
  common::Verdict verdict;
  std::optional<common::BenchResult> bench;
};

/// A run seed drawn from the system's entropy, for runs not given one.
uint64_t RandomSeed();

class VerifyService {
 public:
  /// Starts one device thread per device (one compile-finishing thread in compile-only mode); workers
  /// start at once so that CUDA initialises while the first compiles run.
  explicit VerifyService(VerifyOptions options);
  /// Judges everything submitted, then stops the workers.
  ~VerifyService();
  VerifyService(const VerifyService&) = delete;
  VerifyService& operator=(const VerifyService&) = delete;

  /// Queues one solution (as read, or why it could not be read). Never throws for a bad solution:
  /// its verdict says what is wrong. Thread-safe. `seed` replaces the service's seed for this
  /// solution (a judge server's clients each bring theirs).
  std::future<Judged> Submit(SolutionInput input, std::optional<uint64_t> seed = std::nullopt);

  uint64_t seed() const { return seed_; }
  /// The first worker's hello reply: status ok with the device (and its peak with
  /// VerifyOptions::peak_at_start), no_gpu, or harness_error when the worker could not start; nullopt in
  /// compile-only and sanitize modes, where no worker is asked. Waits for it.
  std::optional<HelloReply> Hello() const;
  /// True once a worker found no usable GPU.
  bool no_gpu() const;
  const VerifyOptions& options() const { return options_; }

 private:
  struct Impl;
  VerifyOptions options_;
  uint64_t seed_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kforge::verify
