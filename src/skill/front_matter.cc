// The strict front matter reader (skill/front_matter.h).
#include "skill/front_matter.h"

#include <cctype>

#include "kforge/common/text.h"

namespace kforge::skill {
namespace {

/// Keys are names: a longer one is not a field of any skill, and would make errors long.
constexpr size_t kMaxKeyBytes = 64;

struct Line {
  std::string_view text;
  int number;
};

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  int number = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({line, number++});
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

bool IsBlank(std::string_view s) { return s.find_first_not_of(" \t") == std::string_view::npos; }

std::string_view Trim(std::string_view s) {
  size_t first = s.find_first_not_of(' ');
  if (first == std::string_view::npos) return {};
  size_t last = s.find_last_not_of(' ');
  return s.substr(first, last - first + 1);
}

bool IsKeyChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

/// A scalar value as written after `key:` (already trimmed, not empty).
StatusOr<std::string> ParseScalar(std::string_view raw, const std::string& at) {
  const char first = raw.front();
  if (first == '"' || first == '\'') {
    std::string value;
    size_t i = 1;
    bool closed = false;
    for (; i < raw.size(); ++i) {
      char c = raw[i];
      if (first == '\'' && c == '\'') {
        if (i + 1 < raw.size() && raw[i + 1] == '\'') {
          value += '\'';
          ++i;
          continue;
        }
        closed = true;
        break;
      }
      if (first == '"' && c == '"') {
        closed = true;
        break;
      }
      if (first == '"' && c == '\\') {
        if (i + 1 >= raw.size()) break;
        char e = raw[++i];
        switch (e) {
          case '"':
            value += '"';
            break;
          case '\\':
            value += '\\';
            break;
          case '/':
            value += '/';
            break;
          case 'n':
            value += '\n';
            break;
          case 't':
            value += '\t';
            break;
          default:
            return Status::InvalidArgument(at + ": the escape \\" + std::string(1, e) +
                                           " is not read (only \\\" \\\\ \\/ \\n \\t)");
        }
        continue;
      }
      value += c;
    }
    if (!closed)
      return Status::InvalidArgument(at +
                                     ": the quoted value is not closed on its line (a value is one line)");
    std::string_view rest = Trim(raw.substr(i + 1));
    if (!rest.empty() && rest.front() != '#')
      return Status::InvalidArgument(at + ": text after the closing quote: " + common::Quote(rest));
    return value;
  }
  static constexpr std::string_view kRefusedStarts = "|>[]{}&*!%@`-?";
  if (kRefusedStarts.find(first) != std::string_view::npos &&
      !(first == '-' && raw.size() > 1 && raw[1] != ' ')) {
    const char* what = first == '|' || first == '>'   ? "a block scalar"
                       : first == '[' || first == '{' ? "a flow collection"
                       : first == '-'                 ? "a sequence"
                       : first == '&' || first == '*' ? "an anchor or alias"
                       : first == '!'                 ? "a tag"
                                                      : "a reserved indicator";
    return Status::InvalidArgument(at + ": " + what + " (" + common::Quote(raw.substr(0, 1)) +
                                   ") is not read here; write the value on one line, in quotes if need be");
  }
  std::string_view value = raw;
  if (size_t comment = value.find(" #"); comment != std::string_view::npos)
    value = Trim(value.substr(0, comment));
  if (value.find(": ") != std::string_view::npos || value.back() == ':')
    return Status::InvalidArgument(at + ": a plain value may not hold \": \"; put it in quotes");
  return std::string(value);
}

/// An indented `key: value` line of the map `open_map` (one level of nesting; the first entry sets
/// `map_indent`).
Status AddMapEntry(FrontMatterField& open_map, size_t indent, size_t& map_indent, std::string key,
                   std::string_view raw, const std::string& at) {
  if (map_indent == 0) map_indent = indent;
  if (indent != map_indent)
    return Status::InvalidArgument(at + ": indented by " + std::to_string(indent) + " spaces, the map above by " +
                                   std::to_string(map_indent) + " (one level of nesting is read)");
  if (raw.empty())
    return Status::InvalidArgument(at + ": " + open_map.key + "." + key +
                                   " has no value (a map's values are strings; one level of nesting)");
  for (const auto& [name, value] : open_map.map)
    if (name == key) return Status::InvalidArgument(at + ": " + open_map.key + "." + key + " is given twice");
  KFORGE_ASSIGN_OR_RETURN(std::string value, ParseScalar(raw, at + ": " + open_map.key + "." + key));
  open_map.is_map = true;
  open_map.map.emplace_back(std::move(key), std::move(value));
  return Status::Ok();
}

}  // namespace

StatusOr<FrontMatter> ParseFrontMatter(std::string_view text, const std::string& where) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF")
    return Status::InvalidArgument(where + ":1: starts with a byte order mark; save it as plain UTF-8");
  if (!common::IsValidUtf8(text)) return Status::InvalidArgument(where + ": not valid UTF-8");
  std::vector<Line> lines = SplitLines(text);
  if (lines.empty() || lines[0].text != "---")
    return Status::InvalidArgument(where + ":1: the front matter must open the file with a \"---\" line");
  FrontMatter fm;
  FrontMatterField* open_map = nullptr;  // the field whose indented lines may follow
  size_t map_indent = 0;
  size_t i = 1;
  for (; i < lines.size(); ++i) {
    const Line& line = lines[i];
    const std::string at = where + ":" + std::to_string(line.number);
    if (line.text == "---") break;
    if (IsBlank(line.text)) continue;
    size_t indent = line.text.find_first_not_of(' ');
    if (line.text[indent] == '\t' || line.text.substr(0, indent + 1).find('\t') != std::string_view::npos)
      return Status::InvalidArgument(at + ": a tab in the indentation (YAML indents with spaces)");
    if (line.text[indent] == '#') continue;
    if (indent > 0 && open_map == nullptr)
      return Status::InvalidArgument(at +
                                     ": an indented line that belongs to no map (a value continued on "
                                     "the next line? write it on one line)");
    std::string_view content = line.text.substr(indent);
    size_t colon = 0;
    while (colon < content.size() && IsKeyChar(content[colon])) ++colon;
    if (colon == 0 || colon >= content.size() || content[colon] != ':' ||
        (colon + 1 < content.size() && content[colon + 1] != ' '))
      return Status::InvalidArgument(at + ": expected \"key: value\", got " + common::Quote(content));
    if (colon > kMaxKeyBytes)
      return Status::InvalidArgument(at + ": a key longer than " + std::to_string(kMaxKeyBytes) +
                                     " characters");
    std::string key(content.substr(0, colon));
    std::string_view raw = Trim(content.substr(colon + 1));
    if (!raw.empty() && raw.front() == '#') raw = {};
    if (indent > 0) {
      KFORGE_RETURN_IF_ERROR(AddMapEntry(*open_map, indent, map_indent, std::move(key), raw, at));
      continue;
    }
    if (open_map != nullptr && !open_map->is_map)
      return Status::InvalidArgument(where + ":" + std::to_string(open_map->line) + ": " + open_map->key +
                                     " has no value");
    open_map = nullptr;
    for (const FrontMatterField& f : fm.fields)
      if (f.key == key)
        return Status::InvalidArgument(at + ": " + key + " is given twice (first on line " +
                                       std::to_string(f.line) + ")");
    FrontMatterField field;
    field.key = key;
    field.line = line.number;
    if (!raw.empty()) {
      KFORGE_ASSIGN_OR_RETURN(field.scalar, ParseScalar(raw, at + ": " + key));
    }
    fm.fields.push_back(std::move(field));
    if (raw.empty()) {
      open_map = &fm.fields.back();
      map_indent = 0;
    }
  }
  if (i >= lines.size())
    return Status::InvalidArgument(where + ": the front matter is not closed (no second \"---\" line)");
  if (open_map != nullptr && !open_map->is_map)
    return Status::InvalidArgument(where + ":" + std::to_string(open_map->line) + ": " + open_map->key +
                                   " has no value");
  fm.body_line = lines[i].number + 1;
  size_t offset = 0;
  for (size_t k = 0; k <= i; ++k) offset = text.find('\n', offset) + 1;
  fm.body = offset == 0 || offset > text.size() ? std::string() : std::string(text.substr(offset));
  return fm;
}

}  // namespace kforge::skill
