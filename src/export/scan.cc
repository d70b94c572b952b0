// Streaming reads of trajectory records.
#include "kforge/export/scan.h"

#include <optional>

#include "export/outlasted.h"
#include "kforge/dataset/jsonl.h"

namespace kforge::exporter {

namespace fs = std::filesystem;

using internal::LinePlace;

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
  KFORGE_ASSIGN_OR_RETURN(const std::vector<LinePlace> outlasted, internal::Outlasted(files));
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
