// Streaming reads of trajectory records.
#include "kforge/export/scan.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <tuple>

#include "kforge/common/hash.h"
#include "kforge/dataset/jsonl.h"

namespace kforge::exporter {

namespace fs = std::filesystem;

namespace {

/// Seconds since the epoch of a UTC time written "YYYY-MM-DDTHH:MM:SSZ" (created_at); nullopt for
/// any other text.
std::optional<double> UtcSeconds(const std::string& text) {
  std::tm tm = {};
  int end = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &end) != 6 ||
      end != static_cast<int>(text.size()))
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm));
}

/// Where a record is: its file's index and its line.
using LinePlace = std::pair<uint32_t, int>;

/// A valid record of the first pass: its id (the first 128 bits of its SHA-256, so memory stays small
/// whatever the ids' length), when it finished, and where it is.
struct IdEntry {
  uint64_t id_high = 0, id_low = 0;
  double finished = 0;  ///< created_at + wall_s; -inf when created_at is not a time
  uint32_t file = 0;
  int line = 0;

  auto Key() const { return std::tie(id_high, id_low, finished, file, line); }
};

IdEntry EntryOf(const dataset::Trajectory& t, uint32_t file, int line) {
  const std::string digest = common::Sha256Hex(t.id);
  IdEntry e;
  std::from_chars(digest.data(), digest.data() + 16, e.id_high, 16);
  std::from_chars(digest.data() + 16, digest.data() + 32, e.id_low, 16);
  std::optional<double> created = UtcSeconds(t.created_at);
  e.finished = created ? *created + (std::isfinite(t.wall_s) ? t.wall_s : 0) : -HUGE_VAL;
  e.file = file;
  e.line = line;
  return e;
}

/// The valid records that another record with the same id outlasts (finished later, or on a tie was
/// read later), as (file, line) in reading order.
StatusOr<std::vector<LinePlace>> Outlasted(const std::vector<fs::path>& files) {
  std::vector<IdEntry> entries;
  for (uint32_t f = 0; f < files.size(); ++f) {
    KFORGE_ASSIGN_OR_RETURN(std::unique_ptr<dataset::JsonlReader> reader, dataset::JsonlReader::Open(files[f]));
    while (std::optional<dataset::JsonlReader::Line> line = reader->Next()) {
      if (line->torn) continue;
      if (!line->value.ok()) {
        if (line->value.status().code() == Status::Code::kIoError) return line->value.status();
        continue;
      }
      StatusOr<dataset::Trajectory> record = dataset::TrajectoryFromJson(*line->value, "record");
      if (record.ok()) entries.push_back(EntryOf(*record, f, line->number));
    }
  }
  std::sort(entries.begin(), entries.end(), [](const IdEntry& a, const IdEntry& b) { return a.Key() < b.Key(); });
  std::vector<LinePlace> outlasted;
  for (size_t i = 0; i + 1 < entries.size(); ++i)
    if (entries[i].id_high == entries[i + 1].id_high && entries[i].id_low == entries[i + 1].id_low)
      outlasted.emplace_back(entries[i].file, entries[i].line);
  std::sort(outlasted.begin(), outlasted.end());
  return outlasted;
}

}  // namespace

StatusOr<fs::path> ResolveRun(const fs::path& argument) {
  std::error_code ec;
  if (fs::is_directory(argument, ec)) {
    fs::path records = argument / "trajectories.jsonl";
    if (fs::is_regular_file(records, ec)) return records;
    return Status::InvalidArgument(argument.string() +
                                   ": a folder without trajectories.jsonl (not a run folder)");
  }
  if (fs::exists(argument, ec)) return argument;
  return Status::InvalidArgument(argument.string() + ": no such run folder or file");
}

Status ScanRecords(const std::vector<fs::path>& files, const RecordVisitor& visit, ScanCounts& counts,
                   const WarningSink& warn) {
  KFORGE_ASSIGN_OR_RETURN(const std::vector<LinePlace> outlasted, Outlasted(files));
  auto next_outlasted = outlasted.begin();
  for (uint32_t f = 0; f < files.size(); ++f) {
    KFORGE_ASSIGN_OR_RETURN(std::unique_ptr<dataset::JsonlReader> reader,
                            dataset::JsonlReader::Open(files[f]));
    while (std::optional<dataset::JsonlReader::Line> line = reader->Next()) {
      if (line->torn) {
        ++counts.torn;
        continue;
      }
      if (!line->value.ok()) {
        if (line->value.status().code() == Status::Code::kIoError) return line->value.status();
        ++counts.malformed;
        warn(line->value.status().message());
        continue;
      }
      StatusOr<dataset::Trajectory> record = dataset::TrajectoryFromJson(*line->value, "record");
      if (!record.ok()) {
        ++counts.malformed;
        warn(files[f].string() + ":" + std::to_string(line->number) + ": " + record.status().message());
        continue;
      }
      const LinePlace here(f, line->number);
      while (next_outlasted != outlasted.end() && *next_outlasted < here) ++next_outlasted;
      if (next_outlasted != outlasted.end() && *next_outlasted == here) {
        ++counts.duplicates;
        continue;
      }
      try {
        visit(RecordRef{f, line->number, line->offset}, *record);
      } catch (const nlohmann::json::exception& e) {  // a field of the wrong type: skip the record
        ++counts.malformed;
        warn(files[f].string() + ":" + std::to_string(line->number) + ": a field of the wrong type (" +
             e.what() + ")");
        continue;
      }
      ++counts.records;
    }
  }
  return Status::Ok();
}

Status ReadRecordsAt(const std::vector<fs::path>& files, const std::vector<RecordRef>& refs,
                     const std::function<Status(size_t index, dataset::Trajectory& record)>& visit) {
  std::unique_ptr<dataset::JsonlReader> reader;
  uint32_t open_file = UINT32_MAX;
  for (size_t i = 0; i < refs.size(); ++i) {
    const RecordRef& ref = refs[i];
    if (ref.file != open_file) {
      KFORGE_ASSIGN_OR_RETURN(reader, dataset::JsonlReader::Open(files.at(ref.file)));
      open_file = ref.file;
    }
    std::string where = files[ref.file].string() + ":" + std::to_string(ref.line);
    KFORGE_RETURN_IF_ERROR(reader->Seek(ref.offset, ref.line));
    std::optional<dataset::JsonlReader::Line> line = reader->Next();
    if (!line || line->number != ref.line || !line->value.ok())
      return Status::IoError(where + ": the line changed since it was first read");
    StatusOr<dataset::Trajectory> record = dataset::TrajectoryFromJson(*line->value, "record");
    if (!record.ok()) return Status::IoError(where + ": the line changed since it was first read");
    KFORGE_RETURN_IF_ERROR(visit(i, *record));
  }
  return Status::Ok();
}

}  // namespace kforge::exporter
