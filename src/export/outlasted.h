// The first pass of ScanRecords: which records another record with the same id outlasts.
#pragma once

#include <cstdint>
#include <filesystem>
#include <utility>
#include <vector>

#include "kforge/common/status.h"

namespace kforge::exporter::internal {

/// Where a record is: its file's index and its line.
using LinePlace = std::pair<uint32_t, int>;

/// The valid records of `files` that another valid record with the same id outlasts (finished later,
/// created_at + timing.wall_s, or on a tie was read later), as (file, line) in reading order. The list
/// may also name lines that are not valid records; the caller finds those malformed before it looks
/// here. Fails (IoError, NotFound) only when a file cannot be read.
StatusOr<std::vector<LinePlace>> Outlasted(const std::vector<std::filesystem::path>& files);

}  // namespace kforge::exporter::internal
