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
/// folders.
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view bytes);

/// A file's identity: device and inode (hard links and other names of one file compare equal).
/// nullopt when it cannot be stat'ed.
std::optional<std::pair<uint64_t, uint64_t>> FileIdentity(const std::filesystem::path& path);

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
