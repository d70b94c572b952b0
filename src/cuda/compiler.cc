// Compiler: policy checks, cache lookup, the NVRTC compile under a deadline, the opened-files
// audit, and log post-processing.
#include "kforge/cuda/compiler.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cuda/check.h"
#include "cuda/compile_log.h"
#include "cuda/cubin_cache.h"
#include "kforge/common/hash.h"
#include "kforge/cuda/source_policy.h"
#include "kforge/cuda/versions.h"

namespace kforge::cuda {
namespace {

using Clock = std::chrono::steady_clock;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

bool IsValidArch(std::string_view arch) {
  if (arch.substr(0, 3) != "sm_") return false;
  std::string_view rest = arch.substr(3);
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) rest.remove_suffix(1);
  return rest.size() >= 2 && rest.size() <= 3 && std::all_of(rest.begin(), rest.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c));
         });
}

std::string ProgramName(std::string_view name) {
  std::string out;
  for (const char c : name.substr(0, 64)) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') out.push_back(c);
  }
  if (out.empty() || out.front() == '.') out = "kernel.cu";
  return out;
}

bool HasUserStd(const std::vector<std::string>& options) {
  return std::any_of(options.begin(), options.end(), [](const std::string& o) {
    return o.rfind("-std=", 0) == 0 || o.rfind("--std=", 0) == 0;
  });
}

// Cancels the compile from NVRTC's flow callback once the deadline has passed.
struct Deadline {
  Clock::time_point at;
  std::atomic<bool> expired{false};
};

int FlowCallback(void* payload, void* /*reserved*/) {
  auto* d = static_cast<Deadline*>(payload);
  if (d->expired.load(std::memory_order_relaxed)) return 1;
  if (Clock::now() < d->at) return 0;
  d->expired.store(true, std::memory_order_relaxed);
  return 1;
}

// Owns an nvrtcProgram.
class Program {
 public:
  Program(const std::string& source, const std::string& name) {
    KFORGE_NVRTC_CHECK(nvrtcCreateProgram(&prog_, source.c_str(), name.c_str(), 0, nullptr, nullptr));
  }
  ~Program() { nvrtcDestroyProgram(&prog_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return prog_; }

 private:
  nvrtcProgram prog_ = nullptr;
};

// A private temporary directory for NVRTC's time-trace output, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "kforge-nvrtc-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + templ);
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// NVRTC appends ".json" to the trace file name; read whichever file it wrote.
std::optional<std::string> ReadTrace(const std::filesystem::path& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream buf;
    buf << in.rdbuf();
    return buf.str();
  }
  return std::nullopt;
}

// One NVRTC compile, shared between the calling thread and the thread that runs it, so the caller
// can walk away at the deadline while NVRTC's front end (which never calls the flow callback)
// finishes; the compile then stops at its next flow-callback check.
struct Job {
  Job(const std::string& source, const std::string& name) : prog(source, name) {}
  Program prog;
  TempDir trace_dir;
  Deadline deadline;
  std::vector<std::string> options;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  nvrtcResult rc = NVRTC_SUCCESS;
  std::exception_ptr error;
};

CompileResult Refuse(CompileStatus status, std::string message) {
  CompileResult r;
  r.status = status;
  r.message = std::move(message);
  return r;
}

}  // namespace

nlohmann::json KernelsToJson(const std::map<std::string, KernelInfo>& kernels) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [name, k] : kernels) {
    json[name] = {{"registers", k.registers},
                  {"spill_store_bytes", k.spill_store_bytes},
                  {"spill_load_bytes", k.spill_load_bytes},
                  {"stack_bytes", k.stack_bytes},
                  {"shared_bytes", k.shared_bytes}};
  }
  return json;
}

std::string_view CompileStatusName(CompileStatus status) {
  switch (status) {
    case CompileStatus::kOk:
      return "ok";
    case CompileStatus::kCompileError:
      return "compile_error";
    case CompileStatus::kInvalidSolution:
      return "invalid_solution";
    case CompileStatus::kTimeout:
      return "timeout";
  }
  return "unknown";
}

