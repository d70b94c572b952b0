// Whole-file reads, atomic writes and the cache root.
#include "kforge/common/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

/// Writes all of `bytes` to `fd`; false on an error.
bool WriteAll(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

/// What a file that is not a regular file is, for messages.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISFIFO(mode)) return "a FIFO";
  return "not a regular file";
}

/// Writes into the character device or FIFO at `path` without replacing it; refuses anything else.
Status WriteInPlace(const std::filesystem::path& path, mode_t mode, std::string_view bytes) {
  if (!S_ISCHR(mode) && !S_ISFIFO(mode))
    return Status::InvalidArgument(path.string() + ": " + KindOf(mode) +
                                   ", not a file; only files, character devices and FIFOs are written");
  // O_NONBLOCK: a FIFO no reader holds fails at once (ENXIO) instead of waiting for one.
  int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENXIO) return Status::IoError(path.string() + ": a FIFO that no reader holds open");
  if (fd < 0) return Status::IoError(path.string() + ": cannot open: " + std::strerror(errno));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const bool written = WriteAll(fd, bytes);
  const int error = errno;
  if (::close(fd) != 0 || !written)
    return Status::IoError(path.string() + ": write failed: " + std::strerror(written ? errno : error));
  return Status::Ok();
}

/// `path` made absolute, with `.`, `..` and the links that exist resolved.
std::filesystem::path Resolved(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) return path.lexically_normal();
  std::filesystem::path resolved = std::filesystem::weakly_canonical(absolute, ec);
  if (ec) resolved = absolute.lexically_normal();
  if (!resolved.has_filename() && resolved.has_relative_path()) resolved = resolved.parent_path();  // "dir/"
  return resolved;
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
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    struct stat target {};
    if (!S_ISLNK(st.st_mode)) return WriteInPlace(path, st.st_mode, bytes);
    // A link is replaced, not followed, unless it points at something a rename would not replace.
    if (::stat(path.c_str(), &target) == 0 && !S_ISREG(target.st_mode))
      return WriteInPlace(path, target.st_mode, bytes);
  }
  std::error_code ec;
  {
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return Status::IoError(tmp.string() + ": cannot create: " + std::strerror(errno));
    const bool written = WriteAll(fd, bytes);
    if (::close(fd) != 0 || !written) {
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

bool SameFile(const std::filesystem::path& a, const std::filesystem::path& b) {
  if (Resolved(a) == Resolved(b)) return true;
  std::optional<std::pair<uint64_t, uint64_t>> identity = FileIdentity(a);
  return identity && identity == FileIdentity(b);
}

bool IsInside(const std::filesystem::path& path, const std::filesystem::path& folder) {
  const std::filesystem::path inner = Resolved(path), outer = Resolved(folder);
  auto mismatch = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  if (mismatch.first == outer.end()) return true;
  std::optional<std::pair<uint64_t, uint64_t>> identity = FileIdentity(folder);
  if (!identity) return false;
  for (std::filesystem::path above = inner; above.has_relative_path(); above = above.parent_path())
    if (FileIdentity(above) == identity) return true;
  return false;
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
