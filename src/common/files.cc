// Whole-file reads, atomic writes and the cache root.
#include "kforge/common/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kforge::common {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

std::filesystem::path CacheRoot() {
  if (const std::string root = Env("KFORGE_CACHE_DIR"); !root.empty()) return root;
  if (const std::string xdg = Env("XDG_CACHE_HOME"); !xdg.empty()) return std::filesystem::path(xdg) / "kforge";
  const std::string home = Env("HOME");
  return std::filesystem::path(home.empty() ? "/tmp" : home) / ".cache" / "kforge";
}

StatusOr<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path.string() + ": cannot open");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Status::IoError(path.string() + ": read failed");
  return buffer.str();
}

Status WriteFileAtomic(const std::filesystem::path& path, std::string_view bytes) {
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  std::error_code ec;
  {
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return Status::IoError(tmp.string() + ": cannot create: " + std::strerror(errno));
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    if (::close(fd) != 0 || done < bytes.size()) {
      std::filesystem::remove(tmp, ec);
      return Status::IoError(tmp.string() + ": write failed");
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return Status::IoError(path.string() + ": " + ec.message());
  }
  return Status::Ok();
}

std::optional<std::pair<uint64_t, uint64_t>> FileIdentity(const std::filesystem::path& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
}

StatusOr<FolderLock> FolderLock::Acquire(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(path.string() + ": cannot open the lock file: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int error = errno;
    char buf[32] = {};
    ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    if (error != EWOULDBLOCK) return Status::IoError(path.string() + ": cannot lock: " + std::strerror(error));
    std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    bool digits = !holder.empty() && holder.find_first_not_of("0123456789") == std::string::npos;
    return Status::ResourceExhausted(path.string() + " is held by " +
                                     (digits ? "pid " + holder : std::string("another process")));
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    ::close(fd);
    return Status::IoError(path.string() + ": cannot write the lock file: " + std::strerror(errno));
  }
  return FolderLock(fd);
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

}  // namespace kforge::common
