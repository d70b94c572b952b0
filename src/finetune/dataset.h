// Checking a fine-tuning dataset before a trainer sees it: every line of a JSONL file must be a
// TRL conversational record (`messages`, optional `tools`) or a prompt/completion pair, all lines
// in one format. The file is streamed (memory bounded by the longest line) and hashed on the way.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"

namespace kforge::finetune {

enum class DatasetFormat {
  kMessages,          ///< {"messages": [...], "tools": [...]?}
  kPromptCompletion,  ///< {"prompt": [...] | "...", "completion": [...] | "...", "tools": [...]?}
};

/// "messages" or "prompt_completion".
const char* DatasetFormatName(DatasetFormat format);

/// Approximate tokens of a record: its text characters (content, reasoning, tool calls, tools) / 3.5.
int64_t ApproxTokens(int64_t chars);

/// Records by approximate tokens: bucket i counts records with at most kHistogramBounds[i] tokens
/// (and more than the bound before); the last bucket counts the longer ones.
inline constexpr std::array<int64_t, 11> kHistogramBounds = {128,  256,   512,   1024,  2048,  4096,
                                                             8192, 16384, 32768, 65536, 131072};

/// What the check found in a whole file.
struct DatasetStats {
  /// The format of every record (the first one sets it).
  DatasetFormat format = DatasetFormat::kMessages;
  /// prompt/completion records whose prompt and completion are plain strings.
  bool plain_text = false;
  /// Non-blank lines, and the file's size.
  int64_t records = 0;
  int64_t bytes = 0;
  std::string sha256;  ///< of the file's bytes, lowercase hex
  /// Totals over the records (prompt and completion together for prompt/completion records).
  int64_t messages = 0;
  int64_t assistant_turns = 0;
  int64_t tool_calls = 0;
  int64_t tool_results = 0;
  int64_t records_with_tools = 0;
  int64_t records_with_reasoning = 0;
  /// Characters (Unicode code points) of the records' text: content, reasoning, tool-call names and
  /// arguments, tools.
  int64_t total_chars = 0;
  int64_t max_chars = 0;
  /// Records per approximate-token bucket (kHistogramBounds).
  std::array<int64_t, kHistogramBounds.size() + 1> histogram = {};
  /// Records longer than `cut_at` approximate tokens (DatasetCheckOptions::cut_at; 0: not counted).
  int64_t cut = 0;

  /// Records longer than `tokens` approximate tokens, from the histogram: exact when `tokens` is one
  /// of kHistogramBounds, else counting the whole bucket that holds `tokens` (an upper bound).
  int64_t LongerThan(int64_t tokens) const;
  /// The record counts, lengths and histogram as the manifest's `dataset` object (path and hash
  /// are added by the caller).
  nlohmann::json ToJson() const;
};

struct DatasetCheckOptions {
  /// Count the records over this many approximate tokens into DatasetStats::cut. 0 (default): none.
  int64_t cut_at = 0;
  /// Longest line accepted, in bytes. Default 64 MiB.
  size_t max_line_bytes = size_t{64} << 20;
};

/// Checks every line of `path` (blank lines are skipped). The first bad line stops the check with
/// InvalidArgument `PATH:LINE: what is wrong` (a JSON path inside the record where it helps), on
/// one line; a file that cannot be read is NotFound or IoError; a file without records is
/// InvalidArgument.
StatusOr<DatasetStats> CheckDataset(const std::filesystem::path& path,
                                    const DatasetCheckOptions& options = {});

/// What one record holds, for the totals (fields as in DatasetStats).
struct RecordInfo {
  DatasetFormat format = DatasetFormat::kMessages;
  bool plain_text = false;
  int64_t messages = 0;
  int64_t assistant_turns = 0;
  int64_t tool_calls = 0;
  int64_t tool_results = 0;
  bool has_tools = false;
  bool has_reasoning = false;
  int64_t chars = 0;
};

/// Checks one parsed record; errors name the JSON path inside it ("messages[2].tool_call_id: ...").
StatusOr<RecordInfo> CheckRecord(const nlohmann::json& record);

}  // namespace kforge::finetune
