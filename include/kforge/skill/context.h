// A checked skill as generate puts it in the teacher's context.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/generate/generate.h"
#include "kforge/skill/skill.h"

namespace kforge::skill {

generate::ContextSkill ContextOf(const Skill& skill);

/// Loads and checks every folder (`--skill`, repeatable); the first problem is the error, naming `flag`.
StatusOr<std::vector<generate::ContextSkill>> LoadContextSkills(const std::vector<std::string>& dirs,
                                                                const std::string& flag);

}  // namespace kforge::skill
