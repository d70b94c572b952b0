// A checked skill as generate puts it in the teacher's context (skill/context.h).
#include "kforge/skill/context.h"

namespace kforge::skill {

generate::ContextSkill ContextOf(const Skill& skill) {
  return {skill.name, skill.description, skill.body, skill.hash, skill.readable};
}

StatusOr<std::vector<generate::ContextSkill>> LoadContextSkills(const std::vector<std::string>& dirs,
                                                                const std::string& flag) {
  std::vector<generate::ContextSkill> skills;
  for (const std::string& dir : dirs) {
    auto loaded = LoadSkill(dir);
    if (!loaded.ok()) return loaded.status().WithContext(flag);
    skills.push_back(ContextOf(*loaded));
  }
  return skills;
}

}  // namespace kforge::skill
