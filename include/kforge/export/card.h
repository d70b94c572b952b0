// What an export wrote, counted as it writes: stats.json (kforge.export_stats/1) and the dataset card
// README.md beside the data (counts per split, level and tag, filters, sources, licences, schema and
// how to load it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/dataset/trajectory.h"
#include "kforge/export/scan.h"

namespace kforge::exporter {

inline constexpr const char* kExportStatsSchema = "kforge.export_stats/1";

struct DatasetStats {
  std::string format;                                 ///< "messages", "pairs", "trajectory", "kernelbench"
  std::vector<std::string> inputs;                    ///< the records files read
  nlohmann::json options = nlohmann::json::object();  ///< filters and selection, as given
  ScanCounts scan;
  std::map<std::string, int64_t> left_out;  ///< records left out, by reason
  int64_t exported = 0;
  std::map<std::string, int64_t> splits, levels, tags, sources, licenses, teachers, runs;
  int64_t correct = 0;
  int64_t with_tools = 0;
  std::vector<std::string> files;  ///< written into the output folder, by name

  /// Counts one exported record.
  void Add(const dataset::Trajectory& record, const std::string& split);
};

nlohmann::json ToJson(const DatasetStats& stats);

/// The dataset card (Markdown).
std::string DatasetCard(const DatasetStats& stats);

}  // namespace kforge::exporter
