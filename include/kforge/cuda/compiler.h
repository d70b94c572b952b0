// Compiles untrusted CUDA C++ to CUBIN with NVRTC: policy checks, a compile deadline, per-kernel
// resource usage from ptxas, and a content-addressed on-disk cache. No GPU is needed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::cuda {

enum class CompileStatus {
  kOk,
  kCompileError,     // NVRTC rejected the source; `log` says why
  kInvalidSolution,  // the source policy, the option allowlist or the opened-files audit refused it
  kTimeout,          // the compile ran past its deadline and was cancelled
};

/// "ok", "compile_error", "invalid_solution" or "timeout" (the verdict spellings).
std::string_view CompileStatusName(CompileStatus status);

/// Resource usage of one kernel, as reported by ptxas.
struct KernelInfo {
  int registers = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_bytes = 0;
  int shared_bytes = 0;  // static shared memory
};

/// {name: {registers, spill_store_bytes, spill_load_bytes, stack_bytes, shared_bytes}}, as stored in
/// the cache and in verdicts.
nlohmann::json KernelsToJson(const std::map<std::string, KernelInfo>& kernels);

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
};

/// $KFORGE_CACHE_DIR/cubin, else $XDG_CACHE_HOME/kforge/cubin, else ~/.cache/kforge/cubin.
std::filesystem::path DefaultCacheDir();

/// Thread-safe: Compile may be called from many threads at once.
///
/// Deadlines: NVRTC's flow callback cancels optimisation and code generation promptly, but the C++
/// front end never calls it. A compile stuck there is abandoned at the deadline (Compile returns
/// kTimeout) and keeps a background thread busy until the front end finishes and the next callback
/// cancels it; the destructor waits for such compiles.
class Compiler {
 public:
  explicit Compiler(CompilerOptions options = {});
  ~Compiler();
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;

  /// Never throws for anything the request contains; throws std::runtime_error when NVRTC itself
  /// fails (out of memory, internal error).
  CompileResult Compile(const CompileRequest& request) const;

  const CompilerOptions& options() const { return options_; }

 private:
  // Counts compiles still running on their own thread, including abandoned ones.
  struct Background {
    std::mutex mu;
    std::condition_variable cv;
    int running = 0;
    void Start();
    void Finish();
  };

  CompilerOptions options_;
  std::string nvrtc_version_;
  std::shared_ptr<Background> background_;
};

}  // namespace kforge::cuda
