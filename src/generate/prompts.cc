// Prompt templates: loading and `{{name}}` substitution.
#include "generate/prompts.h"

#include "kforge/common/files.h"
#include "kforge/common/hash.h"

namespace kforge::generate {

StatusOr<PromptSet> PromptSet::Load(const std::filesystem::path& dir) {
  PromptSet set;
  std::string all;
  const std::pair<const char*, std::string*> files[] = {{"system.md", &set.system},
                                                        {"task.md", &set.task},
                                                        {"feedback.md", &set.feedback},
                                                        {"protocol_text.md", &set.protocol_text},
                                                        {"protocol_tools.md", &set.protocol_tools},
                                                        {"ops_library.md", &set.ops_library},
                                                        {"ops_all.md", &set.ops_all},
                                                        {"ops_none.md", &set.ops_none}};
  for (const auto& [name, text] : files) {
    auto read = common::ReadFile(dir / name);
    if (!read.ok())
      return Status::InvalidArgument("prompt template " + (dir / name).string() + ": not readable");
    *text = std::move(*read);
    all += std::string(name) + '\0' + *text + '\0';
  }
  set.hash = "sha256:" + common::Sha256Hex(all);
  return set;
}

std::string PromptSet::LibraryOps(common::OpPolicy policy) const {
  std::string text = policy == common::OpPolicy::kNone      ? ops_none
                     : policy == common::OpPolicy::kLibrary ? ops_library
                                                            : ops_library + ops_all;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

StatusOr<std::string> Render(const std::string& text, const std::map<std::string, std::string>& values,
                             const std::string& where) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) return Status::InvalidArgument(where + ": \"{{\" without \"}}\"");
    std::string name = text.substr(open + 2, close - open - 2);
    auto it = values.find(name);
    if (it == values.end())
      return Status::InvalidArgument(where + ": unknown placeholder {{" + name.substr(0, 40) + "}}");
    out.append(text, pos, open - pos);
    out += it->second;
    pos = close + 2;
  }
  out.append(text, pos, std::string::npos);
  return out;
}

}  // namespace kforge::generate
