// The parent side of the NVRTC helpers: starting them, the wire, waiting with a deadline, killing.
#include "cuda/nvrtc_helper.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>

#include "cuda/nvrtc_wire.h"
#include "kforge/common/subprocess.h"

namespace kforge::cuda::internal {
namespace {

using Clock = std::chrono::steady_clock;

/// How long past its deadline a helper may take to answer after NVRTC's flow callback cancelled
/// the compile, before it is killed.
constexpr std::chrono::milliseconds kGrace{100};

bool SendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    // MSG_NOSIGNAL: a helper that died must not raise SIGPIPE in the parent.
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Reads exactly `size` bytes; false on end of stream, an error or the deadline.
bool ReceiveAll(int fd, char* data, size_t size, std::optional<Clock::time_point> deadline) {
  while (size > 0) {
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd, POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count() + 1, 60000)));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return false;
      if (r == 0) continue;
    }
    const ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

bool WriteFrame(int fd, std::string_view payload) {
  if (payload.size() > kMaxFrameBytes) return false;
  const uint32_t n = static_cast<uint32_t>(payload.size());
  const char header[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                          static_cast<char>((n >> 16) & 0xff), static_cast<char>((n >> 24) & 0xff)};
  return SendAll(fd, header, 4) && SendAll(fd, payload.data(), payload.size());
}

bool ReadFrame(int fd, std::string* payload, std::optional<Clock::time_point> deadline) {
  unsigned char header[4];
  if (!ReceiveAll(fd, reinterpret_cast<char*>(header), 4, deadline)) return false;
  const size_t n =
      size_t{header[0]} | size_t{header[1]} << 8 | size_t{header[2]} << 16 | size_t{header[3]} << 24;
  if (n > kMaxFrameBytes) return false;
  payload->resize(n);
  return ReceiveAll(fd, payload->data(), n, deadline);
}

// One helper process, its socket and its private directory.
class NvrtcHelpers::Helper {
 public:
  Helper(const std::filesystem::path& program, size_t memory_limit_bytes) {
    std::string templ = (std::filesystem::temp_directory_path() / "kforge-nvrtc-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + templ);
    dir_ = templ;
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      RemoveDir();
      throw std::runtime_error(std::string("socketpair: ") + strerror(errno));
    }
    // Signals as a fresh process has them: the helper's alarm must be able to end it.
    common::SpawnOptions options;
    options.stdin_mode = options.stdout_mode = common::SpawnOptions::Stream::kNull;
    options.fd3 = fds[1];  // the helper holds nothing else of ours
    options.unblock_signals = true;
    options.default_signals = {SIGALRM};
    auto started = common::Subprocess::Spawn(
        {program.string(), dir_.string(), std::to_string(memory_limit_bytes)}, options);
    ::close(fds[1]);
    fd_ = fds[0];
    if (!started.ok()) {
      Stop();
      throw std::runtime_error("NVRTC helper: " + started.status().message());
    }
    process_ = std::move(*started);
  }
  ~Helper() { Stop(); }
  Helper(const Helper&) = delete;
  Helper& operator=(const Helper&) = delete;

  // Reads the hello; throws when the helper is not a matching kforge-nvrtc.
  void Greet(Clock::time_point deadline) {
    std::string hello;
    // Starting takes a fraction of a second; allow that even when the compile deadline is near.
    if (!ReadFrame(fd_, &hello, std::max(deadline, Clock::now() + std::chrono::seconds(30)))) {
      throw std::runtime_error("the NVRTC helper did not start (" + End() + ")");
    }
    if (!IsNvrtcHello(hello)) throw std::runtime_error("the NVRTC helper speaks another protocol");
  }

  bool Send(const std::string& payload) { return WriteFrame(fd_, payload); }
  bool Receive(std::string* payload, Clock::time_point deadline) { return ReadFrame(fd_, payload, deadline); }

  // Kills the process and says how it ended.
  std::string End() { return process_.running() ? common::DescribeExit(process_.Kill()) : "not running"; }

 private:
  void RemoveDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void Stop() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    End();
    RemoveDir();
  }

  common::Subprocess process_;
  int fd_ = -1;
  std::filesystem::path dir_;
};

NvrtcHelpers::NvrtcHelpers(std::filesystem::path program, size_t memory_limit_bytes)
    : program_(std::move(program)), memory_limit_bytes_(memory_limit_bytes) {}

NvrtcHelpers::~NvrtcHelpers() = default;

int NvrtcHelpers::started() const {
  std::lock_guard<std::mutex> lock(mu_);
  return started_;
}

std::unique_ptr<NvrtcHelpers::Helper> NvrtcHelpers::Take(Clock::time_point deadline) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Helper> helper = std::move(idle_.back());
      idle_.pop_back();
      return helper;
    }
    ++started_;
  }
  auto helper = std::make_unique<Helper>(program_, memory_limit_bytes_);
  helper->Greet(deadline);
  return helper;
}

NvrtcOutcome NvrtcHelpers::Run(const NvrtcJob& job, Clock::time_point deadline) {
  const auto budget = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  };
  std::unique_ptr<Helper> helper = Take(deadline);
  if (!helper->Send(NvrtcJobFrame(job, budget()))) {
    // An idle helper that has gone away (killed from outside) is replaced once.
    helper->End();
    helper = Take(deadline);
    if (!helper->Send(NvrtcJobFrame(job, budget()))) {
      throw std::runtime_error("the NVRTC helper refused a job (" + helper->End() + ")");
    }
  }
  std::string reply;
  NvrtcOutcome outcome;
  if (!helper->Receive(&reply, deadline + kGrace)) {
    // Past the deadline: the compile is stuck where NVRTC never checks for cancellation (the C++
    // front end), or the helper died (a crash, or the memory limit).
    outcome.detail = helper->End();
    const bool late = Clock::now() >= deadline + kGrace;
    outcome.kind = late ? NvrtcOutcome::Kind::kCancelled : NvrtcOutcome::Kind::kDied;
    return outcome;
  }
  try {
    outcome = ParseNvrtcOutcomeFrame(reply);
  } catch (const std::runtime_error&) {
    helper->End();
    throw;
  }
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(std::move(helper));
  return outcome;
}

std::filesystem::path DefaultHelperProgram() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path sibling = self.parent_path() / "kforge-nvrtc";
    if (std::filesystem::exists(sibling, ec)) return sibling;
  }
  return KFORGE_NVRTC_HELPER;
}

}  // namespace kforge::cuda::internal
