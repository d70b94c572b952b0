// Where the second pass of an export writes rows: JSON lines files per split, or KernelBench files.
#pragma once

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kforge/common/task.h"
#include "kforge/export/exporter.h"

namespace kforge::exporter::internal {

class Sink {
 public:
  virtual ~Sink() = default;
  /// Writes one record. A record that cannot be rendered returns InvalidArgument (it is left out with
  /// a warning); an IO failure returns IoError (the export stops).
  virtual Status Write(const dataset::Trajectory& record, DatasetStats& stats) = 0;
  /// Writes one row made elsewhere (preference pairs) into `split`'s file; Internal for a sink of files.
  virtual Status WriteRow(const nlohmann::json& row, const std::string& split, DatasetStats& stats) {
    (void)row, (void)split, (void)stats;
    return Status::Internal("this export writes no rows");
  }
  /// Flushes and closes; IoError when a write failed.
  virtual Status Close(DatasetStats& stats) = 0;
  /// After a failed export: removes every file this sink created, so that no torn data file is
  /// left (one that no stats.json lists, which a rerun with --force would refuse to replace).
  void Abort();

 protected:
  /// Closes what is open before Abort removes `created_`.
  virtual void CloseAll() = 0;
  /// Paths this sink created, for Abort.
  std::vector<std::filesystem::path> created_;
};

/// messages, pairs, trajectory: OUT/<split>.jsonl; with FileFormat::kParquet, OUT/<split>.parquet
/// (rows gathered in OUT/.<split>.rows.jsonl, converted at Close and removed).
std::unique_ptr<Sink> MakeJsonlSink(const ExportOptions& options);

/// Runs `writer` (ExportOptions::parquet_writer) on the rows of `rows` with the schema `features`
/// (FeaturesDict) to write `out`. Unavailable with the writer's last line when it fails.
Status WriteParquet(const std::vector<std::string>& writer, const nlohmann::json& features,
                    const std::filesystem::path& rows, const std::filesystem::path& out);

/// kernelbench: OUT/level_<L>_problem_<P>_sample_<S>_kernel.py and OUT/index.jsonl.
std::unique_ptr<Sink> MakeKernelBenchSink(const ExportOptions& options);

}  // namespace kforge::exporter::internal
