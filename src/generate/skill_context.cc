// Skills in the teacher's context (generate/skill_context.h).
#include "generate/skill_context.h"

#include "kforge/common/text.h"

namespace kforge::generate {
namespace {

constexpr size_t kMaxPathBytes = 512;

/// `path` as a relative path inside a skill ("references/a.cu"), or why it is refused.
StatusOr<std::string> NormalPath(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("path is empty");
  if (path.size() > kMaxPathBytes) return Status::InvalidArgument("path is longer than 512 bytes");
  for (char c : path)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\')
      return Status::InvalidArgument("path " + common::Quote(path) +
                                     " holds a control character or a backslash");
  if (path.front() == '/' || path.front() == '~')
    return Status::InvalidArgument("path " + common::Quote(path) +
                                   " is absolute; name a file of the skill, e.g. SKILL.md");
  std::string normal;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = std::min(path.find('/', start), path.size());
    std::string part = path.substr(start, end - start);
    if (part == "..")
      return Status::InvalidArgument("path " + common::Quote(path) + " leaves the skill (\"..\")");
    if (!part.empty() && part != ".") normal += (normal.empty() ? "" : "/") + part;
    start = end + 1;
  }
  if (normal != "SKILL.md" && normal.rfind("references/", 0) != 0)
    return Status::InvalidArgument("path " + common::Quote(path) +
                                   ": only SKILL.md and files under references/ can be read");
  return normal;
}

std::string FileList(const ContextSkill& skill) {
  std::string list;
  size_t shown = 0;
  for (const auto& [path, text] : skill.readable) {
    if (shown++ == 20) {
      list += ", ...";
      break;
    }
    list += (list.empty() ? "" : ", ") + path;
  }
  return list;
}

}  // namespace

std::string SkillSection(const std::vector<ContextSkill>& skills, bool tools_protocol) {
  if (skills.empty()) return "";
  std::string text;
  if (tools_protocol) {
    text =
        "\n\n## Skills\nThese skills hold verified techniques. When one fits the task, read its instructions "
        "with `read_skill_file` (skill, path \"SKILL.md\"), and the files under references/ it points to, "
        "before you write.\n";
    for (const ContextSkill& skill : skills) text += "- " + skill.name + ": " + skill.description + "\n";
    return text;
  }
  for (const ContextSkill& skill : skills) {
    std::string body = skill.body;
    while (!body.empty() && body.back() == '\n') body.pop_back();
    text += "\n\n## Skill: " + skill.name + "\n" + skill.description + "\n\n" + body + "\n";
  }
  return text;
}

common::ToolSpec ReadSkillFileTool(const std::vector<ContextSkill>& skills) {
  nlohmann::json names = nlohmann::json::array();
  for (const ContextSkill& skill : skills) names.push_back(skill.name);
  return {std::string(kReadSkillFile),
          "Read a file of a skill: its instructions (SKILL.md) or a file under its references/ folder.",
          {{"type", "object"},
           {"properties",
            {{"skill", {{"type", "string"}, {"enum", names}, {"description", "The skill's name"}}},
             {"path", {{"type", "string"}, {"description", "SKILL.md or references/FILE"}}}}},
           {"required", {"skill", "path"}}}};
}

SkillFileAnswer ReadSkillFile(const std::vector<ContextSkill>& skills, const nlohmann::json& arguments) {
  auto refuse = [](std::string why) { return SkillFileAnswer{"read_skill_file: " + std::move(why), true}; };
  if (!arguments.is_object()) return refuse("arguments are not a JSON object");
  if (!arguments.contains("path") || !arguments["path"].is_string())
    return refuse("path: a string is required");
  const ContextSkill* skill = skills.size() == 1 ? &skills.front() : nullptr;
  if (arguments.contains("skill")) {
    if (!arguments["skill"].is_string()) return refuse("skill: a string is required");
    const std::string name = arguments["skill"].get<std::string>();
    skill = nullptr;
    for (const ContextSkill& s : skills)
      if (s.name == name) skill = &s;
    if (skill == nullptr) {
      std::string known;
      for (const ContextSkill& s : skills) known += (known.empty() ? "" : ", ") + s.name;
      return refuse("no skill " + common::Quote(name) + "; skills: " + known);
    }
  }
  if (skill == nullptr) return refuse("skill: required when there are several skills");
  auto path = NormalPath(arguments["path"].get<std::string>());
  if (!path.ok()) return refuse(path.status().message());
  auto it = skill->readable.find(*path);
  if (it == skill->readable.end())
    return refuse("skill " + skill->name + " has no file " + common::Quote(*path) +
                  "; files: " + FileList(*skill));
  return {it->second, false};
}

}  // namespace kforge::generate
