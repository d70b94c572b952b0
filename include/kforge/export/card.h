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
#include "kforge/export/formats.h"
#include "kforge/export/scan.h"

namespace kforge::exporter {

inline constexpr const char* kExportStatsSchema = "kforge.export_stats/1";

struct DatasetStats {
  Format format = Format::kMessages;
  std::vector<std::string> inputs;                    ///< the records files read
  nlohmann::json options = nlohmann::json::object();  ///< filters and selection, as given
  ScanCounts scan;
  std::map<std::string, int64_t> left_out;  ///< records left out, by reason
  int64_t exported = 0;
  std::map<std::string, int64_t> splits, levels, tags, sources, licenses, teachers, runs;
  int64_t correct = 0;
  int64_t correct_general = 0;  ///< of `correct`, also correct at the task's derived sizes
  int64_t suspect_timing = 0;   ///< with an attempt whose timing kforge refused (--include-suspect-timing)
  int64_t with_tools = 0;
  int64_t compile_only = 0;                     ///< records of runs without a GPU (compiled, never run)
  FileFormat file_format = FileFormat::kJsonl;  ///< of the data files (and their extension)
  std::vector<std::string> files;               ///< written into the output folder, by name

  /// Counts one exported record.
  void Add(const dataset::Trajectory& record, const std::string& split);
};

nlohmann::json ToJson(const DatasetStats& stats);

/// The dataset card (Markdown) with the Hugging Face Hub's YAML front matter: license (from the
/// tasks' licences), language, task_categories, tags, size_categories, pretty_name and configs.
std::string DatasetCard(const DatasetStats& stats);

/// The Hub's license id of a task's licence ("MIT" -> "mit", "Apache-2.0" -> "apache-2.0");
/// "unknown" when empty, "other" when the Hub has no id for it.
std::string HubLicense(const std::string& license);

/// The Hub's size category of `rows` ("n<1K", "1K<n<10K", ...).
std::string SizeCategory(int64_t rows);

}  // namespace kforge::exporter
