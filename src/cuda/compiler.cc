// Compiler: policy checks, shim headers, cache lookup, the NVRTC compile in a helper process, the
// opened-files audit, log post-processing, and finding kernels by name.
#include "kforge/cuda/compiler.h"

#include <cxxabi.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include <nlohmann/json.hpp>

#include "cuda/compile_log.h"
#include "cuda/cubin_cache.h"
#include "cuda/cubin_globals.h"
#include "cuda/header_shims.h"
#include "cuda/nvrtc_helper.h"
#include "cuda/source_policy.h"
#include "kforge/common/files.h"
#include "kforge/common/hash.h"
#include "kforge/common/solution.h"
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

CompileResult Refuse(CompileStatus status, std::string message) {
  CompileResult r;
  r.status = status;
  r.message = std::move(message);
  return r;
}

/// Largest number of name expressions in one request.
constexpr size_t kMaxNameExpressions = 64;

Status CheckNameExpressions(const std::vector<std::string>& names) {
  if (names.size() > kMaxNameExpressions) return Status::InvalidArgument("more than 64 kernel names");
  for (const std::string& n : names) {
    if (!common::IsKernelName(n)) {
      return Status::InvalidArgument("kernel name \"" + n.substr(0, 64) + "\" is not a C++ name");
    }
  }
  return Status::Ok();
}

// "void softmax<float, 256>(float const*, float*)" for a mangled symbol; the symbol otherwise.
std::string Demangle(const std::string& symbol) {
  if (symbol.rfind("_Z", 0) != 0) return symbol;
  int status = 0;
  char* text = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return symbol;
  std::string out(text);
  std::free(text);
  return out;
}

// The name in a demangled signature: "void ns::f<int, 2>(int*)" -> "ns::f<int, 2>". An anonymous
// namespace is left out: no launch can name it.
std::string NameOf(std::string signature) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)::";
  for (size_t at = signature.find(kAnonymous); at != std::string::npos; at = signature.find(kAnonymous)) {
    signature.erase(at, kAnonymous.size());
  }
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < signature.size(); ++i) {
    const char c = signature[i];
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (depth == 0 && c == ' ') start = i + 1;  // past a return type
    if (depth == 0 && c == '(') return signature.substr(start, i - start);
  }
  return signature.substr(start);
}

// "; the source has a, ns::f(float*), ..." (at most 8), and how to name a template instance.
std::string KernelList(const CompileResult& result) {
  std::string list;
  size_t shown = 0;
  for (const auto& [symbol, info] : result.kernels) {
    std::string signature = Demangle(symbol);
    if (shown < 8) {
      // The return type of a template instance is always void: leave it out.
      if (signature.rfind("void ", 0) == 0) signature.erase(0, 5);
      list += (shown == 0 ? "" : ", ") + signature;
    }
    ++shown;
  }
  if (shown > 8) list += ", and " + std::to_string(shown - 8) + " more";
  std::string out =
      shown == 0 ? "; the source has no kernels (__global__ functions)" : "; the source has " + list;
  return out + "; a template kernel is named by an instance, as in \"softmax<float, 256>\"";
}

/// The device heap (`malloc` in a kernel) lives as long as the process: a block kept there could carry an
/// output from one run to the next, past the restore of the module's globals.
Status CheckNoDeviceHeap(std::string_view cubin) {
  StatusOr<std::vector<std::string>> imports = CubinImports(cubin);
  if (!imports.ok()) return imports.status();
  for (const std::string& name : *imports) {
    if (name == "malloc" || name == "free" || name == "__nv_aligned_device_malloc")
      return Status::InvalidArgument("the kernel calls the device heap (" + name +
                                     "), whose blocks outlive a run; use the plan's scratch buffers instead");
  }
  return Status::Ok();
}

