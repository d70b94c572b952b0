// Export sinks: JSON lines per split, and KernelBench's run layout.
#include "export/sinks.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "export/kernelbench.h"
#include "kforge/common/files.h"
#include "kforge/common/json_fields.h"

namespace kforge::exporter::internal {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// `row` as compact JSON text with its keys in the order of `columns` (nlohmann's objects sort them).
std::string OrderedText(const json& row, const std::vector<Column>& columns) {
  std::string text = "{";
  auto add = [&](const std::string& key, const json& value) {
    if (text.size() > 1) text += ',';
    text += common::JsonText(json(key)) + ':' + common::JsonText(value);
  };
  for (const Column& c : columns)
    if (auto it = row.find(c.name); it != row.end()) add(c.name, *it);
  for (const auto& [key, value] : row.items())
    if (std::none_of(columns.begin(), columns.end(), [&](const Column& c) { return c.name == key; }))
      add(key, value);
  return text + '}';
}

/// An output file opened for writing; every write is checked once, at Close.
class OutFile {
 public:
  static StatusOr<std::unique_ptr<OutFile>> Open(const fs::path& path) {
    // Created, never replaced or followed: a previous export's files are gone by now, and whatever
    // else holds the name (a user's file, a planted link) is left alone.
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST)
      return Status::IoError(path.string() + ": exists and is not from a previous export; move it away or "
                                             "use another --out");
    std::FILE* file = fd >= 0 ? ::fdopen(fd, "wb") : nullptr;
    if (!file) {
      if (fd >= 0) ::close(fd);
      return Status::IoError(path.string() + ": " + std::strerror(errno));
    }
    return std::unique_ptr<OutFile>(new OutFile(file, path));
  }
  ~OutFile() {
    if (file_) std::fclose(file_);
  }
  /// One JSON line: the keys named in `columns` first, in that order, then any other key.
  void Line(const json& row, const std::vector<Column>& columns = {}) {
    std::string text = columns.empty() ? common::JsonText(row) : OrderedText(row, columns);
    text += '\n';
    ok_ = ok_ && std::fwrite(text.data(), 1, text.size(), file_) == text.size();
  }
  Status Close() {
    bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if (!ok_ || !closed) return Status::IoError(path_.string() + ": write failed: " + std::strerror(errno));
    return Status::Ok();
  }

 private:
  OutFile(std::FILE* file, fs::path path) : file_(file), path_(std::move(path)) {}
  std::FILE* file_;
  fs::path path_;
  bool ok_ = true;
};

class JsonlSink : public Sink {
 public:
  explicit JsonlSink(const ExportOptions& options) : options_(options), columns_(RowColumns(options.format)) {}

  Status Write(const dataset::Trajectory& record, DatasetStats& stats) override {
    std::vector<json> rows(1);
    switch (options_.format) {
      case Format::kMessages: {
        KFORGE_ASSIGN_OR_RETURN(rows[0], MessagesRow(record, options_.rows));
        break;
      }
      case Format::kPairs: {
        KFORGE_ASSIGN_OR_RETURN(rows[0], PairsRow(record, options_.rows));
        break;
      }
      case Format::kTurns: {
        KFORGE_ASSIGN_OR_RETURN(rows, TurnRows(record, options_.rows));
        break;
      }
      case Format::kTrajectory:
        rows[0] = TrajectoryRow(record, options_.rows);
        break;
      case Format::kKernelBench:  // files, written by KernelBenchSink
      case Format::kPreference:   // rows of two records, written by the preference pass
        return Status::Internal("the record writer was given the " + std::string(FormatName(options_.format)) +
                                " format");
    }
    const std::string& split = options_.split.SplitOf(record.task.id);
    for (const json& row : rows) KFORGE_RETURN_IF_ERROR(WriteRow(row, split, stats));
    stats.Add(record, split);
    return Status::Ok();
  }

  Status WriteRow(const json& row, const std::string& split, DatasetStats& stats) override {
    std::unique_ptr<OutFile>& file = files_[split];
    if (!file) {
      KFORGE_ASSIGN_OR_RETURN(file, OutFile::Open(options_.out / RowsFile(split)));
      created_.push_back(options_.out / RowsFile(split));
      if (!parquet()) stats.files.push_back(RowsFile(split));
    }
    file->Line(row, columns_);
    return Status::Ok();
  }

  Status Close(DatasetStats& stats) override {
    for (auto& [split, file] : files_) {
      Status closed = file->Close();
      file.reset();
      KFORGE_RETURN_IF_ERROR(closed);
    }
    if (!parquet()) return Status::Ok();
    const nlohmann::json features = FeaturesDict(RowColumns(options_.format));
    for (auto& [split, file] : files_) {
      const fs::path rows = options_.out / RowsFile(split);
      const std::string data_file = DataFile(split, FileFormat::kParquet);
      created_.push_back(options_.out / data_file);  // checked free before the export began
      Status written = WriteParquet(options_.parquet_writer, features, rows, options_.out / data_file);
      std::error_code ec;
      fs::remove(rows, ec);
      KFORGE_RETURN_IF_ERROR(written);
      stats.files.push_back(data_file);
    }
    return Status::Ok();
  }

