// Solution sources.
#include "kforge/verify/solution_reader.h"

#include <fstream>
#include <sstream>

#include "kforge/common/json_fields.h"

namespace kforge::verify {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot open");
  in.seekg(0, std::ios::end);
  auto size = static_cast<size_t>(in.tellg());
  if (size > SolutionReader::kMaxBytes) return Status::InvalidArgument(path + ": larger than 64 MiB");
  in.seekg(0);
  std::string text(size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
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

std::optional<SolutionInput> SolutionReader::Next() {
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