/// The request's own checks: the source policy (the headers it names land in `named`), the options, the
/// arch and the kernel names. A failure is the solution's fault.
Status CheckRequest(const CompileRequest& request, std::vector<std::string>* named) {
  if (Status s = CheckSourcePolicy(request.source, named); !s.ok())
    return Status::InvalidArgument("source: " + s.message());
  if (Status s = CheckCompileOptions(request.options); !s.ok()) return s;
  if (!IsValidArch(request.arch)) {
    return Status::InvalidArgument("arch \"" + request.arch.substr(0, 16) +
                                   "\" is not of the form sm_XX[a|f]");
  }
  return CheckNameExpressions(request.name_expressions);
}

/// What goes to NVRTC, before its options: the source, its program name, the shim headers for the
/// headers it names, and its name expressions (sorted, once each).
struct CompilePlan {
  internal::NvrtcJob job;
  /// Names of the in-memory headers, which the opened-files audit allows.
  std::vector<std::string> in_memory;
  /// Every shim's name and text, for the cache key.
  std::string shim_texts;
};

CompilePlan PlanCompile(const CompileRequest& request, const std::vector<std::string>& named,
                        std::vector<std::string>* warnings) {
  CompilePlan plan;
  plan.job.source = request.source;
  plan.job.name = ProgramName(request.name);
  plan.job.headers = internal::ShimsFor(named, warnings);
  for (const internal::InMemoryHeader& h : plan.job.headers) {
    plan.in_memory.push_back(h.name);
    plan.shim_texts += h.name + '\0' + h.text + '\0';
  }
  std::vector<std::string>& names = plan.job.name_expressions;
  names = request.name_expressions;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return plan;
}

/// The cache key: everything the compile's result depends on but its memory limit.
std::string CacheKey(const CompileRequest& request, const CompilePlan& plan, const std::string& nvrtc_version,
                     const std::string& cccl, const std::string& cuda) {
  std::vector<std::string> sorted_options = request.options;
  std::sort(sorted_options.begin(), sorted_options.end());
  const nlohmann::json key_doc = {{"source", request.source},
                                  {"options", sorted_options},
                                  {"arch", request.arch},
                                  {"name", plan.job.name},
                                  {"name_expressions", plan.job.name_expressions},
                                  {"shims", common::Sha256Hex(plan.shim_texts)},
                                  {"nvrtc", nvrtc_version},
                                  {"kforge", KFORGE_VERSION},
                                  {"cccl", cccl},
                                  {"cuda", cuda}};
  return common::Sha256Hex(key_doc.dump());
}

/// Runs the job. When only name expressions failed, runs it again without them, so the source's own
/// result (and its list of kernels) can say what the launch should have named; `name_errors` says why
/// each one failed.
internal::NvrtcOutcome RunDroppingBadNames(internal::NvrtcHelpers& helpers, internal::NvrtcJob& job,
                                           Clock::time_point deadline,
                                           std::map<std::string, std::string>* name_errors) {
  internal::NvrtcOutcome outcome = helpers.Run(job, deadline);
  if (outcome.kind != internal::NvrtcOutcome::Kind::kCompileError || job.name_expressions.empty() ||
      !internal::ErrorsOnlyInNameMap(outcome.log)) {
    return outcome;
  }
  *name_errors = internal::NameMapErrors(outcome.log, job.name_expressions);
  if (name_errors->empty()) {
    for (const std::string& n : job.name_expressions) (*name_errors)[n] = "NVRTC could not resolve it";
  }
  std::vector<std::string> kept;
  for (const std::string& n : job.name_expressions) {
    if (!name_errors->count(n)) kept.push_back(n);
  }
  job.name_expressions = kept;
  return helpers.Run(job, deadline);
}

