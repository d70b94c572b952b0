// Judging a candidate's outputs from their comparison with the reference's (reference/compare.h):
// the tolerance rules of every check, bench's timed runs and `tasks check` alike.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/task.h"
#include "kforge/common/verdict_parts.h"
#include "kforge/reference/compare.h"

namespace kforge::worker {

/// The tolerance rules a task's outputs are held to.
struct OutputRules {
  common::Tolerance tol;
  /// Outputs the import measured to be rounding noise (task.json's conditioning): no scale, so
  /// their elements alone decide. Every other output is also held to the relative-L2 bound.
  std::set<std::string> noise_outputs;

  static OutputRules For(const common::Task& task);
};

/// The first problem with a candidate's outputs against the reference's, if any: an element out of
/// tolerance, or a relative L2 error over the bound (max(10 rtol, 1e-3)) on an output with a scale,
/// which is every output but those measured to be noise and those whose reference is exactly zero.
/// Notes near-constant references, elements-only outputs and poison in `checks`.
std::optional<std::string> CheckOutputs(const std::vector<reference::CompareResult>& results,
                                        const OutputRules& rules, common::Checks& checks);

/// One compared output, as verdicts record it.
common::OutputComparison OutputRecord(const reference::CompareResult& r);

}  // namespace kforge::worker
