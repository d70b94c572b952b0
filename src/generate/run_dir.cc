// The run folder.
#include "generate/run_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kforge/common/files.h"
#include "kforge/common/hash.h"
#include "kforge/common/json_fields.h"

namespace kforge::generate {

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
                                               bool force) {
  std::error_code ec;
  std::unique_ptr<RunDir> run(new RunDir());
  run->lock_ = std::move(lock);
  run->run_id_ = common::Sha256Hex(config.dump()).substr(0, 12);
  const std::filesystem::path run_json = dir / "run.json";
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
}

void RunDir::Log(const std::string& line) {
  std::lock_guard<std::mutex> lock(log_mu_);
  std::fputs(line.c_str(), log_);
  std::fputc('\n', log_);
  std::fflush(log_);
}

}  // namespace kforge::generate
