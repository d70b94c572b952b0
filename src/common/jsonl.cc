// The JSON lines reader.
#include "kforge/common/jsonl.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace kforge::common {

JsonLimits JsonLineLimits() {
  JsonLimits limits;
  limits.max_values = size_t{1} << 22;
  return limits;
}

bool IsBlankLine(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

bool ReadLine(std::FILE* file, std::string& line, bool& complete, bool& too_long, uint64_t& consumed) {
  line.clear();
  complete = false;
  too_long = false;
  consumed = 0;
  int c;
  bool any = false;
  while ((c = getc_unlocked(file)) != EOF) {
    any = true;
    ++consumed;
    if (c == '\n') {
      complete = true;
      return true;
    }
    if (line.size() == kMaxLineBytes) {  // an endless input (/dev/zero) never ends its line: stop here
      too_long = true;
      return true;
    }
    line.push_back(static_cast<char>(c));
  }
  return any;
}

StatusOr<std::unique_ptr<JsonlReader>> JsonlReader::Open(const std::filesystem::path& path) {
  std::FILE* file = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!file) return Status::NotFound(path.string() + ": " + std::strerror(errno));
  struct stat st;
  if (fstat(fileno(file), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::fclose(file);
    return Status::InvalidArgument(path.string() + ": a folder, not a JSON lines file");
  }
  return std::unique_ptr<JsonlReader>(new JsonlReader(file, path.string()));
}

JsonlReader::~JsonlReader() {
  if (file_ && file_ != stdin) std::fclose(file_);
}

std::optional<JsonlReader::Line> JsonlReader::Next() { return Read(true); }

std::optional<JsonlReader::Line> JsonlReader::NextText() { return Read(false); }

std::optional<JsonlReader::Line> JsonlReader::Read(bool parse) {
  std::string text;
  bool complete = false, too_long = false;
  uint64_t consumed = 0;
  while (!stopped_ && ReadLine(file_, text, complete, too_long, consumed)) {
    ++number_;
    uint64_t start = offset_;
    offset_ += consumed;
    if (IsBlankLine(text) && !too_long) continue;
    Line line;
    line.number = number_;
    line.offset = start;
    line.torn = !complete && !too_long;
    std::string where = label_ + ":" + std::to_string(number_);
    if (too_long) {
      stopped_ = true;
      line.value = Status::IoError(where + ": a line longer than " + std::to_string(kMaxLineBytes >> 20) +
                                   " MiB; not a JSON lines file of kforge's, read no further");
    } else if (parse) {
      line.value = ParseJson(text, where, JsonLineLimits());
    } else {
      line.value = nlohmann::json();
      line.text = std::move(text);
    }
    return line;
  }
  if (!stopped_ && std::ferror(file_)) {
    Line line;
    line.number = number_ + 1;
    line.value = Status::IoError(label_ + ": read failed: " + std::strerror(errno));
    return line;
  }
  return std::nullopt;
}

Status JsonlReader::Seek(uint64_t offset, int number) {
  if (::fseeko(file_, static_cast<off_t>(offset), SEEK_SET) != 0)
    return Status::IoError(label_ + ": cannot seek: " + std::strerror(errno));
  offset_ = offset;
  number_ = number - 1;
  stopped_ = false;
  return Status::Ok();
}

}  // namespace kforge::common
