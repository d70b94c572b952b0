// `kforge report` as a library: the metrics of each run (one pass over its records), the comparison
// of each run with a baseline (paired by task, with bootstrap confidence intervals), and the report
// as JSON (kforge.report/1).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"
#include "kforge/export/metrics.h"
#include "kforge/export/scan.h"

namespace kforge::exporter {

inline constexpr const char* kReportSchema = "kforge.report/1";

/// The metrics of one run.
struct RunReport {
  std::string label;  ///< the run's folder or file name
  std::vector<std::string> files;
  ScanCounts scan;
  std::vector<GroupMetrics> groups;  ///< "all" first, then per level
  std::map<std::string, TaskTally> tasks;
};

/// Reads every record of `files` once.
StatusOr<RunReport> ReportRun(const std::string& label, const std::vector<std::filesystem::path>& files,
                              const WarningSink& warn);

/// One metric of a run beside the baseline's, over the tasks both have.
struct Delta {
  std::string metric;  ///< "correctness", "fast_0", "fast_1", "fast_1.5", "fast_2", "geomean_speedup"
  std::optional<double> run, baseline;
  /// run - baseline for rates; run / baseline for the geometric-mean speedup.
  std::optional<double> delta;
  std::optional<double> lo, hi;  ///< 95% percentile bootstrap interval of `delta`
  bool ratio = false;
};

struct Comparison {
  std::string run, baseline;
  int64_t common_tasks = 0;
  int resamples = 0;
  std::vector<Delta> deltas;
};

/// Pairs `run` and `baseline` by task and resamples the common tasks with replacement `resamples`
/// times (std::mt19937_64 seeded with `seed`).
Comparison Compare(const RunReport& run, const RunReport& baseline, int resamples = 2000, uint64_t seed = 1);

struct Report {
  std::vector<RunReport> runs;
  std::optional<RunReport> baseline;
  std::vector<Comparison> comparisons;  ///< one per run, with a baseline
};

nlohmann::json ToJson(const GroupMetrics& group);
nlohmann::json ToJson(const Report& report);

}  // namespace kforge::exporter
