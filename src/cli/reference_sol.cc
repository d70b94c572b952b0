// The reference's own % of speed of light in `kforge tasks check`.
#include "cli/reference_sol.h"

#include <algorithm>
#include <cstdio>

#include "kforge/bench/bencher.h"

namespace kforge::cli {

std::optional<bench::Roofline> ReferenceRoofline(const common::Task& task,
                                                 const verify::TaskCheckReply& reply,
                                                 const std::optional<bench::DevicePeak>& peak) {
  std::optional<bench::TaskCost> cost = bench::CostOf(task);  // evaluated for the default variant
  if (!cost || !peak) return std::nullopt;
  const std::string& variant = task.variants.front().name;
  for (const verify::TaskCheckVariant& v : reply.variants) {
    if (v.variant != variant || !(v.reference_ms > 0)) continue;
    bench::Roofline r = bench::ComputeRoofline(*cost, *peak, v.reference_ms);
    if (r.sol_ms > 0) return r;
  }
  return std::nullopt;
}

nlohmann::json ReferenceRooflineJson(const common::Task& task, const bench::Roofline& r) {
  return {
      {"flops", r.flops},
      {"bytes", r.bytes},
      {"sol_ms", r.sol_ms},
      {"reference_ms", r.sol_pct > 0 ? r.sol_ms / r.sol_pct * 100 : 0.0},
      {"sol_pct", r.sol_pct},
      {"derived", task.cost_derived.empty() ? nlohmann::json(nullptr) : nlohmann::json(task.cost_derived)}};
}

std::string SolBands::Summary() const {
  int under = 0, middle = 0, over = 0;
  for (double p : pcts) (p < 10 ? under : p <= 50 ? middle : over) += 1;
  char text[200];
  if (pcts.empty()) return "reference %SOL: no task with a cost and a reference time";
  std::vector<double> sorted = pcts;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  std::snprintf(
      text, sizeof text,
      "reference %%SOL over %zu tasks with a cost: %d under 10%%, %d 10-50%%, %d over 50%%; median %.1f%%", n,
      under, middle, over, median);
  return text;
}

}  // namespace kforge::cli
