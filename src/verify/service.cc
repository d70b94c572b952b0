// The verify service: check statically, compile in parallel, run on GPU workers.
#include "kforge/verify/service.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include <unistd.h>

#include "kforge/common/task.h"
#include "kforge/common/text.h"
#include "kforge/cuda/compile_pool.h"
#include "kforge/cuda/compiler.h"
#include "kforge/cuda/launch_plan.h"
#include "kforge/cuda/plan_env.h"
#include "kforge/cuda/versions.h"
#include "kforge/verify/worker_protocol.h"
#include "kforge/verify/worker_session.h"

namespace kforge::verify {
namespace {

using common::Verdict;
using common::VerdictStatus;

struct Job {
  Verdict verdict;
  common::Solution solution;  ///< Once compiled, its launches name kernels by symbol.
  const common::Task* task = nullptr;
  uint64_t seed = 0;  ///< The inputs' seed: the service's, or the one the submission asked for.
  std::future<cuda::CompileResult> compile;  ///< Not valid when the verdict was final before compiling.
  std::string cubin;
  std::optional<common::BenchResult> bench;  ///< What VerifyOptions::after_check returned.
  std::promise<Judged> done;

  void Finish() { done.set_value(Judged{std::move(verdict), std::move(bench)}); }
};

/// What a device thread knows of its worker.
struct DeviceState {
  /// The worker found no usable GPU (at hello or in a check): every later verdict is no_gpu.
  bool no_gpu = false;
  std::string no_gpu_message;
  /// The worker's start, reported on the first verdict it serves.
  std::optional<double> worker_start_ms;
};

std::map<std::string, std::string> Toolchain(const std::string& arch) {
  std::map<std::string, std::string> toolchain = {{"kforge", KFORGE_VERSION},
                                                   {"nvrtc", cuda::NvrtcVersion()},
                                                   {"cuda_runtime", cuda::RuntimeVersion()},
                                                   {"arch", arch}};
  if (*KFORGE_LIBTORCH_VERSION) toolchain["libtorch"] = KFORGE_LIBTORCH_VERSION;
  return toolchain;
}

void Fail(Verdict& verdict, VerdictStatus status, std::string message) {
  verdict.status = status;
  verdict.message = std::move(message);
}

/// Resolves the plan, scratch included, against the real shapes of every declared variant of the task
/// (the GPU check runs each of them; a derived variant that the plan does not fit is the GPU check's
/// shape_general, not a verdict); an error names the variant unless it is the default one.
Status CheckPlanStatically(const common::Task& task, const common::Solution& solution, common::OpPolicy op_policy) {
  for (const common::Variant& variant : task.variants) {
    if (variant.kind == common::VariantKind::kDerived) continue;
    Status status = [&]() -> Status {
      KFORGE_ASSIGN_OR_RETURN(cuda::PlanEnv env, cuda::PlanEnvFor(task, variant));
      cuda::LaunchLimits limits;
      limits.op_policy = op_policy;
      KFORGE_RETURN_IF_ERROR(cuda::AddScratch(solution, limits, env));
      return cuda::ResolvePlan(solution, env, limits).status();
    }();
    if (!status.ok()) {
      if (variant.name == task.variants.front().name) return status;
      return Status::InvalidArgument(status.message() + " (variant " + common::Quote(variant.name) + ")");
    }
  }
  return Status::Ok();
}

cuda::CompilerOptions CompilerOptionsFor(const VerifyOptions& options) {
  cuda::CompilerOptions compiler;
  compiler.timeout = options.compile_timeout;
  compiler.use_cache = options.use_cache;
  return compiler;
}

/// The kernel names of a plan that only NVRTC can resolve (template instances, qualified names).
std::vector<std::string> NameExpressions(const common::Solution& solution) {
  std::vector<std::string> names;
  for (const common::LaunchStep& step : solution.launches) {
    if (step.kind != common::LaunchStep::Kind::kKernel) continue;
    const bool plain = std::all_of(step.kernel.begin(), step.kernel.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (!plain && std::find(names.begin(), names.end(), step.kernel) == names.end())
      names.push_back(step.kernel);
  }
  return names;
}

}  // namespace

struct VerifyService::Impl {
  explicit Impl(const VerifyOptions& options)
      : options_(options),
        compiler(CompilerOptionsFor(options)),
        pool(compiler, options.compile_threads),
        toolchain(Toolchain(options.arch)) {}

