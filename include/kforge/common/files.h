// Files and the cache directory, written once for every module: whole-file reads, atomic writes
// (readers see the old or the new contents, never part), and where kforge caches things.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <string_view>
#include <cstdint>

#include "kforge/common/status.h"

namespace kforge::common {

/// kforge's cache root: $KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge, else ~/.cache/kforge
/// (/tmp/.cache/kforge without HOME). Compiled CUBINs live in cubin/, measured device peaks at the
/// root, worker logs in logs/.
std::filesystem::path CacheRoot();

/// The whole file. NotFound when it cannot be opened, IoError when reading fails; both name it.
StatusOr<std::string> ReadFile(const std::filesystem::path& path);

/// Writes `bytes` to a temporary file beside `path` (unique per process and call, created with
/// O_EXCL | O_NOFOLLOW, so a planted link is never followed) and renames it over `path` (a link at
/// `path` is replaced, not followed); the temporary file is removed on failure. Does not create
/// folders. What is not a regular file is never renamed over: a character device or a FIFO at `path`
/// (or where a link at `path` points) is written into in place (a FIFO only when a reader has it
/// open), and a folder, block device or socket is refused; each stays what it was.
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view bytes);

/// A file's identity: device and inode (hard links and other names of one file compare equal).
/// nullopt when it cannot be stat'ed.
std::optional<std::pair<uint64_t, uint64_t>> FileIdentity(const std::filesystem::path& path);

/// Whether `a` and `b` name one file: by name (absolute, with `.`, `..` and the links that exist
/// resolved, so a file not created yet counts) or by device and inode (hard links, bind mounts).
bool SameFile(const std::filesystem::path& a, const std::filesystem::path& b);

/// Whether `path` is `folder` or lies below it: by name as SameFile compares, or because a folder
/// above `path` that exists is `folder` by device and inode.
bool IsInside(const std::filesystem::path& path, const std::filesystem::path& folder);

/// An advisory lock (flock) on a lock file, held while the object lives and released by the kernel
/// when the process dies. The file holds the holder's pid, for the message of whoever is refused.
class FolderLock {
 public:
  /// Creates or opens `path` (never through a link) and takes the lock without waiting.
  /// ResourceExhausted "PATH is held by pid N" when another process holds it; IoError otherwise.
  static StatusOr<FolderLock> Acquire(const std::filesystem::path& path);
  FolderLock() = default;
  ~FolderLock();
  FolderLock(FolderLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FolderLock& operator=(FolderLock&& other) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  explicit FolderLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace kforge::common
