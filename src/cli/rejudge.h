// `kforge verify --rejudge RUN_DIR...`: the best attempt of every record judged again by the current
// judge, into a new file beside the run's records (never editing them).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/verify/service.h"

namespace kforge::cli {

/// What rejudge reads of a records file: the solution of every record's best attempt, written as
/// solution lines to `solutions`; how many. An error naming the file when none of its lines is a
/// trajectory record, when a line is longer than a line may be, or when it cannot be read.
StatusOr<size_t> CollectBestAttempts(const std::filesystem::path& records, const std::filesystem::path& solutions);

/// Re-judges every run; exit 0 when every previously correct best attempt is still ok, 1 when some
/// is refused now, 2 on usage or harness errors.
int RejudgeRuns(const std::vector<std::string>& runs, const verify::VerifyOptions& options);

}  // namespace kforge::cli