  /// Judges the queued solutions in the device's worker until the service closes.
  void DeviceLoop(int device);
  /// Says hello (not compile-only or sanitizing); the first device's reply answers Hello().
  DeviceState Greet(WorkerSession& session);
  /// The next queued solution, waiting for one; null once the service closes and the queue is empty.
  std::shared_ptr<Job> NextJob();
  /// Finishes the compile, then the GPU check and the follow-up stage.
  void Judge(Job& job, WorkerSession& session, DeviceState& state);
  /// The GPU check in the worker, into the verdict.
  void GpuCheck(Job& job, WorkerSession& session, DeviceState& state);
  std::shared_ptr<Job> Prepare(SolutionInput input, uint64_t seed);

  const VerifyOptions& options_;
  cuda::Compiler compiler;
  cuda::CompilePool pool;
  std::map<std::string, std::string> toolchain;
  std::mutex tasks_mu;  // guards `tasks` (Prepare runs on the submitting threads)
  std::map<std::string, StatusOr<common::Task>> tasks;

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Job>> gpu_queue;
  bool closing = false;
  std::atomic<bool> saw_no_gpu{false};
  std::once_flag hello_once;  // the first device's hello reply answers Hello()
  std::promise<std::optional<HelloReply>> hello_promise;
  std::shared_future<std::optional<HelloReply>> hello = hello_promise.get_future().share();
  std::vector<std::thread> device_threads;
};

namespace {

/// Fills the compile part of the verdict; returns false when the verdict is final.
bool FinishCompile(Job& job) {
  cuda::CompileResult result;
  try {
    result = job.compile.get();
  } catch (const std::exception& e) {
    Fail(job.verdict, VerdictStatus::kCompileError, std::string("compiler failure: ") + e.what());
    return false;
  }
  auto arch = job.verdict.toolchain.find("arch");
  job.verdict.compile = common::CompileFacts{result.wall_ms,
                                             result.cached,
                                             result.log,
                                             arch == job.verdict.toolchain.end() ? "" : arch->second,
                                             result.kernels,
                                             result.warnings,
                                             {}};
  if (result.status != cuda::CompileStatus::kOk) {
    // A compile that outlives its deadline is a compile error: `timeout` is for kernels that hang.
    VerdictStatus status = result.status == cuda::CompileStatus::kInvalidSolution
                               ? VerdictStatus::kInvalidSolution
                               : VerdictStatus::kCompileError;
    Fail(job.verdict, status, result.message.empty() ? "compile failed" : result.message);
    return false;
  }
  // The worker looks kernels up by symbol: from here on the plan names them so.
  for (size_t i = 0; i < job.solution.launches.size(); ++i) {
    common::LaunchStep& step = job.solution.launches[i];
    if (step.kind != common::LaunchStep::Kind::kKernel) continue;
    StatusOr<std::string> symbol = cuda::FindKernel(result, step.kernel);
    if (!symbol.ok()) {
      Fail(job.verdict, VerdictStatus::kInvalidSolution,
           "launches[" + std::to_string(i) + "].kernel: " + symbol.status().message());
      return false;
    }
    step.kernel = *symbol;
  }
  job.cubin = std::move(result.cubin);
  return true;
}

/// The worker of `device`: under compute-sanitizer with --sanitize (its log per process and device),
/// asked for the device's peaks with peak_at_start.
WorkerSessionOptions SessionOptionsFor(const VerifyOptions& options, int device) {
  WorkerSessionOptions session;
  session.program = options.worker_program;
  session.device = device;
  session.sanitize = options.sanitize;
  session.sanitizer_log =
      "/tmp/kforge-sanitizer-" + std::to_string(getpid()) + "-" + std::to_string(device) + ".log";
  session.peak = options.peak_at_start;
  return session;
}

/// The GPU part of a check's reply, into the verdict (its status and message are there already).
void TakeCheckReply(CheckReply& reply, Verdict& verdict, DeviceState& state) {
  verdict.trials = std::move(reply.trials);
  verdict.checks = std::move(reply.checks);
  verdict.device = std::move(reply.device);
  verdict.timing = reply.timing ? reply.timing->Record() : common::VerdictTiming{};
  verdict.memory = std::move(reply.memory);
  if (state.worker_start_ms)
    verdict.timing.worker_start_ms = *std::exchange(state.worker_start_ms, std::nullopt);
  if (verdict.status == VerdictStatus::kNoGpu) {
    state.no_gpu = true;
    state.no_gpu_message = verdict.message;
  }
}

}  // namespace

DeviceState VerifyService::Impl::Greet(WorkerSession& session) {
  DeviceState state;
  if (options_.sanitize || options_.compile_only) {
    std::call_once(hello_once, [&] { hello_promise.set_value(std::nullopt); });
    return state;
  }
  // The worker starts now, so that CUDA and LibTorch initialise while the first compiles run.
  const HelloReply& hello = session.Hello();
  state.worker_start_ms = session.hello_ms();
  if (hello.status == VerdictStatus::kNoGpu) {
    state.no_gpu = true;
    state.no_gpu_message = hello.message;
  }
  std::call_once(hello_once, [&] { hello_promise.set_value(hello); });
  return state;
}

std::shared_ptr<Job> VerifyService::Impl::NextJob() {
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return closing || !gpu_queue.empty(); });
  if (gpu_queue.empty()) return nullptr;
  std::shared_ptr<Job> job = std::move(gpu_queue.front());
  gpu_queue.pop_front();
  return job;
}

