// The skill folder: reading it and checking it against the Agent Skills specification (skill/skill.h).
#include "kforge/skill/skill.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/common/files.h"
#include "kforge/common/hash.h"
#include "kforge/common/text.h"
#include "skill/front_matter.h"

namespace kforge::skill {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxDepth = 8;
const std::set<std::string> kFields = {"name",          "description", "license",
                                       "compatibility", "metadata",    "allowed-tools"};

size_t CodePoints(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

/// Why `name` is not a valid skill name, or "".
std::string NameProblem(const std::string& name) {
  if (name.empty()) return "is empty";
  if (CodePoints(name) > kMaxNameChars) return "is longer than 64 characters";
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
      return "may hold only a-z, 0-9 and '-' (" + common::Quote(std::string(1, c)) + " is not)";
  if (name.front() == '-' || name.back() == '-') return "may not start or end with '-'";
  if (name.find("--") != std::string::npos) return "may not hold \"--\"";
  return "";
}

/// Every file of the folder by relative path (regular files only; links and the like are problems).
std::map<std::string, std::string> ReadFolder(const fs::path& dir, std::vector<std::string>& problems) {
  std::map<std::string, std::string> files;
  size_t total = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  if (ec) {
    problems.push_back(dir.string() + ": cannot list it (" + ec.message() + ")");
    return files;
  }
  for (; it != end; it.increment(ec)) {
    if (ec) {
      problems.push_back(dir.string() + ": cannot list it (" + ec.message() + ")");
      break;
    }
    const fs::path rel = it->path().lexically_relative(dir);
    const fs::file_status status = it->symlink_status(ec);
    if (fs::is_symlink(status)) {
      problems.push_back(rel.string() + ": a symbolic link; a skill's files must be its own");
      continue;
    }
    if (fs::is_directory(status)) {
      if (it.depth() >= kMaxDepth) {
        problems.push_back(rel.string() + ": deeper than " + std::to_string(kMaxDepth) + " folders");
        it.disable_recursion_pending();
      }
      continue;
    }
    if (!fs::is_regular_file(status)) {
      problems.push_back(rel.string() + ": not a regular file");
      continue;
    }
    const uintmax_t size = fs::file_size(it->path(), ec);
    if (ec || size > kMaxFileBytes) {
      problems.push_back(rel.string() + ": larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB");
      continue;
    }
    total += size;
    if (total > kMaxFolderBytes) {
      problems.push_back(dir.string() + ": its files hold more than " +
                         std::to_string(kMaxFolderBytes >> 20) + " MiB");
      break;
    }
    auto text = common::ReadFile(it->path());
    if (!text.ok()) {
      problems.push_back(rel.string() + ": not readable");
      continue;
    }
    files[rel.generic_string()] = std::move(*text);
  }
  return files;
}

std::string FolderHash(const std::map<std::string, std::string>& files) {
  std::string all;
  for (const auto& [path, bytes] : files) all += path + '\0' + std::to_string(bytes.size()) + '\0' + bytes;
  return "sha256:" + common::Sha256Hex(all);
}

void CheckFrontMatter(const FrontMatter& fm, const fs::path& dir, Skill& skill,
                      std::vector<std::string>& problems) {
  auto at = [](const FrontMatterField& f) { return "SKILL.md:" + std::to_string(f.line) + ": " + f.key; };
  bool has_name = false, has_description = false;
  for (const FrontMatterField& f : fm.fields) {
    if (!kFields.count(f.key)) {
      problems.push_back(at(f) +
                         ": not a field of the Agent Skills specification (name, description, license, "
                         "compatibility, metadata, allowed-tools)");
      continue;
    }
    if (f.key == "metadata") {
      if (!f.is_map) {
        problems.push_back(at(f) + ": must be a map of names to strings (indented \"name: value\" lines)");
        continue;
      }
      skill.metadata = f.map;
      continue;
    }
    if (f.is_map) {
      problems.push_back(at(f) + ": must be a string, not a map");
      continue;
    }
    if (f.key == "name") {
      has_name = true;
      skill.name = f.scalar;
      if (std::string why = NameProblem(f.scalar); !why.empty())
        problems.push_back(at(f) + " " + common::Quote(f.scalar, 70) + " " + why);
      else if (f.scalar != dir.filename().string())
        problems.push_back(at(f) + " " + common::Quote(f.scalar, 70) + " must equal the folder's name " +
                           common::Quote(dir.filename().string(), 70));
    } else if (f.key == "description") {
      has_description = true;
      skill.description = f.scalar;
      if (f.scalar.find_first_not_of(" \t\n") == std::string::npos)
        problems.push_back(at(f) + ": is empty (say what the skill does and when to use it)");
      else if (CodePoints(f.scalar) > kMaxDescriptionChars)
        problems.push_back(at(f) + ": " + std::to_string(CodePoints(f.scalar)) + " characters, at most " +
                           std::to_string(kMaxDescriptionChars));
    } else if (f.key == "compatibility") {
      skill.compatibility = f.scalar;
      if (f.scalar.empty() || CodePoints(f.scalar) > kMaxCompatibilityChars)
        problems.push_back(at(f) + ": 1 to " + std::to_string(kMaxCompatibilityChars) + " characters");
    } else if (f.key == "license") {
      skill.license = f.scalar;
      if (f.scalar.empty()) problems.push_back(at(f) + ": is empty");
    } else if (f.key == "allowed-tools") {
      skill.allowed_tools = f.scalar;
      if (f.scalar.empty()) problems.push_back(at(f) + ": is empty (a space-separated list of tools)");
    }
  }
  if (!has_name) problems.push_back("SKILL.md: name: missing (required)");
  if (!has_description) problems.push_back("SKILL.md: description: missing (required)");
}

/// Links of the body to files of the folder ("](references/x.md)") that are not there.
void CheckLinks(const FrontMatter& fm, const std::map<std::string, std::string>& files,
                std::vector<std::string>& problems) {
  static const std::regex kLink(R"(\]\(((?:references|scripts|assets|evals)/[^)\s#]+)\))");
  int line = fm.body_line;
  size_t start = 0;
  while (start <= fm.body.size()) {
    size_t end = std::min(fm.body.find('\n', start), fm.body.size());
    const std::string text = fm.body.substr(start, end - start);
    for (std::sregex_iterator m(text.begin(), text.end(), kLink), none; m != none; ++m) {
      const std::string target = fs::path((*m)[1].str()).lexically_normal().generic_string();
      if (!files.count(target))
        problems.push_back("SKILL.md:" + std::to_string(line) + ": links to " + common::Quote(target, 80) +
                           ", which is not a file of the skill");
    }
    ++line;
    start = end + 1;
  }
}

void CheckEvals(const std::map<std::string, std::string>& files, Skill& skill,
                std::vector<std::string>& problems) {
  const std::string where = "evals/evals.json";
  auto it = files.find(where);
  if (it == files.end()) {
    problems.push_back(where + ": missing (evals/ holds evals.json, the tasks the skill was built from)");
    return;
  }
  nlohmann::json j = nlohmann::json::parse(it->second, nullptr, false);
  if (!j.is_object()) {
    problems.push_back(where + ": not a JSON object");
    return;
  }
  if (!j.contains("skill_name") || !j["skill_name"].is_string() || j["skill_name"] != skill.name)
    problems.push_back(where + ": skill_name: must be the skill's name " + common::Quote(skill.name, 70));
  if (j.contains("families")) {
    if (!j["families"].is_array()) {
      problems.push_back(where + ": families: must be an array of strings");
    } else {
      for (size_t i = 0; i < j["families"].size(); ++i) {
        if (!j["families"][i].is_string() || j["families"][i].get<std::string>().empty())
          problems.push_back(where + ": families[" + std::to_string(i) + "]: must be a non-empty string");
        else
          skill.families.push_back(j["families"][i].get<std::string>());
      }
    }
  }
  if (!j.contains("evals") || !j["evals"].is_array() || j["evals"].empty()) {
    problems.push_back(where + ": evals: must be a non-empty array");
    return;
  }
  std::set<int> ids;
  for (size_t i = 0; i < j["evals"].size(); ++i) {
    const nlohmann::json& e = j["evals"][i];
    const std::string at = where + ": evals[" + std::to_string(i) + "]";
    if (!e.is_object()) {
      problems.push_back(at + ": must be an object");
      continue;
    }
    EvalCase c;
    if (!e.contains("id") || !e["id"].is_number_integer())
      problems.push_back(at + ".id: must be an integer");
    else if (!ids.insert(c.id = e["id"].get<int>()).second)
      problems.push_back(at + ".id: " + std::to_string(c.id) + " is used twice");
    if (!e.contains("task") || !e["task"].is_string() || e["task"].get<std::string>().empty())
      problems.push_back(at + ".task: must be a task id (a non-empty string)");
    else
      c.task = e["task"].get<std::string>();
    if (e.contains("family")) {
      if (!e["family"].is_string())
        problems.push_back(at + ".family: must be a string");
      else
        c.family = e["family"].get<std::string>();
    }
    skill.evals.push_back(std::move(c));
  }
}

/// The first control character of UTF-8 `text` that a model's prompt has no use for (C0 but tab,
/// newline and carriage return; DEL; C1; bidirectional controls) as "line N: U+001B", or "".
std::string FirstControl(const std::string& text) {
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    uint32_t cp = 0;
    if (c == '\n') {
      ++line;
      continue;
    }
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
      cp = c;
    } else if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      cp = static_cast<unsigned char>(text[i + 1]);  // U+0080..U+009F
    } else if (common::BidiControlLength(text, i) > 0) {
      const std::string shown = common::BidiControlText(text, i);  // a backslash, "u", four hex digits
      cp = static_cast<uint32_t>(std::stoul(shown.substr(2), nullptr, 16));
    } else {
      continue;
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, "line %d: U+%04X", line, static_cast<unsigned>(cp));
    return buf;
  }
  return "";
}

}  // namespace

