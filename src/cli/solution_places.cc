// Where a compile error or a plan error sits in the solution file as given: the line of a JSON file
// that holds the "source" string (and the column where the source line starts inside it), the line
// of a model reply below its ```cuda fence, the line of a .jsonl record.
#include <cctype>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/ci_report.h"
#include "kforge/common/files.h"

namespace kforge::cli {
namespace {

/// One step of a JSON path: a key, or an index when `index` >= 0.
struct Step {
  std::string key;
  int index = -1;
};

/// "launches[0].grid[1]" -> {launches, 0, grid, 1}; nullopt when it is not such a path.
std::optional<std::vector<Step>> ParsePath(std::string_view path) {
  std::vector<Step> steps;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '[') {
      size_t close = path.find(']', i);
      if (close == std::string_view::npos || close == i + 1 || close - i > 7) return std::nullopt;
      int index = 0;
      for (size_t k = i + 1; k < close; ++k) {
        if (!std::isdigit(static_cast<unsigned char>(path[k]))) return std::nullopt;
        index = index * 10 + (path[k] - '0');
      }
      steps.push_back({"", index});
      i = close + 1;
      continue;
    }
    if (path[i] == '.') {
      if (steps.empty()) return std::nullopt;
      ++i;
    }
    size_t end = i;
    while (end < path.size() && (std::isalnum(static_cast<unsigned char>(path[end])) || path[end] == '_'))
      ++end;
    if (end == i) return std::nullopt;
    steps.push_back({std::string(path.substr(i, end - i)), -1});
    i = end;
  }
  if (steps.empty()) return std::nullopt;
  return steps;
}

/// Finds the offset of the value at a path in JSON text without building the document: a scan
/// that stops at the target, at malformed text, or below 64 levels (hostile input).
class JsonLocator {
 public:
  JsonLocator(std::string_view text, std::vector<Step> target) : text_(text), target_(std::move(target)) {}

  std::optional<size_t> Find() {
    Value(0, true);
    return found_;
  }

 private:
  void Space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool String(std::string* out) {
    if (pos_ >= text_.size() || text_[pos_] != '"') return false;
    for (++pos_; pos_ < text_.size(); ++pos_) {
      char c = text_[pos_];
      if (c == '\\') {
        ++pos_;
        if (out) out->push_back('\\');
        continue;
      }
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (out) out->push_back(c);
    }
    return false;
  }
  /// `matched` levels of the target agree with the path so far; `on_path` says all levels did.
  bool Value(size_t matched, bool on_path) {
    if (found_ || matched > 64) return false;
    Space();
    if (on_path && matched == target_.size()) {
      found_ = pos_;
      return false;
    }
    if (pos_ >= text_.size()) return false;
    char c = text_[pos_];
    if (c == '{') {
      ++pos_;
      Space();
      if (pos_ < text_.size() && text_[pos_] == '}') return ++pos_, true;
      while (true) {
        Space();
        std::string key;
        if (!String(&key)) return false;
        Space();
        if (pos_ >= text_.size() || text_[pos_] != ':') return false;
        ++pos_;
        bool next =
            on_path && matched < target_.size() && target_[matched].index < 0 && target_[matched].key == key;
        if (!Value(matched + 1, next)) return false;
        Space();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        return pos_ < text_.size() && text_[pos_++] == '}';
      }
    }
    if (c == '[') {
      ++pos_;
      Space();
      if (pos_ < text_.size() && text_[pos_] == ']') return ++pos_, true;
      for (int index = 0;; ++index) {
        bool next = on_path && matched < target_.size() && target_[matched].index == index;
        if (!Value(matched + 1, next)) return false;
        Space();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        return pos_ < text_.size() && text_[pos_++] == ']';
      }
    }
    if (c == '"') return String(nullptr);
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != ']' && text_[pos_] != '}' &&
           !std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
    return true;
  }

  std::string_view text_;
  std::vector<Step> target_;
  size_t pos_ = 0;
  std::optional<size_t> found_;
};

/// 1-based line and column of byte `offset` of `text`.
std::pair<int, int> LineAndColumn(std::string_view text, size_t offset) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(offset - line_start) + 1};
}

/// The solution file a label names, its text, and the line the text starts at: the whole file, or
/// line N of "path.jsonl:N". Nullopt for stdin and unreadable files.
struct SolutionText {
  std::string file;
  std::string text;
  int first_line = 1;
};

