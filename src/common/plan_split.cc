// Plan splits to and from JSON.
#include "kforge/common/plan_split.h"

namespace kforge::common {

PlanSplit MakePlanSplit(double kernels_ms, double ops_ms) {
  double total = kernels_ms + ops_ms;
  return {kernels_ms, ops_ms, total > 0 ? ops_ms / total : 0};
}

nlohmann::json PlanSplitToJson(const PlanSplit& split) {
  return {{"kernels_ms", split.kernels_ms}, {"ops_ms", split.ops_ms}, {"ops_fraction", split.ops_fraction}};
}

StatusOr<std::optional<PlanSplit>> PlanSplitFromJson(const nlohmann::json& json, const std::string& path) {
  if (json.is_null()) return std::optional<PlanSplit>();
  if (!json.is_object()) return Status::InvalidArgument(path + ": expected an object or null");
  PlanSplit split;
  for (auto [key, out] : {std::pair{"kernels_ms", &split.kernels_ms}, std::pair{"ops_ms", &split.ops_ms},
                          std::pair{"ops_fraction", &split.ops_fraction}}) {
    auto it = json.find(key);
    if (it == json.end() || !it->is_number())
      return Status::InvalidArgument(path + "." + key + ": expected a number");
    *out = it->get<double>();
  }
  return std::optional<PlanSplit>(split);
}

}  // namespace kforge::common
