// `kforge export` as a library: two streaming passes over the records files. The first reads every
// record, applies the per-record filters and keeps a small Candidate for each survivor; selection then
// decides what to keep; the second pass reads only the kept records again and writes them, with
// stats.json and the dataset card. Memory holds candidates, never whole records.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/names.h"
#include "kforge/common/status.h"
#include "kforge/export/card.h"
#include "kforge/export/filters.h"
#include "kforge/export/formats.h"
#include "kforge/export/scan.h"
#include "kforge/export/split.h"

namespace kforge::exporter {

/// Which groups --balance evens out; kNone (no name) when it is not given.
enum class Balance { kNone, kLevel, kTag };
inline constexpr common::NameTable<Balance, 3> kBalanceNames = {
    {{Balance::kNone, ""}, {Balance::kLevel, "level"}, {Balance::kTag, "tag"}}};
static_assert(kBalanceNames.MatchesEnum());

/// What an export keeps of the whole input, after the per-record filters (applied by src/export/selection.h).
struct SelectionOptions {
  /// Keep at most this many records per task, best first. Default: all.
  std::optional<int64_t> per_task;
  /// Drop a record whose solution's estimated Jaccard similarity to a better kept one of the same task
  /// is at least this. Default: off (exact duplicates only).
  std::optional<double> near_dup;
  /// Cap every group (level or tag) at the size of the smallest non-empty one, or at `balance_cap`.
  Balance balance = Balance::kNone;
  std::optional<int64_t> balance_cap;
};

struct ExportOptions {
  Format format = Format::kMessages;
  std::filesystem::path out;  ///< the output folder; nothing is written outside it
  bool force = false;         ///< write into a non-empty folder (replacing a previous export's files)
  Filters filters;
  SelectionOptions selection;
  FormatOptions rows;
  std::optional<std::filesystem::path> holdout;  ///< an ids file or a task root
  double holdout_threshold = 0.8;                ///< reference similarity that counts as the same task
  SplitSpec split;                               ///< JSON lines formats only
  FileFormat file_format = FileFormat::kJsonl;   ///< kParquet: messages and pairs only
  /// kParquet: the program that writes a Parquet file from rows, as an argument vector to which
  /// `--features JSON --in ROWS.jsonl --out FILE.parquet` is appended (PYTHON
  /// scripts/export_parquet.py: pyarrow, through the `datasets` library's features).
  std::vector<std::string> parquet_writer;
  std::filesystem::path tasks_root;                     ///< kernelbench: where task.json folders are
  nlohmann::json described = nlohmann::json::object();  ///< the options as given, for the card
};

/// Refuses, in one line naming the flag, options that contradict each other: Parquet files of rows that
/// are not conversations, --balance-cap without --balance, a selection with --format preference,
/// --split with kernelbench. Export checks them first; InvalidArgument.
Status CheckExportOptions(const ExportOptions& options);

/// Checks the output folder before anything is read: it must be absent, empty, or `force`d; not a
/// file. With `force`, Export removes only the files a previous export's stats.json lists and
/// refuses to write a name that something else holds.
Status CheckOutput(const std::filesystem::path& out, bool force);

/// Refuses (InvalidArgument, naming both) when one of `inputs` is also a file of the folder `out`
/// (compared by device and inode, so other names and hard links count): an export never writes over
/// what it reads.
Status CheckInputsApart(const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& out);

/// Exports the records of `files`. Malformed lines go to `warn` (FILE:LINE: why) and are counted. A
/// record that cannot be rendered (kernelbench: its task is missing, or its plan cannot be written as
/// host code) is left out with a warning. Fails on IO errors and on a bad --holdout or --tasks.
StatusOr<DatasetStats> Export(const std::vector<std::filesystem::path>& files, const ExportOptions& options,
                              const WarningSink& warn);

}  // namespace kforge::exporter
