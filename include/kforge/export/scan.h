// Reading the records of runs: RUN_DIR arguments to files, then every record of those files in
// order, one at a time, with malformed and torn lines counted and skipped, and one record per episode
// (a run given twice never counts a record twice).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/dataset/trajectory.h"

namespace kforge::exporter {

/// The records file of a RUN_DIR argument: RUN_DIR/trajectories.jsonl, or the argument itself when
/// it is a file. InvalidArgument naming the argument when neither exists.
StatusOr<std::filesystem::path> ResolveRun(const std::filesystem::path& argument);

/// Where a record's line is, to read it again in a second pass.
struct RecordRef {
  uint32_t file = 0;  ///< index into the scanned files
  int line = 0;       ///< 1-based
  uint64_t offset = 0;
};

struct ScanCounts {
  int64_t records = 0;    ///< read and valid
  int64_t malformed = 0;  ///< not JSON, or not a kforge.trajectory/1 record
  int64_t torn = 0;       ///< a last line without its newline (a run being written, or killed)
  int64_t duplicates = 0; ///< valid records left out because another has the same id and messages
};

using RecordVisitor = std::function<void(const RecordRef& ref, dataset::Trajectory& record)>;
/// Receives one line per malformed record: `FILE:LINE: why`.
using WarningSink = std::function<void(const std::string& message)>;

/// Visits every valid record of `files` in order, one per episode (record id and messages): of records
/// sharing both, the one that finished last (created_at + wall_s) is visited, on a tie the last one
/// read; the others are counted in `duplicates`. Records with one id and other messages are other
/// episodes (independent runs of one configuration). This reads the files twice (first the ids, then the records).
/// Malformed lines are counted and reported to `warn`; a torn last line is only counted. Fails
/// (IoError, NotFound) only when a file cannot be read.
Status ScanRecords(const std::vector<std::filesystem::path>& files, const RecordVisitor& visit,
                   ScanCounts& counts, const WarningSink& warn);

/// Reads the records at `refs` (sorted by file, then offset) in that order, as ScanRecords would.
/// IoError when a line is no longer a valid record (the file changed between passes).
Status ReadRecordsAt(const std::vector<std::filesystem::path>& files, const std::vector<RecordRef>& refs,
                     const std::function<Status(size_t index, dataset::Trajectory& record)>& visit);

}  // namespace kforge::exporter