std::optional<SolutionText> ReadSolutionText(const std::string& label) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (label.empty() || label.rfind("-:", 0) == 0) return std::nullopt;
  if (fs::is_regular_file(label, ec)) {
    auto text = common::ReadFile(label);
    if (!text.ok() || text->size() > (64u << 20)) return std::nullopt;
    return SolutionText{label, std::move(*text), 1};
  }
  size_t colon = label.rfind(':');
  if (colon == std::string::npos || colon + 1 >= label.size()) return std::nullopt;
  std::string file = label.substr(0, colon);
  int line = 0;
  for (size_t i = colon + 1; i < label.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(label[i])) || line > 100000000) return std::nullopt;
    line = line * 10 + (label[i] - '0');
  }
  if (line < 1 || !fs::is_regular_file(file, ec)) return std::nullopt;
  auto text = common::ReadFile(file);
  if (!text.ok()) return std::nullopt;
  size_t start = 0;
  for (int n = 1; n < line; ++n) {
    start = text->find('\n', start);
    if (start == std::string::npos) return std::nullopt;
    ++start;
  }
  size_t end = text->find('\n', start);
  return SolutionText{file, text->substr(start, end == std::string::npos ? std::string::npos : end - start),
                      line};
}

bool IsJsonObject(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (text.substr(0, 3) == "\xEF\xBB\xBF") first = text.find_first_not_of(" \t\r\n", 3);
  return first != std::string_view::npos && text[first] == '{';
}

/// The body's offset of the reply's first fenced block whose language is one of `langs`.
std::optional<size_t> FenceBody(std::string_view text, bool cuda) {
  for (size_t open = text.find("```"); open != std::string_view::npos; open = text.find("```", open + 3)) {
    if (open != 0 && text[open - 1] != '\n') continue;
    size_t line_end = text.find('\n', open);
    if (line_end == std::string_view::npos) return std::nullopt;
    std::string lang(text.substr(open + 3, line_end - open - 3));
    while (!lang.empty() && std::isspace(static_cast<unsigned char>(lang.back()))) lang.pop_back();
    for (char& c : lang) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool is_cuda = lang == "cuda" || lang == "cu" || lang == "cpp" || lang == "c++" || lang == "cuda-c++";
    if (cuda ? is_cuda : lang == "json") return line_end + 1;
    size_t close = text.find("\n```", line_end);
    if (close == std::string_view::npos) return std::nullopt;
    open = close + 1;
  }
  return std::nullopt;
}

SourcePlace PlaceAt(const SolutionText& solution, size_t offset) {
  auto [line, col] = LineAndColumn(solution.text, offset);
  return SourcePlace{solution.file, solution.first_line + line - 1, col};
}

}  // namespace

std::optional<SourcePlace> PlaceOfSourceLine(const std::string& solution_label, int source_line) {
  if (source_line < 1) return std::nullopt;
  std::optional<SolutionText> solution = ReadSolutionText(solution_label);
  if (!solution) return std::nullopt;
  std::string_view text = solution->text;
  if (!IsJsonObject(text)) {
    std::optional<size_t> body = FenceBody(text, true);
    if (!body) return std::nullopt;
    size_t at = *body;
    for (int n = 1; n < source_line; ++n) {
      at = text.find('\n', at);
      if (at == std::string_view::npos) return std::nullopt;
      ++at;
    }
    return PlaceAt(*solution, at);
  }
  std::optional<size_t> quote = JsonLocator(text, {{"source", -1}}).Find();
  if (!quote || *quote >= text.size() || text[*quote] != '"') return std::nullopt;
  size_t at = *quote + 1;
  for (int n = 1; n < source_line; ++n) {
    while (at < text.size() && text[at] != '"' &&
           !(text[at] == '\\' && at + 1 < text.size() && text[at + 1] == 'n'))
      at += text[at] == '\\' ? 2 : 1;
    if (at >= text.size() || text[at] == '"') return std::nullopt;
    at += 2;
  }
  return PlaceAt(*solution, at);
}

std::optional<SourcePlace> PlaceOfField(const std::string& solution_label, const std::string& path) {
  std::optional<std::vector<Step>> steps = ParsePath(path);
  if (!steps) return std::nullopt;
  std::optional<SolutionText> solution = ReadSolutionText(solution_label);
  if (!solution) return std::nullopt;
  std::string_view text = solution->text;
  size_t base = 0;
  if (!IsJsonObject(text)) {  // a model reply: the plan is its ```json block
    std::optional<size_t> body = FenceBody(text, false);
    if (!body) return std::nullopt;
    base = *body;
    text.remove_prefix(base);
  }
  std::optional<size_t> at = JsonLocator(text, std::move(*steps)).Find();
  if (!at) return std::nullopt;
  return PlaceAt(*solution, base + *at);
}

}  // namespace kforge::cli
