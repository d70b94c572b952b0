// NVRTC runs in helper processes (the kforge-nvrtc executable), never in kforge itself: a compile
// that outlives its deadline is killed with its process, whatever NVRTC is doing (the C++ front
// end never checks for cancellation), and each helper runs under a memory limit. Helpers are kept
// and reused, so a compile pays only a round trip over a socket; a killed one is replaced.
//
// The parent side is NvrtcHelpers; the helper side is ServeNvrtcJobs. They speak length-prefixed
// JSON frames over a socket on the helper's fd 3.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/header_shims.h"

namespace kforge::cuda::internal {

/// One NVRTC compile, as handed to a helper.
struct NvrtcJob {
  std::string source;
  /// Program name (a file name without a directory).
  std::string name;
  /// Every NVRTC option except the time-trace one, which the helper adds.
  std::vector<std::string> options;
  std::vector<InMemoryHeader> headers;
  /// Passed to nvrtcAddNameExpression.
  std::vector<std::string> name_expressions;
};

/// What became of a job.
struct NvrtcOutcome {
  enum class Kind {
    kSuccess,        // a CUBIN
    kCompileError,   // NVRTC_ERROR_COMPILATION; `log` says why
    kInvalidOption,  // NVRTC_ERROR_INVALID_OPTION
    kCancelled,      // stopped at the deadline, by NVRTC's flow callback or by killing the helper
    kOutOfMemory,    // NVRTC_ERROR_OUT_OF_MEMORY under the helper's memory limit
    kDied,           // the helper ended without answering; `detail` says how
  };
  Kind kind = Kind::kCompileError;
  std::string log;
  std::string cubin;
  /// Name expression -> lowered name (kSuccess only).
  std::map<std::string, std::string> lowered_names;
  /// Headers NVRTC's time trace lists (kSuccess only); nullopt when the trace could not be read.
  std::optional<std::vector<std::string>> opened;
  std::string detail;
};

/// The helper processes of one Compiler. Thread-safe.
class NvrtcHelpers {
 public:
  /// `program` is the kforge-nvrtc executable; `memory_limit_bytes` (0: none) bounds each helper's
  /// data segment (RLIMIT_DATA).
  NvrtcHelpers(std::filesystem::path program, size_t memory_limit_bytes);
  /// Kills the idle helpers.
  ~NvrtcHelpers();
  NvrtcHelpers(const NvrtcHelpers&) = delete;
  NvrtcHelpers& operator=(const NvrtcHelpers&) = delete;

  /// Runs `job` on an idle helper, starting one when none is idle, and waits for its answer until
  /// `deadline` (the helper's flow callback cancels at the deadline) plus a short grace; a helper
  /// still busy then is killed (kCancelled). Throws std::runtime_error when no helper can be started,
  /// or when NVRTC fails in a way that is not the source's fault.
  NvrtcOutcome Run(const NvrtcJob& job, std::chrono::steady_clock::time_point deadline);

  /// Processes started so far (for tests).
  int started() const;

 private:
  class Helper;
  std::unique_ptr<Helper> Take(std::chrono::steady_clock::time_point deadline);

  std::filesystem::path program_;
  size_t memory_limit_bytes_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Helper>> idle_;
  int started_ = 0;
};

// The wire, shared by both sides: frames are a 4-byte little-endian length and that many bytes of
// JSON (a job, an outcome, or the helper's hello).

/// Largest frame either side accepts.
inline constexpr size_t kMaxFrameBytes = size_t{1} << 30;

/// Writes one frame; false when the peer is gone.
bool WriteFrame(int fd, std::string_view payload);
/// Reads one frame, waiting at most until `deadline` when it is set; false on timeout, end of
/// stream, an error or an oversized frame.
bool ReadFrame(int fd, std::string* payload,
               std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

/// The helper's hello: {"schema": kNvrtcWireSchema, "nvrtc": version}.
inline constexpr std::string_view kNvrtcWireSchema = "kforge.nvrtc/1";

/// The kforge-nvrtc executable: next to the running program, else the one of this build.
std::filesystem::path DefaultHelperProgram();

/// The helper's main loop: answers jobs on `fd` until the parent closes it, compiling in `dir`
/// (a private, empty directory the parent made), with the data segment limited to
/// `memory_limit_bytes` (0: no limit). Returns the process exit code.
int ServeNvrtcJobs(int fd, const std::filesystem::path& dir, size_t memory_limit_bytes);

}  // namespace kforge::cuda::internal
