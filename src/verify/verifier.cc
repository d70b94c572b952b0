// The verify pipeline: read, check statically, compile in parallel, run on GPU workers, emit in order.
#include "kforge/verify/verifier.h"

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include <unistd.h>

#include "kforge/common/base64.h"
#include "kforge/common/task.h"
#include "kforge/common/text.h"
#include "kforge/cuda/compile_pool.h"
#include "kforge/cuda/compiler.h"
#include "kforge/cuda/launch_plan.h"
#include "kforge/cuda/versions.h"
#include "kforge/verify/plan_env.h"
#include "kforge/verify/worker_client.h"

namespace kforge::verify {
namespace {

using common::Verdict;
using common::VerdictStatus;

/// Solutions read but not yet emitted (bounds memory and compile look-ahead). Reading stops while
/// the window is full; a verdict never waits for input beyond its own line.
constexpr size_t kWindow = 64;
/// compute-sanitizer's exit code when it found errors.
constexpr int kSanitizerExitCode = 86;

struct Job {
  Verdict verdict;
  common::Solution solution;  ///< Once compiled, its launches name kernels by symbol.
  const common::Task* task = nullptr;
  bool finished = false;  ///< Verdict final before compiling.
  std::future<cuda::CompileResult> compile;
  std::string cubin;
  nlohmann::json after;  ///< What VerifyOptions::after_check returned.
  std::promise<Verdict> done;
  std::future<Verdict> result = done.get_future();
};

nlohmann::json Toolchain(const std::string& arch) {
  nlohmann::json json = {{"kforge", KFORGE_VERSION},
                         {"nvrtc", cuda::NvrtcVersion()},
                         {"cuda_runtime", cuda::RuntimeVersion()},
                         {"arch", arch}};
  if (*KFORGE_LIBTORCH_VERSION) json["libtorch"] = KFORGE_LIBTORCH_VERSION;
  return json;
}

void Fail(Verdict& verdict, VerdictStatus status, std::string message) {
  verdict.status = status;
  verdict.message = std::move(message);
}

/// Resolves the plan, scratch included, against the real shapes of every variant of the task (the
/// GPU check runs each of them); an error names the variant unless it is the default one.
Status CheckPlanStatically(const common::Task& task, const common::Solution& solution) {
  for (const common::Variant& variant : task.variants) {
    Status status = [&]() -> Status {
      KFORGE_ASSIGN_OR_RETURN(cuda::PlanEnv env, PlanEnvFor(task, variant));
      cuda::LaunchLimits limits;
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

struct Verifier::Impl {
  explicit Impl(const VerifyOptions& options)
      : compiler(CompilerOptionsFor(options)),
        pool(compiler, options.compile_threads),
        toolchain(Toolchain(options.arch)) {}

  cuda::Compiler compiler;
  cuda::CompilePool pool;
  nlohmann::json toolchain;
  std::map<std::string, StatusOr<common::Task>> tasks;

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Job>> gpu_queue;
  bool closing = false;
  std::vector<std::thread> device_threads;
};

Verifier::Verifier(VerifyOptions options)
    : options_(std::move(options)),
      seed_(options_.seed ? *options_.seed
                          : std::random_device{}() * uint64_t{0x100000000} + std::random_device{}()),
      impl_(std::make_unique<Impl>(options_)) {}

Verifier::~Verifier() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->closing = true;
  }
  impl_->cv.notify_all();
  for (auto& t : impl_->device_threads) t.join();
}

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
  nlohmann::json kernels = cuda::KernelsToJson(result.kernels);
  job.verdict.compile = {{"ms", result.wall_ms}, {"cached", result.cached},
                         {"log", result.log},    {"arch", job.verdict.toolchain.value("arch", "")},
                         {"kernels", kernels},   {"warnings", result.warnings}};
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

std::string SanitizerSummary(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("Invalid") != std::string::npos || line.find("Error") != std::string::npos ||
        line.find("Race") != std::string::npos) {
      size_t start = line.find_first_not_of("= ");
      return line.substr(start == std::string::npos ? 0 : start, 200);
    }
  }
  return "see " + log_path;
}

}  // namespace