void VerifyService::Impl::GpuCheck(Job& job, WorkerSession& session, DeviceState& state) {
  CheckRequest request;
  request.task_dir = job.task->dir;
  request.solution = job.solution;
  request.cubin = job.cubin;
  request.trials = options_.trials;
  request.seed = job.seed;
  request.kernel_timeout = options_.kernel_timeout;
  auto deadline = options_.check_allowance + options_.kernel_timeout * (options_.trials + 8);
  CheckReply reply = session.Check(request, deadline);
  const std::optional<WorkerFailure>& failure = session.last_failure();
  Verdict& verdict = job.verdict;
  Fail(verdict, reply.status, std::move(reply.message));
  if (!failure) TakeCheckReply(reply, verdict, state);
  const bool answered = !failure || failure->kind == WorkerFailure::Kind::kUnreadable;
  if (options_.sanitize && answered) {
    if (std::optional<std::string> found = session.EndSanitized())
      Fail(verdict, VerdictStatus::kCrash, "compute-sanitizer: " + *found);
    verdict.checks.sanitizer =
        verdict.status == VerdictStatus::kCrash ? common::CheckOutcome::kFail : common::CheckOutcome::kPass;
  }
}

void VerifyService::Impl::Judge(Job& job, WorkerSession& session, DeviceState& state) {
  Verdict& verdict = job.verdict;
  if (FinishCompile(job) && !options_.compile_only) {
    if (state.no_gpu) {
      Fail(verdict, VerdictStatus::kNoGpu, state.no_gpu_message);
    } else if (!options_.gpu_check) {
      verdict.checks.gpu_check = common::CheckOutcome::kSkipped;
    } else {
      GpuCheck(job, session, state);
    }
  }
  if (options_.after_check && verdict.status == VerdictStatus::kOk && !state.no_gpu && !options_.compile_only)
    job.bench = options_.after_check({session, *job.task, job.solution, job.cubin, job.seed});
}

void VerifyService::Impl::DeviceLoop(int device) {
  WorkerSession session(SessionOptionsFor(options_, device));
  DeviceState state = Greet(session);
  while (std::shared_ptr<Job> job = NextJob()) {
    try {
      Judge(*job, session, state);
    } catch (const std::exception& e) {  // a bug: this solution's verdict, never the batch
      Fail(job->verdict, VerdictStatus::kHarnessError, std::string("internal error: ") + e.what());
    }
    if (job->verdict.status == VerdictStatus::kNoGpu) saw_no_gpu = true;
    job->Finish();
  }
}

