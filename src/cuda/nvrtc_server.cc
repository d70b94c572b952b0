// The helper side: one NVRTC compile per job, with the deadline's flow callback, the time trace
// and the name expressions. The helper works in a private, empty directory, so the program's own
// directory (which NVRTC searches for quoted includes) holds nothing.
#include <nvrtc.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cuda/compile_log.h"
#include "cuda/nvrtc_helper.h"
#include "cuda/nvrtc_wire.h"
#include "kforge/cuda/check.h"
#include "kforge/cuda/versions.h"

namespace kforge::cuda::internal {
namespace {

using Clock = std::chrono::steady_clock;

/// Seconds past a job's budget after which the helper ends itself, should the parent be gone.
constexpr unsigned kAlarmSlackSeconds = 10;

struct Deadline {
  Clock::time_point at;
};

int FlowCallback(void* payload, void* /*reserved*/) {
  return Clock::now() < static_cast<Deadline*>(payload)->at ? 0 : 1;
}

class Program {
 public:
  Program(const std::string& source, const std::string& name, const std::vector<InMemoryHeader>& headers) {
    std::vector<const char*> texts, names;
    for (const InMemoryHeader& h : headers) {
      texts.push_back(h.text.c_str());
      names.push_back(h.name.c_str());
    }
    KFORGE_NVRTC_CHECK(nvrtcCreateProgram(&prog_, source.c_str(), name.c_str(),
                                          static_cast<int>(headers.size()), texts.data(), names.data()));
  }
  ~Program() { nvrtcDestroyProgram(&prog_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return prog_; }

 private:
  nvrtcProgram prog_ = nullptr;
};

std::optional<std::string> ReadAndRemove(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buf;
  buf << in.rdbuf();
  in.close();
  std::error_code ec;
  std::filesystem::remove(path, ec);
  return buf.str();
}

NvrtcOutcome Compile(const NvrtcRequest& request, const std::filesystem::path& dir, int serial) {
  const NvrtcJob& job = request.job;
  const Program prog(job.source, job.name, job.headers);
  for (const std::string& n : job.name_expressions)
    KFORGE_NVRTC_CHECK(nvrtcAddNameExpression(prog.get(), n.c_str()));

  const int64_t budget_ms = request.budget.count();
  Deadline deadline{Clock::now() + request.budget};
  KFORGE_NVRTC_CHECK(nvrtcSetFlowCallback(prog.get(), &FlowCallback, &deadline));
  alarm(static_cast<unsigned>(budget_ms / 1000) + kAlarmSlackSeconds);

  // NVRTC refuses to write over an existing trace, so each compile gets its own name.
  const std::filesystem::path trace = dir / ("trace-" + std::to_string(serial));
  std::vector<std::string> options = job.options;
  options.push_back("--fdevice-time-trace=" + trace.string());
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const nvrtcResult rc = KFORGE_NVRTC_CHECK_ALLOW(
      nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data()), NVRTC_ERROR_COMPILATION,
      NVRTC_ERROR_INVALID_OPTION, NVRTC_ERROR_CANCELLED, NVRTC_ERROR_OUT_OF_MEMORY);
  alarm(0);

  NvrtcOutcome out;
  size_t log_size = 0;
  KFORGE_NVRTC_CHECK(nvrtcGetProgramLogSize(prog.get(), &log_size));
  out.log.assign(log_size, '\0');
  KFORGE_NVRTC_CHECK(nvrtcGetProgramLog(prog.get(), out.log.data()));
  while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
  const std::optional<std::string> trace_text = ReadAndRemove(trace.string() + ".json");

  switch (rc) {
    case NVRTC_SUCCESS:
      out.kind = NvrtcOutcome::Kind::kSuccess;
      break;
    case NVRTC_ERROR_COMPILATION:
      out.kind = NvrtcOutcome::Kind::kCompileError;
      return out;
    case NVRTC_ERROR_INVALID_OPTION:
      out.kind = NvrtcOutcome::Kind::kInvalidOption;
      return out;
    case NVRTC_ERROR_CANCELLED:
      out.kind = NvrtcOutcome::Kind::kCancelled;
      return out;
    default:
      out.kind = NvrtcOutcome::Kind::kOutOfMemory;
      return out;
  }
  size_t cubin_size = 0;
  KFORGE_NVRTC_CHECK(nvrtcGetCUBINSize(prog.get(), &cubin_size));
  out.cubin.assign(cubin_size, '\0');
  KFORGE_NVRTC_CHECK(nvrtcGetCUBIN(prog.get(), out.cubin.data()));
  for (const std::string& n : job.name_expressions) {
    const char* symbol = nullptr;
    if (nvrtcGetLoweredName(prog.get(), n.c_str(), &symbol) == NVRTC_SUCCESS && symbol != nullptr)
      out.lowered_names[n] = symbol;
  }
  std::vector<std::string> opened;
  if (trace_text && ReadOpenedHeaders(*trace_text, &opened)) out.opened = std::move(opened);
  return out;
}

}  // namespace

int ServeNvrtcJobs(int fd, const std::filesystem::path& dir, size_t memory_limit_bytes) {
  if (memory_limit_bytes > 0) {
    const rlimit limit{memory_limit_bytes, memory_limit_bytes};
    if (setrlimit(RLIMIT_DATA, &limit) != 0) {
      std::fprintf(stderr, "kforge-nvrtc: setrlimit: %s\n", std::strerror(errno));
      return 1;
    }
  }
  // Quoted includes of the program search its directory, the working directory: keep it empty.
  const std::filesystem::path work = dir / "src";
  std::error_code ec;
  std::filesystem::create_directory(work, ec);
  if (ec || ::chdir(work.c_str()) != 0) {
    std::fprintf(stderr, "kforge-nvrtc: cannot work in %s\n", work.c_str());
    return 1;
  }
  if (!WriteFrame(fd, NvrtcHelloFrame(NvrtcVersion()))) return 1;
  std::string request;
  for (int serial = 0; ReadFrame(fd, &request); ++serial) {
    std::string reply;
    try {
      reply = NvrtcOutcomeFrame(Compile(ParseNvrtcJobFrame(request), dir, serial));
    } catch (const std::bad_alloc&) {
      NvrtcOutcome out_of_memory;
      out_of_memory.kind = NvrtcOutcome::Kind::kOutOfMemory;
      reply = NvrtcOutcomeFrame(out_of_memory);
    } catch (const std::exception& e) {
      reply = NvrtcFailureFrame(e.what());
    }
    if (!WriteFrame(fd, reply)) return 1;
  }
  return 0;
}

}  // namespace kforge::cuda::internal
