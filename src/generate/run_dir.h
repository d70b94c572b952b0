// The run folder of generate: run.json (the configuration, its hash as the run id, prompt hashes and
// versions), trajectories.jsonl (append-only), unfinished.jsonl (episodes cut short or ended on a
// transient teacher error, kept for their cost and for diagnosis; a rerun runs them again) and
// generate.log. A rerun with the same configuration resumes; a changed one is refused unless forced.
// A run folder has one writer: run.lock is held (flock) for as long as a generate runs in it.
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/common/files.h"
#include "kforge/common/status.h"
#include "kforge/dataset/jsonl.h"

namespace kforge::generate {

class RunDir {
 public:
  /// Creates `dir` when missing and takes its lock (run.lock). ResourceExhausted naming the holder's
  /// pid when another process writes there.
  static StatusOr<common::FolderLock> Lock(const std::filesystem::path& dir);

  /// Checks or writes run.json in `dir` (locked by `lock`) for `config` (what decides the records;
  /// its hash is the run id) plus `about` (versions, time: not compared), opens the log files
  /// (never through a link). With `retry_errors`, records of trajectories.jsonl that ended in
  /// llm_error move to unfinished.jsonl first (the log is rewritten atomically), so that their
  /// episodes run again.
  static StatusOr<std::unique_ptr<RunDir>> Open(const std::filesystem::path& dir, common::FolderLock lock,
                                                const nlohmann::json& config, const nlohmann::json& about,
                                                bool force, bool retry_errors = false);
  ~RunDir();

  const std::string& run_id() const { return run_id_; }
  dataset::AppendLog& trajectories() { return *trajectories_; }
  /// Appends one line to generate.log (thread-safe).
  void Log(const std::string& line);
  /// Appends an episode that is not final to unfinished.jsonl, one write (thread-safe).
  Status AppendUnfinished(const nlohmann::json& record);
  /// USD spent by the records already in trajectories.jsonl and unfinished.jsonl when opened.
  double spent_usd() const { return spent_usd_; }
  /// Records moved out of trajectories.jsonl by `retry_errors`.
  int moved_errors() const { return moved_errors_; }
  /// llm_error records of trajectories.jsonl that stay final (without `retry_errors`).
  int kept_errors() const { return kept_errors_; }

 private:
  RunDir() = default;
  common::FolderLock lock_;
  std::string run_id_;
  std::unique_ptr<dataset::AppendLog> trajectories_;
  std::mutex log_mu_;
  std::FILE* log_ = nullptr;
  int unfinished_fd_ = -1;
  double spent_usd_ = 0;
  int moved_errors_ = 0;
  int kept_errors_ = 0;
};

}  // namespace kforge::generate
