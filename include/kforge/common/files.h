// Files and the cache directory, written once for every module: whole-file reads, atomic writes
// (readers see the old or the new contents, never part), and where kforge caches things.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "kforge/common/status.h"

namespace kforge::common {

/// kforge's cache root: $KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge, else ~/.cache/kforge
/// (/tmp/.cache/kforge without HOME). Compiled CUBINs live in cubin/, measured device peaks at the
/// root, worker logs in logs/.
std::filesystem::path CacheRoot();

/// The whole file. NotFound when it cannot be opened, IoError when reading fails; both name it.
StatusOr<std::string> ReadFile(const std::filesystem::path& path);

/// Writes `bytes` to a temporary file beside `path` (unique per process and call) and renames it
/// over `path`; the temporary file is removed on failure. Does not create folders.
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view bytes);

}  // namespace kforge::common
