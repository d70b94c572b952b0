// Solution sources.
#include "kforge/verify/solution_reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "kforge/common/json_fields.h"

namespace kforge::verify {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Reads a whole file, or a pipe, of at most kMaxBytes.
StatusOr<std::string> ReadFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return Status::IoError(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) {
    text.append(buffer, n);
    if (text.size() > SolutionReader::kMaxBytes) {
      std::fclose(file);
      return Status::InvalidArgument(path + ": larger than 64 MiB");
    }
  }
  bool failed = std::ferror(file) != 0;
  int error = errno;
  std::fclose(file);
  if (failed) return Status::IoError(path + ": cannot read: " + std::strerror(error));
  return text;
}

/// Reads one line of at most kMaxBytes; an overlong line is consumed and reported.
std::optional<StatusOr<std::string>> ReadLine(std::FILE* file) {
  std::string line;
  int c;
  bool any = false;
  while ((c = std::fgetc(file)) != EOF) {
    any = true;
    if (c == '\n') break;
    if (line.size() < SolutionReader::kMaxBytes) line += static_cast<char>(c);
  }
  if (!any) return std::nullopt;
  if (line.size() >= SolutionReader::kMaxBytes)
    return StatusOr<std::string>(Status::InvalidArgument("line longer than 64 MiB"));
  return StatusOr<std::string>(std::move(line));
}

}  // namespace

Status SolutionReader::CheckSources(const std::vector<std::string>& sources) {
  for (const std::string& source : sources) {
    if (source == "-") continue;
    struct stat st {};
    if (::stat(source.c_str(), &st) != 0)
      return Status::NotFound(source + ": " + (errno == ENOENT ? "no such file" : std::strerror(errno)));
    if (S_ISDIR(st.st_mode)) return Status::InvalidArgument(source + ": a folder, not a solution file");
    if (!S_ISREG(st.st_mode)) continue;  // a pipe is read once, later: opening it now would lose it
    std::FILE* file = std::fopen(source.c_str(), "rb");
    if (file == nullptr) return Status::IoError(source + ": cannot open: " + std::strerror(errno));
    std::fclose(file);
  }
  return Status::Ok();
}

std::optional<SolutionInput> SolutionReader::Next() {
  while (std::optional<SolutionInput> input = NextOfAll())
    if (position_++ % static_cast<uint64_t>(shard_count_) == static_cast<uint64_t>(shard_index_)) return input;
  return std::nullopt;
}

std::optional<SolutionInput> SolutionReader::NextOfAll() {
  while (true) {
    if (lines_ != nullptr) {
      auto line = ReadLine(lines_);
      if (!line) {
        if (lines_ != stdin) std::fclose(lines_);
        lines_ = nullptr;
        continue;
      }
      ++line_number_;
      std::string label = lines_label_ + ":" + std::to_string(line_number_);
      if (!line->ok()) return SolutionInput{label, line->status().WithContext(label)};
      if ((*line)->find_first_not_of(" \t\r") == std::string::npos) continue;
      auto json = common::ParseJson(**line, label);
      if (!json.ok()) return SolutionInput{label, json.status()};
      // `kforge verify --emit passing` attaches the verdict that passed the solution; it is not part
      // of the solution.
      if (json->is_object() && json->contains("verdict")) {
        if (!(*json)["verdict"].is_object())
          return SolutionInput{label, Status::InvalidArgument(label + ": verdict: expected an object")};
        json->erase("verdict");
      }
      return SolutionInput{label, common::SolutionFromJson(*json, label)};
    }
    if (next_source_ >= sources_.size()) return std::nullopt;
    const std::string& source = sources_[next_source_++];
    if (source == "-" || EndsWith(source, ".jsonl")) {
      lines_ = source == "-" ? stdin : std::fopen(source.c_str(), "rb");
      lines_label_ = source;
      line_number_ = 0;
      if (lines_ == nullptr) return SolutionInput{source, Status::IoError(source + ": cannot open")};
      continue;
    }
    auto text = ReadFile(source);
    if (!text.ok()) return SolutionInput{source, text.status()};
    return SolutionInput{source, common::ParseSolutionText(*text, source)};
  }
}

}  // namespace kforge::verify
