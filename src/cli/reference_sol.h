// The reference's own % of speed of light in `kforge tasks check`: the task's cost (hand-written or
// derived at import) against the device's peaks, at the reference time the check measured.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/bench/peak.h"
#include "kforge/common/task.h"
#include "kforge/verify/worker_protocol.h"

namespace kforge::cli {

/// The roofline of the reference's run on the task's default variant; nullopt without a cost, a
/// peak or a reference time.
std::optional<bench::Roofline> ReferenceRoofline(const common::Task& task,
                                                 const verify::TaskCheckReply& reply,
                                                 const std::optional<bench::DevicePeak>& peak);

/// {flops, bytes, sol_ms, reference_ms, sol_pct, derived}: the record's `reference_roofline`.
nlohmann::json ReferenceRooflineJson(const common::Task& task, const bench::Roofline& roofline);

/// References counted by their % of speed of light: under 10, 10 to 50, over 50.
struct SolBands {
  std::vector<double> pcts;

  void Add(double sol_pct) { pcts.push_back(sol_pct); }
  /// "reference %SOL over N tasks with a cost: A under 10%, B 10-50%, C over 50%; median M%".
  std::string Summary() const;
};

}  // namespace kforge::cli
