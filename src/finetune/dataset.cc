// The dataset check: a JSONL file streamed in chunks, each line a record, hashed on the way.
#include "finetune/dataset.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <string_view>

#include "kforge/common/hash.h"
#include "kforge/common/json_fields.h"

namespace kforge::finetune {
namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

bool Blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

/// A line's record, or its JSON error as "column C: reason" (the line number is the caller's).
StatusOr<nlohmann::json> ParseLine(std::string_view line) {
  static const std::string kWhere = "record";
  auto parsed = common::ParseJson(line, kWhere);
  if (parsed.ok()) return parsed;
  std::string message = parsed.status().message().substr(kWhere.size() + 2);
  if (message.rfind("line 1, ", 0) == 0) message = message.substr(8);
  return Status::InvalidArgument(message);
}

class Checker {
 public:
  Checker(std::string name, const DatasetCheckOptions& options) : name_(std::move(name)), options_(options) {}

  Status Line(std::string_view line, int64_t number) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Blank(line)) return Status::Ok();
    auto record = ParseLine(line);
    if (!record.ok()) return At(number, record.status().message());
    auto info = CheckRecord(*record);
    if (!info.ok()) return At(number, info.status().message());
    if (stats_.records == 0) {
      stats_.format = info->format;
      stats_.plain_text = info->plain_text;
      first_line_ = number;
    } else if (info->format != stats_.format || info->plain_text != stats_.plain_text) {
      return At(number, std::string("a ") + Kind(*info) + " record in a dataset of " + Kind(stats_) +
                            " records (line " + std::to_string(first_line_) + " set the format)");
    }
    Add(*info);
    return Status::Ok();
  }

  Status At(int64_t number, const std::string& what) const {
    return Status::InvalidArgument(name_ + ":" + std::to_string(number) + ": " + what);
  }

  DatasetStats& stats() { return stats_; }

 private:
  template <class T>
  static const char* Kind(const T& t) {
    if (t.format == DatasetFormat::kMessages) return "messages";
    return t.plain_text ? "plain-text prompt/completion" : "conversational prompt/completion";
  }

  void Add(const RecordInfo& info) {
    ++stats_.records;
    stats_.messages += info.messages;
    stats_.assistant_turns += info.assistant_turns;
    stats_.tool_calls += info.tool_calls;
    stats_.tool_results += info.tool_results;
    stats_.records_with_tools += info.has_tools;
    stats_.records_with_reasoning += info.has_reasoning;
    stats_.total_chars += info.chars;
    stats_.max_chars = std::max(stats_.max_chars, info.chars);
    int64_t tokens = ApproxTokens(info.chars);
    size_t bucket =
        std::lower_bound(kHistogramBounds.begin(), kHistogramBounds.end(), tokens) - kHistogramBounds.begin();
    ++stats_.histogram[bucket];
    if (options_.cut_at > 0 && tokens > options_.cut_at) ++stats_.cut;
  }

  std::string name_;
  DatasetCheckOptions options_;
  DatasetStats stats_;
  int64_t first_line_ = 0;
};

}  // namespace

const char* DatasetFormatName(DatasetFormat format) {
  return format == DatasetFormat::kMessages ? "messages" : "prompt_completion";
}

int64_t ApproxTokens(int64_t chars) { return (chars * 2 + 6) / 7; }

int64_t DatasetStats::LongerThan(int64_t tokens) const {
  int64_t n = histogram.back();
  for (size_t i = 0; i < kHistogramBounds.size(); ++i)
    if (kHistogramBounds[i] > tokens) n += histogram[i];
  return n;
}

nlohmann::json DatasetStats::ToJson() const {
  nlohmann::json buckets = nlohmann::json::array();
  for (size_t i = 0; i < histogram.size(); ++i) {
    if (histogram[i] == 0) continue;
    buckets.push_back(
        {{"max_tokens", i < kHistogramBounds.size() ? nlohmann::json(kHistogramBounds[i]) : nullptr},
         {"records", histogram[i]}});
  }
  return {{"format", DatasetFormatName(format)},
          {"plain_text", plain_text},
          {"bytes", bytes},
          {"records", records},
          {"messages", messages},
          {"assistant_turns", assistant_turns},
          {"tool_calls", tool_calls},
          {"tool_results", tool_results},
          {"records_with_tools", records_with_tools},
          {"records_with_reasoning", records_with_reasoning},
          {"chars", {{"total", total_chars}, {"max", max_chars}}},
          {"approx_tokens",
           {{"max", ApproxTokens(max_chars)}, {"mean", records ? ApproxTokens(total_chars) / records : 0}}},
          {"histogram", buckets}};
}

StatusOr<DatasetStats> CheckDataset(const std::filesystem::path& path, const DatasetCheckOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Status::InvalidArgument(path.string() + ": a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path.string() + ": cannot open");
  Checker checker(path.string(), options);
  common::Sha256 hash;
  std::string pending, chunk(kChunkBytes, '\0');
  int64_t number = 0;
  while (true) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const size_t got = static_cast<size_t>(in.gcount());
    if (got == 0) {
      if (in.bad()) return Status::IoError(path.string() + ": read failed");
      break;
    }
    hash.Update(std::string_view(chunk.data(), got));
    checker.stats().bytes += static_cast<int64_t>(got);
    pending.append(chunk.data(), got);
    size_t start = 0;
    for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1)
      KFORGE_RETURN_IF_ERROR(checker.Line(std::string_view(pending).substr(start, end - start), ++number));
    pending.erase(0, start);
    if (pending.size() > options.max_line_bytes)
      return checker.At(number + 1, "longer than " + std::to_string(options.max_line_bytes) + " bytes");
  }
  if (!pending.empty()) KFORGE_RETURN_IF_ERROR(checker.Line(pending, ++number));
  DatasetStats stats = std::move(checker.stats());
  if (stats.records == 0) return Status::InvalidArgument(path.string() + ": no records (an empty dataset)");
  stats.sha256 = hash.HexDigest();
  return stats;
}

}  // namespace kforge::finetune