VerifySummary Verifier::Run(SolutionReader& reader,
                            const std::function<void(const Verdict&, const nlohmann::json&)>& emit) {
  Impl& impl = *impl_;
  VerifySummary summary;
  std::mutex summary_mu;

  auto device_loop = [this, &impl, &summary, &summary_mu](int device) {
    std::vector<std::string> argv;
    std::string sanitizer_log =
        "/tmp/kforge-sanitizer-" + std::to_string(getpid()) + "-" + std::to_string(device) + ".log";
    if (options_.sanitize) {
      // API errors are not reported: every CUDA call is checked, and some fail on purpose
      // (cudaFuncGetParamInfo past the last parameter counts the parameters).
      argv = {"/usr/local/cuda/bin/compute-sanitizer",
              "--tool",
              "memcheck",
              "--report-api-errors",
              "no",
              "--error-exitcode",
              std::to_string(kSanitizerExitCode),
              "--log-file",
              sanitizer_log};
    }
    argv.insert(argv.end(), {options_.worker_program.string(), "worker", "--device", std::to_string(device)});
    if (options_.sanitize) argv.push_back("--orderly-exit");
    WorkerClient client(argv);
    bool no_gpu = false;
    std::string no_gpu_message;
    std::optional<double> worker_start_ms;  // reported on the first verdict this worker serves
    // Start the worker now, so that CUDA and LibTorch initialise while the first compiles run.
    if (!options_.sanitize) {
      auto start = std::chrono::steady_clock::now();
      WorkerClient::Reply hello = client.Call({{"op", "hello"}}, std::chrono::seconds(120));
      worker_start_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      if (hello.kind == WorkerClient::Reply::Kind::kOk && hello.body.value("status", "") == "no_gpu") {
        no_gpu = true;
        no_gpu_message = hello.body.value("message", "");
      }
    }
    while (true) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(impl.mu);
        impl.cv.wait(lock, [&] { return impl.closing || !impl.gpu_queue.empty(); });
        if (impl.gpu_queue.empty()) return;
        job = impl.gpu_queue.front();
        impl.gpu_queue.pop_front();
      }
      Verdict& verdict = job->verdict;
      try {
        if (FinishCompile(*job)) {
          if (no_gpu) {
            Fail(verdict, VerdictStatus::kNoGpu, no_gpu_message);
          } else if (!options_.gpu_check) {
            verdict.checks["gpu_check"] = "skipped";
          } else {
            nlohmann::json request = {{"op", "check"},
                                      {"task_dir", job->task->dir.string()},
                                      {"solution", common::SolutionToJson(job->solution)},
                                      {"cubin_b64", common::Base64Encode(job->cubin)},
                                      {"trials", options_.trials},
                                      {"seed", seed_},
                                      {"kernel_timeout_ms", options_.kernel_timeout.count()}};
            auto deadline =
                std::chrono::milliseconds(120000) + options_.kernel_timeout * (options_.trials + 8);
            WorkerClient::Reply reply = client.Call(request, deadline);
            if (reply.kind == WorkerClient::Reply::Kind::kTimeout) {
              Fail(verdict, VerdictStatus::kTimeout, "worker: " + reply.detail);
            } else if (reply.kind == WorkerClient::Reply::Kind::kDied) {
              // Candidate faults are answered in-band before the worker exits; a worker that dies
              // without answering is kforge's failure.
              Fail(verdict, VerdictStatus::kHarnessError, "worker died: " + reply.detail);
            } else {
              auto status = common::ParseVerdictStatus(reply.body.value("status", "crash"));
              Fail(verdict, status.ok() ? *status : VerdictStatus::kCrash, reply.body.value("message", ""));
              verdict.trials = reply.body.value("trials", nlohmann::json::array());
              verdict.checks = reply.body.value("checks", nlohmann::json::object());
              verdict.device = reply.body.value("device", nlohmann::json());
              verdict.timing = reply.body.value("timing", nlohmann::json::object());
              verdict.memory = reply.body.value("memory", nlohmann::json());
              if (worker_start_ms)
                verdict.timing["worker_start_ms"] = *std::exchange(worker_start_ms, std::nullopt);
              if (verdict.status == VerdictStatus::kNoGpu) {
                no_gpu = true;
                no_gpu_message = verdict.message;
              }
            }
            if (options_.sanitize && reply.kind == WorkerClient::Reply::Kind::kOk) {
              std::string ended = client.Shutdown();
              if (ended == "exit code " + std::to_string(kSanitizerExitCode)) {
                Fail(verdict, VerdictStatus::kCrash, "compute-sanitizer: " + SanitizerSummary(sanitizer_log));
              }
              verdict.checks["sanitizer"] = verdict.status == VerdictStatus::kCrash ? "fail" : "pass";
            }
          }
        }
        if (options_.after_check && verdict.status == VerdictStatus::kOk && !no_gpu) {
          job->after = options_.after_check({client, *job->task, job->solution, job->cubin, seed_});
        }
      } catch (const std::exception& e) {  // a bug: this solution's verdict, never the batch
        Fail(verdict, VerdictStatus::kHarnessError, std::string("internal error: ") + e.what());
      }
      {
        std::lock_guard<std::mutex> lock(summary_mu);
        if (verdict.status == VerdictStatus::kNoGpu) summary.no_gpu = true;
      }
      job->done.set_value(verdict);
    }
  };
  if (!options_.compile_only && impl.device_threads.empty()) {
    // LibTorch's NativeRT warns about ops without static kernels on every load; keep workers quiet.
    setenv("TORCH_CPP_LOG_LEVEL", "ERROR", 0);
    for (int device : options_.devices) impl.device_threads.emplace_back(device_loop, device);
  }

  auto prepare = [&](SolutionInput input) {
    auto job = std::make_shared<Job>();
    Verdict& v = job->verdict;
    v.solution = input.label;
    v.seed = seed_;
    v.toolchain = impl.toolchain;
    if (!input.solution.ok()) {
      // Internal: kforge could not read the input (a bug or a broken environment), not a bad solution.
      bool ours = input.solution.status().code() == Status::Code::kInternal;
      Fail(v, ours ? VerdictStatus::kHarnessError : VerdictStatus::kInvalidSolution,
           input.solution.status().message());
      job->finished = true;
      return job;
    }
    job->solution = std::move(*input.solution);
    v.solution_hash = common::SolutionHash(job->solution);
    v.task = job->solution.task.empty() ? options_.task : job->solution.task;
    if (!v.task.empty()) {
      auto it = impl.tasks.find(v.task);
      if (it == impl.tasks.end())
        it = impl.tasks.emplace(v.task, common::FindTask(options_.tasks_root, v.task)).first;
      if (!it->second.ok()) {
        std::string shown = common::CheckTaskId(v.task).ok() ? v.task : common::Quote(v.task);
        Fail(v, VerdictStatus::kInvalidSolution, "task " + shown + ": " + it->second.status().message());
        job->finished = true;
        return job;
      }
      job->task = &*it->second;
      Status plan = CheckPlanStatically(*job->task, job->solution);
      if (!plan.ok()) {
        Fail(v, VerdictStatus::kInvalidSolution, plan.message());
        job->finished = true;
        return job;
      }
    } else if (!options_.compile_only) {
      Fail(v, VerdictStatus::kInvalidSolution,
           "no task: name it in the solution's \"task\" field or with --task");
      job->finished = true;
      return job;
    }
    cuda::CompileRequest request;
    request.source = job->solution.source;
    request.options = job->solution.options;
    request.arch = options_.arch;
    request.name_expressions = NameExpressions(job->solution);
    job->compile = impl.pool.Submit(std::move(request));
    return job;
  };

  // A job whose verdict is final: an input that could not be read or prepared.
  auto failed_job = [&](const std::string& label, VerdictStatus status, std::string message) {
    auto job = std::make_shared<Job>();
    job->verdict.solution = label;
    job->verdict.seed = seed_;
    job->verdict.toolchain = impl.toolchain;
    Fail(job->verdict, status, std::move(message));
    job->finished = true;
    return job;
  };

  // The reader thread reads and prepares solutions into `window`, at most kWindow ahead of the
  // emitter; this thread emits them in order, each as soon as it and the earlier ones are judged.
  std::mutex window_mu;
  std::condition_variable window_cv;
  std::deque<std::shared_ptr<Job>> window;  // read, not yet emitted
  bool reading = true;
  std::thread read_thread([&] {
    bool more = true;
    while (more) {
      std::shared_ptr<Job> job;
      std::optional<SolutionInput> input;
      try {
        input = reader.Next();
      } catch (const std::exception& e) {
        input = SolutionInput{"(input)", Status::Internal(std::string("reading solutions: ") + e.what())};
        more = false;
      }
      if (!input) break;
      std::string label = input->label;
      try {
        job = prepare(std::move(*input));
      } catch (const std::exception& e) {  // a bug: this solution's verdict, never the batch
        job = failed_job(label, VerdictStatus::kHarnessError, std::string("internal error: ") + e.what());
      }
      if (job->finished) {
        job->done.set_value(job->verdict);
      } else if (!options_.compile_only) {
        {
          std::lock_guard<std::mutex> lock(impl.mu);
          impl.gpu_queue.push_back(job);
        }
        impl.cv.notify_one();
      }
      {
        std::unique_lock<std::mutex> lock(window_mu);
        window_cv.wait(lock, [&] { return window.size() < kWindow; });
        window.push_back(std::move(job));
      }
      window_cv.notify_all();
    }
    {
      std::lock_guard<std::mutex> lock(window_mu);
      reading = false;
    }
    window_cv.notify_all();
  });

  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(window_mu);
      window_cv.wait(lock, [&] { return !window.empty() || !reading; });
      if (window.empty()) break;
      job = window.front();
    }
    if (options_.compile_only && !job->finished) {
      try {
        FinishCompile(*job);
      } catch (const std::exception& e) {
        Fail(job->verdict, VerdictStatus::kHarnessError, std::string("internal error: ") + e.what());
      }
      job->done.set_value(job->verdict);
    }
    Verdict verdict = job->result.get();
    ++summary.total;
    if (verdict.status == VerdictStatus::kOk) ++summary.ok;
    ++summary.by_status[std::string(common::VerdictStatusName(verdict.status))];
    try {
      emit(verdict, job->after);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kforge: internal error while reporting %s: %s\n", verdict.solution.c_str(),
                   e.what());
    }
    {
      std::lock_guard<std::mutex> lock(window_mu);
      window.pop_front();
    }
    window_cv.notify_all();
  }
  read_thread.join();
  return summary;
}

}  // namespace kforge::verify