/// The refusal for a compile that gave no answer of NVRTC's own (deadline, memory, a dead helper).
std::optional<CompileResult> RefusalWithoutAnswer(const internal::NvrtcOutcome& outcome,
                                                  std::chrono::milliseconds timeout,
                                                  size_t memory_limit_bytes) {
  using Kind = internal::NvrtcOutcome::Kind;
  switch (outcome.kind) {
    case Kind::kCancelled:
      return Refuse(CompileStatus::kTimeout,
                    "compile exceeded the " + std::to_string(timeout.count()) + " ms deadline");
    case Kind::kOutOfMemory:
      return Refuse(CompileStatus::kCompileError, "the compile ran out of memory (limit " +
                                                      std::to_string(memory_limit_bytes >> 20) + " MiB)");
    case Kind::kDied: {
      // NVRTC often reports running out of memory itself; sometimes it crashes instead.
      std::string message = "the compile process died (" + outcome.detail + ")";
      if (memory_limit_bytes > 0) {
        message += ", perhaps at its memory limit of " + std::to_string(memory_limit_bytes >> 20) + " MiB";
      }
      return Refuse(CompileStatus::kCompileError, message);
    }
    default:
      return std::nullopt;
  }
}

/// Second line of defence behind the source policy: every file the compile read must come from the CUDA
/// or CCCL include directories (`dirs`) or kforge's in-memory headers, or nothing of this compile is
/// returned. A CUBIN must not use the device heap either.
Status AuditOutcome(const internal::NvrtcOutcome& outcome, const std::string& program_name,
                    const std::vector<std::string>& dirs, const std::vector<std::string>& in_memory) {
  const Status read_outside =
      Status::InvalidArgument("the compile read a file outside the CUDA include directories");
  if (!internal::LogNamesOnlyAllowedFiles(outcome.log, program_name, dirs, in_memory)) return read_outside;
  if (outcome.kind != internal::NvrtcOutcome::Kind::kSuccess) return Status::Ok();
  if (!outcome.opened) return Status::InvalidArgument("could not verify which files the compile read");
  for (const std::string& h : *outcome.opened) {
    if (!internal::IsAllowedOpenedFile(h, dirs, in_memory)) return read_outside;
  }
  return CheckNoDeviceHeap(outcome.cubin);
}

/// The result of an answered compile: the CUBIN and its names, or the first error; the log with ptxas's
/// lines taken out into `kernels` and the include directories shortened.
CompileResult ResultOf(internal::NvrtcOutcome outcome, std::map<std::string, std::string> name_errors,
                       const std::string& cccl, const std::string& cuda) {
  CompileResult result;
  result.log = internal::ShortenPaths(internal::ExtractPtxasInfo(outcome.log, &result.kernels),
                                      {{cccl, "<cccl>"}, {cuda, "<cuda>"}});
  if (outcome.kind == internal::NvrtcOutcome::Kind::kSuccess) {
    result.status = CompileStatus::kOk;
    result.cubin = std::move(outcome.cubin);
    result.lowered_names = std::move(outcome.lowered_names);
    result.name_errors = std::move(name_errors);
  } else {
    result.status = CompileStatus::kCompileError;
    result.kernels.clear();
    result.message = internal::FirstErrorLine(result.log);
    if (result.message.empty()) result.message = "NVRTC rejected the compile options";
  }
  return result;
}

}  // namespace

std::filesystem::path DefaultCacheDir() { return common::CacheRoot() / "cubin"; }

Compiler::Compiler(CompilerOptions options) : options_(std::move(options)), nvrtc_version_(NvrtcVersion()) {
  if (options_.cccl_include_dir.empty()) {
    const std::string env = Env("KFORGE_CCCL_INCLUDE");
    options_.cccl_include_dir =
        std::filesystem::path(env.empty() ? std::string(KFORGE_CCCL_INCLUDE_DIR) : env);
  }
  if (options_.cuda_include_dir.empty()) options_.cuda_include_dir = KFORGE_CUDA_INCLUDE_DIR;
  options_.cccl_include_dir = options_.cccl_include_dir.lexically_normal();
  options_.cuda_include_dir = options_.cuda_include_dir.lexically_normal();
  if (options_.use_cache && options_.cache_dir.empty()) options_.cache_dir = DefaultCacheDir();
  if (options_.helper_program.empty()) options_.helper_program = internal::DefaultHelperProgram();
  helpers_ = std::make_unique<internal::NvrtcHelpers>(options_.helper_program, options_.memory_limit_bytes);
}

Compiler::~Compiler() = default;

int Compiler::processes_started() const { return helpers_->started(); }