int EstimateTokens(std::string_view text) { return static_cast<int>((text.size() + 3) / 4); }

CheckResult CheckSkill(const fs::path& dir_in) {
  CheckResult result;
  Skill& skill = result.skill;
  std::vector<std::string>& problems = result.problems;
  const fs::path dir = dir_in.lexically_normal().filename().empty() ? dir_in.lexically_normal().parent_path()
                                                                    : dir_in.lexically_normal();
  skill.dir = dir;
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(dir, ec);
  if (fs::is_symlink(status)) {
    problems.push_back(dir.string() + ": a symbolic link; name the skill's folder itself");
    return result;
  }
  if (!fs::is_directory(status)) {
    problems.push_back(dir.string() + ": not a folder");
    return result;
  }
  std::map<std::string, std::string> files = ReadFolder(dir, problems);
  skill.hash = FolderHash(files);
  for (const char* sub : {"references", "scripts", "evals", "assets"})
    if (fs::exists(fs::symlink_status(dir / sub, ec)) && !fs::is_directory(fs::symlink_status(dir / sub, ec)))
      problems.push_back(std::string(sub) + ": must be a folder");
  auto skill_md = files.find("SKILL.md");
  if (skill_md == files.end()) {
    if (!fs::exists(fs::symlink_status(dir / "SKILL.md", ec)))
      problems.push_back("SKILL.md: missing (a skill is a folder with a SKILL.md)");
    return result;
  }
  auto fm = ParseFrontMatter(skill_md->second, "SKILL.md");
  if (!fm.ok()) {
    problems.push_back(fm.status().message());
    return result;
  }
  CheckFrontMatter(*fm, dir, skill, problems);
  skill.body = fm->body;
  skill.body_tokens = EstimateTokens(fm->body);
  if (skill.body_tokens > kMaxBodyTokens)
    problems.push_back("SKILL.md: body: about " + std::to_string(skill.body_tokens) + " tokens (" +
                       std::to_string(fm->body.size()) + " bytes / 4), at most " +
                       std::to_string(kMaxBodyTokens) + "; move detail to references/");
  CheckLinks(*fm, files, problems);
  for (const auto& [path, bytes] : files) {
    if (path != "SKILL.md" && path.rfind("references/", 0) != 0) continue;
    size_t bad = 0;
    if (!common::IsValidUtf8(bytes, &bad) || bytes.find('\0') != std::string::npos) {
      problems.push_back(path + ": not UTF-8 text (references are read by a model)");
      continue;
    }
    if (const std::string control = FirstControl(bytes); !control.empty()) {
      problems.push_back(path + ": " + control +
                         ", a control character (it would reach the teacher's prompt "
                         "and the terminal unseen)");
      continue;
    }
    skill.readable[path] = bytes;
  }
  if (fs::is_directory(fs::symlink_status(dir / "evals", ec))) CheckEvals(files, skill, problems);
  return result;
}

StatusOr<Skill> LoadSkill(const fs::path& dir) {
  CheckResult checked = CheckSkill(dir);
  if (!checked.ok()) {
    const std::string& first = checked.problems.front();
    return Status::InvalidArgument((first.rfind(dir.string(), 0) == 0 ? "" : dir.string() + ": ") + first +
                                   (checked.problems.size() > 1
                                        ? " (and " + std::to_string(checked.problems.size() - 1) +
                                              " more: kforge skill check " + dir.string() + ")"
                                        : ""));
  }
  return std::move(checked.skill);
}

}  // namespace kforge::skill