/// Reads the task, checks the plan and starts the compile; a verdict that is final before compiling
/// has no compile started.
std::shared_ptr<Job> VerifyService::Impl::Prepare(SolutionInput input, uint64_t seed) {
    auto job = std::make_shared<Job>();
    job->seed = seed;
    Verdict& v = job->verdict;
    v.solution = input.label;
    v.seed = seed;
    v.toolchain = toolchain;
    if (!input.solution.ok()) {
      // Internal: kforge could not read the input (a bug or a broken environment), not a bad solution.
      bool ours = input.solution.status().code() == Status::Code::kInternal;
      Fail(v, ours ? VerdictStatus::kHarnessError : VerdictStatus::kInvalidSolution,
           input.solution.status().message());
      return job;
    }
    job->solution = std::move(*input.solution);
    v.solution_hash = common::SolutionHash(job->solution);
    v.task = job->solution.task.empty() ? options_.task : job->solution.task;
    if (!v.task.empty()) {
      std::lock_guard<std::mutex> lock(tasks_mu);
      auto it = tasks.find(v.task);
      if (it == tasks.end())
        it = tasks.emplace(v.task, common::FindTask(options_.tasks_root, v.task)).first;
      if (!it->second.ok()) {
        std::string shown = common::CheckTaskId(v.task).ok() ? v.task : common::Quote(v.task);
        Fail(v, VerdictStatus::kInvalidSolution, "task " + shown + ": " + it->second.status().message());
        return job;
      }
      job->task = &*it->second;
      Status plan = CheckPlanStatically(*job->task, job->solution, options_.op_policy);
      if (!plan.ok()) {
        Fail(v, VerdictStatus::kInvalidSolution, plan.message());
        return job;
      }
    } else if (!options_.compile_only) {
      Fail(v, VerdictStatus::kInvalidSolution,
           "no task: name it in the solution's \"task\" field or with --task");
      return job;
    }
    cuda::CompileRequest request;
    request.source = job->solution.source;
    request.options = job->solution.options;
    request.arch = options_.arch;
    request.name_expressions = NameExpressions(job->solution);
    job->compile = pool.Submit(std::move(request));
    return job;
}



uint64_t RandomSeed() { return std::random_device{}() * uint64_t{0x100000000} + std::random_device{}(); }

VerifyService::VerifyService(VerifyOptions options)
    : options_(std::move(options)),
      seed_(options_.seed ? *options_.seed : RandomSeed()),
      impl_(std::make_unique<Impl>(options_)) {
  // LibTorch's NativeRT warns about ops without static kernels on every load; keep workers quiet.
  setenv("TORCH_CPP_LOG_LEVEL", "ERROR", 0);
  // Compile-only: one thread finishes compiles in submission order and never starts a worker.
  std::vector<int> devices = options_.compile_only ? std::vector<int>{-1} : options_.devices;
  for (int device : devices) impl_->device_threads.emplace_back([this, device] { impl_->DeviceLoop(device); });
}

VerifyService::~VerifyService() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->closing = true;
  }
  impl_->cv.notify_all();
  for (auto& t : impl_->device_threads) t.join();
}

bool VerifyService::no_gpu() const { return impl_->saw_no_gpu; }

std::optional<HelloReply> VerifyService::Hello() const { return impl_->hello.get(); }

std::future<Judged> VerifyService::Submit(SolutionInput input, std::optional<uint64_t> seed) {
  std::string label = input.label;
  std::shared_ptr<Job> job;
  try {
    job = impl_->Prepare(std::move(input), seed.value_or(seed_));
  } catch (const std::exception& e) {  // a bug: this solution's verdict, never the batch
    std::promise<Judged> failed;
    Judged judged;
    judged.verdict.solution = label;
    judged.verdict.seed = seed.value_or(seed_);
    judged.verdict.toolchain = impl_->toolchain;
    Fail(judged.verdict, VerdictStatus::kHarnessError, std::string("internal error: ") + e.what());
    failed.set_value(std::move(judged));
    return failed.get_future();
  }
  std::future<Judged> result = job->done.get_future();
  if (!job->compile.valid()) {
    job->Finish();
  } else {
    {
      std::lock_guard<std::mutex> lock(impl_->mu);
      impl_->gpu_queue.push_back(std::move(job));
    }
    impl_->cv.notify_one();
  }
  return result;
}

}  // namespace kforge::verify