CompileResult Compiler::Compile(const CompileRequest& request) const {
  const Clock::time_point start = Clock::now();
  std::vector<std::string> warnings;
  auto finish = [&](CompileResult r) {
    r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    r.warnings = warnings;
    return r;
  };

  std::vector<std::string> named;
  if (Status s = CheckRequest(request, &named); !s.ok())
    return finish(Refuse(CompileStatus::kInvalidSolution, s.message()));
  CompilePlan plan = PlanCompile(request, named, &warnings);
  const std::string cccl = options_.cccl_include_dir.string();
  const std::string cuda = options_.cuda_include_dir.string();
  const std::string key = CacheKey(request, plan, nvrtc_version_, cccl, cuda);
  std::optional<internal::CubinCache> cache;
  if (options_.use_cache) {
    cache.emplace(options_.cache_dir);
    if (std::optional<CompileResult> hit = cache->Load(key)) {
      if (hit->status == CompileStatus::kOk) {  // cached before the heap was refused, perhaps
        if (Status heap = CheckNoDeviceHeap(hit->cubin); !heap.ok())
          return finish(Refuse(CompileStatus::kInvalidSolution, heap.message()));
      }
      return finish(std::move(*hit));
    }
  }

  // No --no-source-include: CUDA's own headers include their neighbours by quoted relative names
  // (<mma.h> needs "mma.hpp"). The program's directory is the helper's empty working directory.
  plan.job.options = {"-arch=" + request.arch, "-I" + cccl, "-I" + cuda, "--ptxas-options=-v"};
  if (!HasUserStd(request.options)) plan.job.options.push_back("-std=c++17");
  plan.job.options.insert(plan.job.options.end(), request.options.begin(), request.options.end());
  const std::chrono::milliseconds timeout = request.timeout.count() > 0 ? request.timeout : options_.timeout;
  std::map<std::string, std::string> name_errors;
  internal::NvrtcOutcome outcome = RunDroppingBadNames(*helpers_, plan.job, start + timeout, &name_errors);
  if (std::optional<CompileResult> refused =
          RefusalWithoutAnswer(outcome, timeout, options_.memory_limit_bytes))
    return finish(std::move(*refused));
  if (Status audit = AuditOutcome(outcome, plan.job.name, {cccl, cuda}, plan.in_memory); !audit.ok())
    return finish(Refuse(CompileStatus::kInvalidSolution, audit.message()));

  CompileResult result = ResultOf(std::move(outcome), std::move(name_errors), cccl, cuda);
  // Running out of memory depends on the limit, which the key does not cover.
  const bool out_of_memory = result.log.find("out of memory") != std::string::npos;
  if (cache && !out_of_memory) cache->Store(key, result);
  return finish(std::move(result));
}

StatusOr<std::string> FindKernel(const CompileResult& result, std::string_view name) {
  const std::string wanted(name);
  if (auto it = result.lowered_names.find(wanted); it != result.lowered_names.end()) {
    if (result.kernels.count(it->second)) return it->second;
    return Status::NotFound("\"" + wanted + "\" is not a __global__ function" + KernelList(result));
  }
  if (auto it = result.name_errors.find(wanted); it != result.name_errors.end()) {
    return Status::NotFound("no kernel \"" + wanted + "\": " + it->second + KernelList(result));
  }
  if (result.kernels.count(wanted)) return wanted;
  const std::string plain = wanted.rfind("::", 0) == 0 ? wanted.substr(2) : wanted;
  std::vector<std::string> matches;
  for (const auto& [symbol, info] : result.kernels) {
    if (symbol.rfind("_Z", 0) == 0 && NameOf(Demangle(symbol)) == plain) matches.push_back(symbol);
  }
  if (matches.size() == 1) return matches.front();
  if (matches.size() > 1) {
    return Status::NotFound("several kernels are named \"" + wanted +
                            "\" (overloads); give each its own name" + KernelList(result));
  }
  return Status::NotFound("no kernel \"" + wanted + "\" in the compiled source" + KernelList(result));
}

}  // namespace kforge::cuda
