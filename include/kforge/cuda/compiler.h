// Compiles untrusted CUDA C++ to CUBIN with NVRTC: policy checks, a compile deadline, per-kernel
// resource usage from ptxas, and a content-addressed on-disk cache. No GPU is needed.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/names.h"
#include "kforge/common/status.h"
#include "kforge/common/verdict.h"
#include "kforge/common/verdict_parts.h"

namespace kforge::cuda {

enum class CompileStatus {
  kOk,
  kCompileError,     // NVRTC rejected the source; `log` says why
  kInvalidSolution,  // the source policy, the option allowlist or the opened-files audit refused it
  kTimeout,          // the compile ran past its deadline and was cancelled
};

/// Compile statuses are spelled as the verdict statuses they become.
inline constexpr common::NameTable<CompileStatus, 4> kCompileStatusNames = {
    {{CompileStatus::kOk, common::kVerdictStatusNames.Name(common::VerdictStatus::kOk)},
     {CompileStatus::kCompileError, common::kVerdictStatusNames.Name(common::VerdictStatus::kCompileError)},
     {CompileStatus::kInvalidSolution, common::kVerdictStatusNames.Name(common::VerdictStatus::kInvalidSolution)},
     {CompileStatus::kTimeout, common::kVerdictStatusNames.Name(common::VerdictStatus::kTimeout)}}};
static_assert(kCompileStatusNames.MatchesEnum());
inline std::string_view CompileStatusName(CompileStatus status) { return kCompileStatusNames.Name(status); }

/// Resource usage of one kernel, as reported by ptxas.
using KernelInfo = common::KernelStats;

struct CompileRequest {
  std::string source;
  /// User options; must pass CheckCompileOptions.
  std::vector<std::string> options;
  /// Target architecture, `sm_XX[a|f]`; the CUBIN is built for exactly this one.
  std::string arch = "sm_90a";
  /// File name shown in the log; reduced to [A-Za-z0-9_.-], "kernel.cu" when empty.
  std::string name = "kernel.cu";
  /// Overrides CompilerOptions::timeout when non-zero.
  std::chrono::milliseconds timeout{0};
  /// C++ names of kernels, such as "softmax<float, 256>", to resolve with NVRTC name expressions
  /// (which also instantiate templates). Each must pass common::IsKernelName; at most 64.
  std::vector<std::string> name_expressions;
};

struct CompileResult {
  CompileStatus status = CompileStatus::kOk;
  /// One line; empty when ok.
  std::string message;
  /// NVRTC's log without the ptxas resource lines, include paths shortened to <cuda>/ and <cccl>/.
  /// Empty when the audit refused the compile.
  std::string log;
  /// The CUBIN image; empty unless status is kOk.
  std::string cubin;
  /// Keyed by the kernel's symbol name (the mangled one for kernels without extern "C").
  std::map<std::string, KernelInfo> kernels;
  /// Symbol of each name expression NVRTC resolved ("softmax<float, 256>" -> "_Z7softmax...").
  std::map<std::string, std::string> lowered_names;
  /// Why a name expression did not resolve (NVRTC's error), for each one that did not. The rest of
  /// the source still compiled: a name that names nothing is the launch's fault, not the source's.
  std::map<std::string, std::string> name_errors;
  /// Things done to the source that the author should know of (an include dropped); one line each.
  std::vector<std::string> warnings;
  double wall_ms = 0;
  /// True when the result came from the on-disk cache.
  bool cached = false;
};

struct CompilerOptions {
  /// Deadline of one NVRTC compile. Default 30 s.
  std::chrono::milliseconds timeout{30000};
  /// Cache directory; empty means DefaultCacheDir(). Ignored when `use_cache` is false.
  std::filesystem::path cache_dir;
  /// Whether compiles are looked up in and stored to the on-disk cache. Default true.
  bool use_cache = true;
  /// CCCL include directory; empty means $KFORGE_CCCL_INCLUDE, else the one found at build time.
  std::filesystem::path cccl_include_dir;
  /// CUDA include directory; empty means the one found at build time.
  std::filesystem::path cuda_include_dir;
  /// Data-segment limit of each compile process (RLIMIT_DATA); 0 means none. Default 4 GiB.
  size_t memory_limit_bytes = size_t{4} << 30;
  /// The kforge-nvrtc executable; empty means the one next to the running program, else the one
  /// of this build.
  std::filesystem::path helper_program;
};

/// $KFORGE_CACHE_DIR/cubin, else $XDG_CACHE_HOME/kforge/cubin, else ~/.cache/kforge/cubin.
std::filesystem::path DefaultCacheDir();

namespace internal {
class NvrtcHelpers;
}

/// Thread-safe: Compile may be called from many threads at once.
///
/// Every NVRTC compile runs in a helper process (kforge-nvrtc) under CompilerOptions'
/// memory limit. At the deadline NVRTC's flow callback cancels optimisation and code generation;
/// a compile stuck where NVRTC never checks (the C++ front end, the preprocessor) is killed with its
/// process. Either way Compile returns kTimeout at the deadline, and nothing keeps running.
class Compiler {
 public:
  explicit Compiler(CompilerOptions options = {});
  /// Ends the helper processes.
  ~Compiler();
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;

  /// Never throws for anything the request contains; throws std::runtime_error when NVRTC itself
  /// fails (an internal error) or no compile process can be started.
  CompileResult Compile(const CompileRequest& request) const;

  const CompilerOptions& options() const { return options_; }

  /// Compile processes started so far.
  int processes_started() const;

 private:
  CompilerOptions options_;
  std::string nvrtc_version_;
  std::unique_ptr<internal::NvrtcHelpers> helpers_;
};

/// The symbol of the kernel that a launch names `name` in a successful compile: a name expression
/// the compile resolved, a symbol (an extern "C" name, or a mangled one), or the plain or qualified
/// name of a C++ kernel that is not a template ("scale", "ns::scale") when exactly one kernel has it.
/// NotFound otherwise, with a one-line message that lists the kernels there are and how to name a
/// template instance.
StatusOr<std::string> FindKernel(const CompileResult& result, std::string_view name);

}  // namespace kforge::cuda