 private:
  bool parquet() const { return options_.file_format == FileFormat::kParquet; }
  /// The rows of a split: the data file itself, or the Parquet writer's input.
  std::string RowsFile(const std::string& split) const {
    return parquet() ? "." + split + ".rows.jsonl" : DataFile(split, FileFormat::kJsonl);
  }
  /// A split's data file: the format's name is its extension.
  static std::string DataFile(const std::string& split, FileFormat format) {
    return split + "." + std::string(FileFormatName(format));
  }

  void CloseAll() override { files_.clear(); }

  const ExportOptions& options_;
  const std::vector<Column> columns_;  ///< the order of a row's keys; empty: sorted (trajectory)
  std::map<std::string, std::unique_ptr<OutFile>> files_;
};

class KernelBenchSink : public Sink {
 public:
  explicit KernelBenchSink(const ExportOptions& options) : options_(options) {}

  Status Write(const dataset::Trajectory& record, DatasetStats& stats) override {
    std::optional<KernelBenchProblem> problem = KernelBenchProblemOf(record.task.id);
    if (!problem || !record.best)
      return Status::InvalidArgument(record.task.id + ": not a KernelBench solution");
    KFORGE_ASSIGN_OR_RETURN(const common::Task* task, FindTask(record.task.id));
    const dataset::Attempt& best = record.attempts[*record.best];
    if (!best.solution)
      return Status::InvalidArgument(record.task.id + ": the best attempt's solution does not read as a kforge solution");
    const common::Solution* solution = &*best.solution;
    std::string reference = record.task.reference_source;
    if (reference.empty()) {
      KFORGE_ASSIGN_OR_RETURN(reference, common::ReadFile(task->reference));
    }
    std::string label =
        "kforge record " + record.id + ": " + (best.correct ? "verified correct" : "not correct");
    if (best.speedup) {
      char speedup[32];
      std::snprintf(speedup, sizeof speedup, ", %.2fx the reference's speed", *best.speedup);
      label += speedup;
    }
    for (char& c : label)
      if (c == '\n' || c == '\r') c = ' ';
    KFORGE_ASSIGN_OR_RETURN(std::string program, RenderModelNew(*solution, *task, reference, label));

    int& sample = samples_[{problem->level, problem->number}];
    std::string name = KernelBenchFileName(*problem, sample++);
    std::error_code ec;
    if (fs::symlink_status(options_.out / name, ec).type() != fs::file_type::not_found)
      return Status::IoError((options_.out / name).string() +
                             ": exists and is not from a previous export; move it away or use another --out");
    KFORGE_RETURN_IF_ERROR(common::WriteFileAtomic(options_.out / name, program));
    created_.push_back(options_.out / name);
    stats.files.push_back(name);
    if (!index_) {
      KFORGE_ASSIGN_OR_RETURN(index_, OutFile::Open(options_.out / "index.jsonl"));
      created_.push_back(options_.out / "index.jsonl");
      stats.files.push_back("index.jsonl");
    }
    index_->Line({{"file", name},
                  {"task", record.task.id},
                  {"problem", "level" + std::to_string(problem->level) + "/" + problem->name + ".py"},
                  {"record", record.id},
                  {"correct", best.correct},
                  {"speedup", best.speedup ? json(*best.speedup) : json(nullptr)},
                  {"status", best.StatusName()}});
    stats.Add(record, "all");
    return Status::Ok();
  }

  Status Close(DatasetStats&) override {
    if (!index_) return Status::Ok();
    Status closed = index_->Close();
    index_.reset();
    return closed;
  }

 private:
  StatusOr<const common::Task*> FindTask(const std::string& id) {
    auto it = tasks_.find(id);
    if (it == tasks_.end()) it = tasks_.emplace(id, common::FindTask(options_.tasks_root, id)).first;
    if (!it->second.ok())
      return Status::InvalidArgument("task " + id +
                                     " not found under --tasks: " + it->second.status().message());
    return &*it->second;
  }

  void CloseAll() override { index_.reset(); }

  const ExportOptions& options_;
  std::map<std::string, StatusOr<common::Task>> tasks_;
  std::map<std::pair<int, int>, int> samples_;
  std::unique_ptr<OutFile> index_;
};

}  // namespace

void Sink::Abort() {
  CloseAll();
  for (const fs::path& path : created_) {
    std::error_code ec;
    fs::remove(path, ec);
  }
  created_.clear();
}

std::unique_ptr<Sink> MakeJsonlSink(const ExportOptions& options) {
  return std::make_unique<JsonlSink>(options);
}

std::unique_ptr<Sink> MakeKernelBenchSink(const ExportOptions& options) {
  return std::make_unique<KernelBenchSink>(options);
}

}  // namespace kforge::exporter::internal
