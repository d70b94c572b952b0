// PlanSplit: where the GPU time of a plan with library ops went, kernels against library ops. Verdict
// timings, bench records and the worker's replies carry it under kPlanSplitKey (docs/formats.md); this
// file is the one reader and writer of its fields.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"

namespace kforge::common {

/// The key a record keeps its plan split under.
inline constexpr std::string_view kPlanSplitKey = "plan_split";

struct PlanSplit {
  double kernels_ms = 0;    ///< GPU time of the plan's kernel launches
  double ops_ms = 0;        ///< GPU time of its library ops (`op` and `fill` steps)
  double ops_fraction = 0;  ///< ops_ms / (kernels_ms + ops_ms); 0 when both are 0

  bool operator==(const PlanSplit&) const = default;
};

/// The split of `kernels_ms` and `ops_ms`, with its fraction.
PlanSplit MakePlanSplit(double kernels_ms, double ops_ms);

/// {kernels_ms, ops_ms, ops_fraction}.
nlohmann::json PlanSplitToJson(const PlanSplit& split);

/// Null reads as no split; otherwise an object with the three numbers. Errors name `path`
/// ("plan_split.ops_fraction: expected a number").
StatusOr<std::optional<PlanSplit>> PlanSplitFromJson(const nlohmann::json& json, const std::string& path);

}  // namespace kforge::common
