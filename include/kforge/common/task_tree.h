// Walking a task root for task folders: the one rule every command uses (loading a tree, checking
// --tasks, `kforge tasks build`).
#pragma once

#include <filesystem>
#include <functional>

#include "kforge/common/status.h"

namespace kforge::common {

/// Most entries one walk looks at: a root named by mistake (/, a home folder) ends the walk.
inline constexpr size_t kMaxTaskTreeEntries = 200000;

/// Calls `visit` with every folder at or below `root` that holds a task.json file, in walk order,
/// until `visit` returns false. Linked folders are followed (a root assembled from linked suites),
/// except a link to the root or a folder above it (a cycle); folders deeper than 8 below the root
/// (ids have at most 8 segments) are not entered; unreadable folders are skipped. NotFound ("ROOT:
/// no such task folder") when `root` is not a folder; IoError naming the root when the walk fails;
/// ResourceExhausted after kMaxTaskTreeEntries entries.
Status WalkTaskTree(const std::filesystem::path& root, const std::function<bool(const std::filesystem::path&)>& visit);

}  // namespace kforge::common
