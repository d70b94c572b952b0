// `kforge verify --rejudge RUN_DIR...`: the best attempt of every record judged again by the current
// judge, into a new file beside the run's records (never editing them).
#pragma once

#include <string>
#include <vector>

#include "kforge/verify/service.h"

namespace kforge::cli {

/// Re-judges every run; exit 0 when every previously correct best attempt is still ok, 1 when some
/// is refused now, 2 on usage or harness errors.
int RejudgeRuns(const std::vector<std::string>& runs, const verify::VerifyOptions& options);

}  // namespace kforge::cli
