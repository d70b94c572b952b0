// JSON lines files: a streaming reader (bounded memory whatever the file's size) and an append-only
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

#include "kforge/common/status.h"

namespace kforge::dataset {

/// Longest line read or written: 64 MiB.
inline constexpr size_t kMaxLineBytes = size_t{64} << 20;

/// Reads a JSON lines file one line at a time. Blank lines are skipped.
class JsonlReader {
 public:
  struct Line {
    int number = 0;       ///< 1-based
    uint64_t offset = 0;  ///< byte offset of the line's first byte in the file
    StatusOr<nlohmann::json> value = Status::Internal("unset");
    bool torn = false;  ///< the file's last line, with no newline after it
    std::string text;   ///< the line itself; set by NextText() only
  };

  /// NotFound or IoError naming the file.
  static StatusOr<std::unique_ptr<JsonlReader>> Open(const std::filesystem::path& path);
  ~JsonlReader();

  /// The next line, or nullopt at the end. A line that is not JSON is a ParseError naming
  /// `path:line`.
  std::optional<Line> Next();

  /// Next() without parsing, for a pass that reads a few fields with its own SAX handler: the line
  /// is in `text`, and `value` holds null, or the error Next() gives for a line too long or a failed
  /// read.
  std::optional<Line> NextText();

  /// Continues reading at byte `offset`, which must be the start of line `number` (a Line's
  /// `offset` and `number` from an earlier pass over the same file). IoError when the file cannot
  /// seek (stdin).
  Status Seek(uint64_t offset, int number);

 private:
  JsonlReader(std::FILE* file, std::string label) : file_(file), label_(std::move(label)) {}
  std::optional<Line> Read(bool parse);
  std::FILE* file_;
  std::string label_;
  int number_ = 0;
  uint64_t offset_ = 0;  ///< of the next byte to read
};

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
