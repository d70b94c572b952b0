// JSON lines files: the streaming reader (common::JsonlReader, named here too) and an append-only
// log that survives kill -9 (each record is one write, flushed and fsynced; a torn last line left
// by a crash is found and cut off when the log is opened again).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kforge/common/jsonl.h"
#include "kforge/common/status.h"

namespace kforge::dataset {

using common::JsonlReader;
using common::kMaxLineBytes;

/// An append-only JSON lines log of records with a string `id`, opened for resuming.
class AppendLog {
 public:
  /// Opens or creates `path`. Records already in it are indexed by id; a torn last line (a crash
  /// during a write) is truncated away and counted in torn_lines(). A complete line that is not JSON
  /// or has no id is an error naming the line: the file is not this log's.
  static StatusOr<std::unique_ptr<AppendLog>> Open(const std::filesystem::path& path);
  ~AppendLog();

  bool Contains(const std::string& id) const;
  size_t size() const;
  int torn_lines() const { return torn_lines_; }

  /// Appends one record (its `id` must be new) as one line, flushed and fsynced before returning.
  /// Thread-safe.
  Status Append(const nlohmann::json& record);

 private:
  AppendLog(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::filesystem::path path_;
  mutable std::mutex mu_;
  std::set<std::string> ids_;
  int torn_lines_ = 0;
};

}  // namespace kforge::dataset
