// Skills in the teacher's context: the system prompt's skill section (the body under the text
// protocol, a catalog under the tools protocol) and the `read_skill_file` tool, whose path comes
// from the model and is treated as hostile: only SKILL.md and files under references/ are served,
// from memory, and a path that leaves the skill is refused.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/generate/generate.h"
#include "kforge/llm/chat.h"

namespace kforge::generate {

inline constexpr std::string_view kReadSkillFile = "read_skill_file";

/// What goes after the rendered system prompt ("" without skills): the bodies (text protocol) or a
/// catalog of names and descriptions (tools protocol).
std::string SkillSection(const std::vector<ContextSkill>& skills, bool tools_protocol);

/// The tools protocol's `read_skill_file` tool: {skill, path}.
common::ToolSpec ReadSkillFileTool(const std::vector<ContextSkill>& skills);

/// The answer to one read_skill_file call: the file's text, or why not (error true).
struct SkillFileAnswer {
  std::string text;
  bool error = false;
};

SkillFileAnswer ReadSkillFile(const std::vector<ContextSkill>& skills, const nlohmann::json& arguments);

}  // namespace kforge::generate
