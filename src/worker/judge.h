// Judging a candidate's outputs from their comparison with the reference's (reference/compare.h):
// the tolerance rules of every check, bench's timed runs and `tasks check` alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/task.h"
#include "kforge/reference/compare.h"

namespace kforge::worker {

/// The first problem with a candidate's outputs against the reference's, if any: an element out of
/// tolerance, or a relative L2 error over the bound (max(10 rtol, 1e-3)) where the reference is not zero
/// within atol. Notes degenerate references and poison in `checks`.
std::optional<std::string> JudgeOutputs(const std::vector<reference::CompareResult>& results,
                                        const common::Tolerance& tol, nlohmann::json& checks);

/// {name, max_abs_err, ...} of one compared output, as verdicts record it.
nlohmann::json OutputJson(const reference::CompareResult& r);

}  // namespace kforge::worker
