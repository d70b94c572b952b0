// Held-out tasks: ids and reference similarity.
#include "export/holdout.h"

#include <fstream>

#include "kforge/common/files.h"
#include "kforge/common/task.h"

namespace kforge::exporter {

namespace fs = std::filesystem;

namespace {

/// Longest line of a list of held-out task ids.
constexpr size_t kMaxIdLine = 4096;

/// One line of `in` without its newline, at most kMaxIdLine + 1 bytes of it read; false at the end.
bool ReadIdLine(std::istream& in, std::string& line) {
  line.clear();
  bool any = false;
  for (int c; line.size() <= kMaxIdLine && (c = in.get()) != std::char_traits<char>::eof();) {
    any = true;
    if (c == '\n') return true;
    line.push_back(static_cast<char>(c));
  }
  return any;
}

}  // namespace

MinHash ReferenceMinHash(std::string_view reference_source) {
  std::vector<std::string_view> tokens = Tokenize(reference_source, CommentStyle::kPython);
  std::erase_if(tokens, [](std::string_view t) { return t[0] == '"' || t[0] == '\''; });
  return MinHashOf(tokens);
}

StatusOr<Holdout> Holdout::Load(const fs::path& path, double threshold) {
  Holdout holdout;
  holdout.threshold_ = threshold;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    StatusOr<std::vector<common::Task>> tasks = common::LoadTaskTree(path);
    if (!tasks.ok())
      return Status::InvalidArgument("--holdout " + path.string() + ": " + tasks.status().message());
    if (tasks->empty())
      return Status::InvalidArgument("--holdout " + path.string() + ": no task.json below it");
    for (const common::Task& task : *tasks) {
      holdout.ids_.insert(task.id);
      KFORGE_ASSIGN_OR_RETURN(std::string reference, common::ReadFile(task.reference));
      holdout.AddReference(reference);
    }
    return holdout;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("--holdout " + path.string() + ": no such file or folder");
  std::string line;
  for (int number = 1; ReadIdLine(in, line); ++number) {
    if (line.size() > kMaxIdLine)  // an endless input (/dev/zero) is not read to its end
      return Status::InvalidArgument("--holdout " + path.string() + ":" + std::to_string(number) +
                                     ": a line longer than " + std::to_string(kMaxIdLine) +
                                     " bytes; expected one task id a line");
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    std::string id = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    if (Status valid = common::CheckTaskId(id); !valid.ok())
      return Status::InvalidArgument(path.string() + ":" + std::to_string(number) + ": " + valid.message());
    holdout.ids_.insert(id);
  }
  if (holdout.ids_.empty())
    return Status::InvalidArgument("--holdout " + path.string() + ": no task id in it");
  return holdout;
}

void Holdout::AddReference(std::string_view reference_source) {
  if (reference_source.empty() || !reference_hashes_.insert(Hash64(reference_source)).second) return;
  references_.push_back(ReferenceMinHash(reference_source));
}

bool Holdout::Similar(const MinHash& reference) const {
  for (const MinHash& held : references_)
    if (Similarity(reference, held) >= threshold_) return true;
  return false;
}

}  // namespace kforge::exporter
