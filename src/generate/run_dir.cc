// The run folder.
#include "generate/run_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "kforge/common/files.h"
#include "kforge/common/hash.h"
#include "kforge/common/json_fields.h"
#include "kforge/dataset/trajectory.h"

namespace kforge::generate {
namespace {

double CostOf(const nlohmann::json& record) {
  const nlohmann::json* usage = record.is_object() && record.contains("usage") ? &record["usage"] : nullptr;
  if (!usage || !usage->is_object() || !usage->contains("cost_usd") || !(*usage)["cost_usd"].is_number())
    return 0;
  return (*usage)["cost_usd"].get<double>();
}

bool EndedInLlmError(const nlohmann::json& record) {
  return record.is_object() && record.contains("outcome") && record["outcome"].is_object() &&
         dataset::kStopReasonNames.Parse(record["outcome"].value("stop", "")) == dataset::StopReason::kLlmError;
}

/// Sums the cost of every complete line of a JSON lines file; with `move_errors`, puts its llm_error
/// records in `moved` and the rest of the file in `kept`; else counts them in `errors`.
double ScanLog(const std::filesystem::path& path, bool move_errors, std::vector<std::string>& moved,
               std::string& kept, int& errors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return 0.0;
  double spent = 0;
  for (std::string line; std::getline(in, line);) {
    if (in.eof()) {  // a torn last line: the log cuts it when opened
      kept += line;
      break;
    }
    nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    spent += CostOf(record);
    if (EndedInLlmError(record)) {
      if (move_errors) {
        moved.push_back(line);
        continue;
      }
      ++errors;
    }
    kept += line + "\n";
  }
  return spent;
}

}  // namespace

StatusOr<common::FolderLock> RunDir::Lock(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    return Status::InvalidArgument("--out " + dir.string() + ": not a folder");
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError("--out " + dir.string() + ": " + ec.message());
  StatusOr<common::FolderLock> lock = common::FolderLock::Acquire(dir / "run.lock");
  if (lock.status().code() == Status::Code::kResourceExhausted)
    return Status::ResourceExhausted("--out " + dir.string() + " is in use: " + lock.status().message() +
                                     " (one generate per run folder; wait for it or use another --out)");
  return lock;
}

StatusOr<std::unique_ptr<RunDir>> RunDir::Open(const std::filesystem::path& dir, common::FolderLock lock,
                                               const nlohmann::json& config, const nlohmann::json& about,
                                               bool force, bool retry_errors) {
  std::error_code ec;
  std::unique_ptr<RunDir> run(new RunDir());
  run->lock_ = std::move(lock);
  run->run_id_ = common::Sha256Hex(config.dump()).substr(0, 12);
  const std::filesystem::path run_json = dir / "run.json";
  // run.json is written before the first record: a log without it is some other program's file.
  if (!std::filesystem::exists(run_json, ec) && std::filesystem::exists(dir / "trajectories.jsonl", ec) &&
      std::filesystem::file_size(dir / "trajectories.jsonl", ec) > 0)
    return Status::InvalidArgument(dir.string() +
                                   " holds a trajectories.jsonl but no run.json: not a kforge run "
                                   "folder, and not appended to; use another --out");
  if (std::filesystem::exists(run_json, ec)) {
    auto text = common::ReadFile(run_json);
    if (!text.ok()) return text.status();
    auto old = common::ParseJson(*text, run_json.string());
    if (!old.ok()) return old.status();
    if (!old->is_object() || !old->contains("config"))
      return Status::InvalidArgument(run_json.string() + ": not a kforge run (no \"config\")");
    if ((*old)["config"] != config && !force) {
      std::string changed;
      for (const auto& [key, value] : config.items())
        if (!(*old)["config"].contains(key) || (*old)["config"][key] != value)
          changed += (changed.empty() ? "" : ", ") + key;
      for (const auto& [key, value] : (*old)["config"].items())
        if (!config.contains(key)) changed += (changed.empty() ? "" : ", ") + key;
      return Status::InvalidArgument(dir.string() + " holds a run with another configuration (" + changed +
                                     " changed); use another --out, or --force to start a new run id there");
    }
  }
  nlohmann::json record = {
      {"schema", "kforge.run/1"}, {"run_id", run->run_id_}, {"config", config}, {"about", about}};
  KFORGE_RETURN_IF_ERROR(common::WriteFileAtomic(run_json, record.dump(2) + "\n"));
  const std::filesystem::path unfinished = dir / "unfinished.jsonl";
  run->unfinished_fd_ = ::open(unfinished.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (run->unfinished_fd_ < 0) return Status::IoError(unfinished.string() + ": " + std::strerror(errno));
  std::vector<std::string> moved, none;
  std::string kept, unused;
  int unused_errors = 0;
  double spent = ScanLog(dir / "trajectories.jsonl", retry_errors, moved, kept, run->kept_errors_);
  for (const std::string& line : moved)  // copied before the log is rewritten: nothing is lost
    KFORGE_RETURN_IF_ERROR(run->AppendUnfinished(nlohmann::json::parse(line, nullptr, false)));
  if (!moved.empty())
    KFORGE_RETURN_IF_ERROR(common::WriteFileAtomic(dir / "trajectories.jsonl", kept).WithContext("--retry-errors"));
  double spent_unfinished = ScanLog(unfinished, false, none, unused, unused_errors);
  // Moved records are in both files now; count them once.
  for (const std::string& line : moved) spent -= CostOf(nlohmann::json::parse(line, nullptr, false));
  run->spent_usd_ = spent + spent_unfinished;
  run->moved_errors_ = static_cast<int>(moved.size());
  KFORGE_ASSIGN_OR_RETURN(run->trajectories_, dataset::AppendLog::Open(dir / "trajectories.jsonl"));
  int log_fd = ::open((dir / "generate.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (log_fd >= 0) run->log_ = ::fdopen(log_fd, "a");
  if (!run->log_) {
    if (log_fd >= 0) ::close(log_fd);
    return Status::IoError((dir / "generate.log").string() + ": " + std::strerror(errno));
  }
  return run;
}

RunDir::~RunDir() {
  if (log_) std::fclose(log_);
  if (unfinished_fd_ >= 0) ::close(unfinished_fd_);
}

Status RunDir::AppendUnfinished(const nlohmann::json& record) {
  const std::string line = common::JsonText(record) + "\n";
  std::lock_guard<std::mutex> lock(log_mu_);
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(unfinished_fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError("unfinished.jsonl: " + std::string(std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

void RunDir::Log(const std::string& line) {
  std::lock_guard<std::mutex> lock(log_mu_);
  std::fputs(line.c_str(), log_);
  std::fputc('\n', log_);
  std::fflush(log_);
}

}  // namespace kforge::generate
