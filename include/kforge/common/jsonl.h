// JSON lines files read one line at a time, in bounded memory whatever the file's size: the one
// reader of every module (trajectories, verdicts, cassettes, batch state, the append-only log's index).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kforge/common/json_fields.h"
#include "kforge/common/status.h"

namespace kforge::common {

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
  /// `path:line`. A line longer than kMaxLineBytes is an IoError, and the last line read: an endless
  /// input (/dev/zero) is never read to its end.
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
  bool stopped_ = false;  ///< a line past the cap was read: nothing after it is
};

/// The limits a line is parsed under: JsonLimits with 2^22 values.
JsonLimits JsonLineLimits();

/// Whether a line holds nothing but spaces, tabs and a carriage return.
bool IsBlankLine(std::string_view line);

/// Reads one line (without its newline) into `line`; false at the end of the file. `complete` says
/// whether a newline ended it, `consumed` counts the bytes read, newline included. Reading stops at
/// a line's kMaxLineBytes + 1st byte, with `too_long` set: the rest of that line is left unread. JsonlReader reads with it; so does a
/// reader that needs every byte's place (dataset::AppendLog's index).
bool ReadLine(std::FILE* file, std::string& line, bool& complete, bool& too_long, uint64_t& consumed);

}  // namespace kforge::common