std::filesystem::path DefaultCacheDir() {
  if (const std::string root = Env("KFORGE_CACHE_DIR"); !root.empty())
    return std::filesystem::path(root) / "cubin";
  if (const std::string xdg = Env("XDG_CACHE_HOME"); !xdg.empty())
    return std::filesystem::path(xdg) / "kforge" / "cubin";
  const std::string home = Env("HOME");
  return std::filesystem::path(home.empty() ? "/tmp" : home) / ".cache" / "kforge" / "cubin";
}

void Compiler::Background::Start() {
  std::lock_guard<std::mutex> lock(mu);
  ++running;
}

void Compiler::Background::Finish() {
  {
    std::lock_guard<std::mutex> lock(mu);
    --running;
  }
  cv.notify_all();
}

Compiler::~Compiler() {
  std::unique_lock<std::mutex> lock(background_->mu);
  background_->cv.wait(lock, [this] { return background_->running == 0; });
}

Compiler::Compiler(CompilerOptions options)
    : options_(std::move(options)),
      nvrtc_version_(NvrtcVersion()),
      background_(std::make_shared<Background>()) {
  if (options_.cccl_include_dir.empty()) {
    const std::string env = Env("KFORGE_CCCL_INCLUDE");
    options_.cccl_include_dir =
        std::filesystem::path(env.empty() ? std::string(KFORGE_CCCL_INCLUDE_DIR) : env);
  }
  if (options_.cuda_include_dir.empty()) options_.cuda_include_dir = KFORGE_CUDA_INCLUDE_DIR;
  options_.cccl_include_dir = options_.cccl_include_dir.lexically_normal();
  options_.cuda_include_dir = options_.cuda_include_dir.lexically_normal();
  if (options_.use_cache && options_.cache_dir.empty()) options_.cache_dir = DefaultCacheDir();
}

CompileResult Compiler::Compile(const CompileRequest& request) const {
  const Clock::time_point start = Clock::now();
  auto finish = [&](CompileResult r) {
    r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return r;
  };

  if (Status s = CheckSourcePolicy(request.source); !s.ok()) {
    return finish(Refuse(CompileStatus::kInvalidSolution, "source: " + s.message()));
  }
  if (Status s = CheckCompileOptions(request.options); !s.ok()) {
    return finish(Refuse(CompileStatus::kInvalidSolution, s.message()));
  }
  if (!IsValidArch(request.arch)) {
    return finish(Refuse(CompileStatus::kInvalidSolution,
                         "arch \"" + request.arch.substr(0, 16) + "\" is not of the form sm_XX[a|f]"));
  }

  const std::string name = ProgramName(request.name);
  const std::string cccl = options_.cccl_include_dir.string();
  const std::string cuda = options_.cuda_include_dir.string();

  std::vector<std::string> sorted_options = request.options;
  std::sort(sorted_options.begin(), sorted_options.end());
  const nlohmann::json key_doc = {
      {"source", request.source}, {"options", sorted_options}, {"arch", request.arch}, {"name", name},
      {"nvrtc", nvrtc_version_},  {"kforge", KFORGE_VERSION},  {"cccl", cccl},         {"cuda", cuda}};
  const std::string key = common::Sha256Hex(key_doc.dump());
  std::optional<internal::CubinCache> cache;
  if (options_.use_cache) {
    cache.emplace(options_.cache_dir);
    if (std::optional<CompileResult> hit = cache->Load(key)) return finish(std::move(*hit));
  }

  auto job = std::make_shared<Job>(request.source, name);
  const TempDir& trace_dir = job->trace_dir;
  std::vector<std::string>& opts = job->options;
  opts = {"-arch=" + request.arch,
          "-I" + cccl,
          "-I" + cuda,
          "--no-source-include",
          "--ptxas-options=-v",
          "--fdevice-time-trace=" + (trace_dir.path() / "trace").string()};
  if (!HasUserStd(request.options)) opts.push_back("-std=c++17");
  opts.insert(opts.end(), request.options.begin(), request.options.end());
  const std::chrono::milliseconds timeout = request.timeout.count() > 0 ? request.timeout : options_.timeout;
  job->deadline.at = start + timeout;
  const Program& prog = job->prog;
  KFORGE_NVRTC_CHECK(nvrtcSetFlowCallback(prog.get(), &FlowCallback, &job->deadline));

  background_->Start();
  std::thread([job, background = background_] {
    std::vector<const char*> argv;
    for (const std::string& o : job->options) argv.push_back(o.c_str());
    nvrtcResult rc = NVRTC_SUCCESS;
    std::exception_ptr error;
    try {
      rc = KFORGE_NVRTC_CHECK_ALLOW(
          nvrtcCompileProgram(job->prog.get(), static_cast<int>(argv.size()), argv.data()),
          NVRTC_ERROR_COMPILATION, NVRTC_ERROR_INVALID_OPTION, NVRTC_ERROR_CANCELLED);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(job->mu);
      job->rc = rc;
      job->error = error;
      job->done = true;
    }
    job->cv.notify_all();
    background->Finish();
  }).detach();

  nvrtcResult rc;
  {
    std::unique_lock<std::mutex> lock(job->mu);
    const bool done = job->cv.wait_until(lock, job->deadline.at, [&] { return job->done; });
    if (!done) job->deadline.expired.store(true);
    if (job->error) std::rethrow_exception(job->error);
    rc = job->rc;
  }
  if (rc == NVRTC_ERROR_CANCELLED || job->deadline.expired.load()) {
    return finish(Refuse(CompileStatus::kTimeout,
                         "compile exceeded the " + std::to_string(timeout.count()) + " ms deadline"));
  }

  size_t log_size = 0;
  KFORGE_NVRTC_CHECK(nvrtcGetProgramLogSize(prog.get(), &log_size));
  std::string raw_log(log_size, '\0');
  KFORGE_NVRTC_CHECK(nvrtcGetProgramLog(prog.get(), raw_log.data()));
  while (!raw_log.empty() && raw_log.back() == '\0') raw_log.pop_back();

  // Second line of defence behind the source policy: every file the compile read must come from
  // the CUDA or CCCL include directories, or nothing of this compile is returned.
  const std::vector<std::string> dirs = {cccl, cuda};
  const std::string kAuditFailed = "the compile read a file outside the CUDA include directories";
  if (!internal::LogNamesOnlyAllowedFiles(raw_log, name, dirs)) {
    return finish(Refuse(CompileStatus::kInvalidSolution, kAuditFailed));
  }
  if (rc == NVRTC_SUCCESS) {
    const std::optional<std::string> trace = ReadTrace(trace_dir.path());
    std::vector<std::string> headers;
    if (!trace || !internal::ReadOpenedHeaders(*trace, &headers)) {
      return finish(Refuse(CompileStatus::kInvalidSolution, "could not verify which files the compile read"));
    }
    for (const std::string& h : headers) {
      if (!internal::IsAllowedOpenedFile(h, dirs))
        return finish(Refuse(CompileStatus::kInvalidSolution, kAuditFailed));
    }
  }

  CompileResult result;
  result.log = internal::ShortenPaths(internal::ExtractPtxasInfo(raw_log, &result.kernels),
                                      {{cccl, "<cccl>"}, {cuda, "<cuda>"}});
  if (rc == NVRTC_SUCCESS) {
    size_t cubin_size = 0;
    KFORGE_NVRTC_CHECK(nvrtcGetCUBINSize(prog.get(), &cubin_size));
    result.cubin.resize(cubin_size);
    KFORGE_NVRTC_CHECK(nvrtcGetCUBIN(prog.get(), result.cubin.data()));
    result.status = CompileStatus::kOk;
  } else {
    result.status = CompileStatus::kCompileError;
    result.kernels.clear();
    result.message = internal::FirstErrorLine(result.log);
    if (result.message.empty()) result.message = "NVRTC rejected the compile options";
  }
  if (cache) cache->Store(key, result);
  return finish(std::move(result));
}

}  // namespace kforge::cuda
