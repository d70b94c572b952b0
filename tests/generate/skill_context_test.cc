// The skill section of the system prompt and read_skill_file, whose path comes from a model: only
// SKILL.md and references/ are served, from memory; every way out of the skill is refused. Fuzzed:
// no path, however built, reads anything but a file of the skill's own.
#include "generate/skill_context.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/fuzz.h"

namespace kforge::generate {
namespace {

std::vector<ContextSkill> Skills() {
  ContextSkill a{
      "rows",
      "Row kernels.",
      "Use a warp per row.\n",
      "sha256:a",
      {{"SKILL.md", "---\nname: rows\n---\nUse a warp per row.\n"}, {"references/softmax.cu", "KERNEL"}}};
  ContextSkill b{"gemm", "GEMM kernels.", "Tile.\n", "sha256:b", {{"SKILL.md", "GEMM SKILL"}}};
  return {a, b};
}

TEST(SkillContextTest, TheSectionFollowsTheProtocol) {
  EXPECT_EQ(SkillSection({}, false), "");
  const std::string text = SkillSection(Skills(), false);
  EXPECT_NE(text.find("## Skill: rows\nRow kernels.\n\nUse a warp per row.\n"), std::string::npos) << text;
  EXPECT_NE(text.find("## Skill: gemm"), std::string::npos);
  const std::string tools = SkillSection(Skills(), true);
  EXPECT_NE(tools.find("- rows: Row kernels.\n- gemm: GEMM kernels.\n"), std::string::npos) << tools;
  EXPECT_EQ(tools.find("Use a warp per row"), std::string::npos) << "tools: the body is read on demand";
  common::ToolSpec tool = ReadSkillFileTool(Skills());
  EXPECT_EQ(tool.name, "read_skill_file");
  EXPECT_EQ(tool.parameters["properties"]["skill"]["enum"], nlohmann::json({"rows", "gemm"}));
}

TEST(SkillContextTest, ReadsServeTheSkillsFilesAndRefuseEverythingElse) {
  const std::vector<ContextSkill> skills = Skills();
  struct Case {
    nlohmann::json arguments;
    bool error;
    std::string expected;  ///< the text, or a part of the error
  };
  const Case cases[] = {
      {{{"skill", "rows"}, {"path", "references/softmax.cu"}}, false, "KERNEL"},
      {{{"skill", "rows"}, {"path", "./references//softmax.cu"}}, false, "KERNEL"},
      {{{"skill", "gemm"}, {"path", "SKILL.md"}}, false, "GEMM SKILL"},
      {{{"skill", "rows"}, {"path", "references/../SKILL.md"}}, true, "leaves the skill"},
      {{{"skill", "rows"}, {"path", ".."}}, true, "leaves the skill"},
      {{{"skill", "rows"}, {"path", "/etc/passwd"}}, true, "is absolute"},
      {{{"skill", "rows"}, {"path", "~/.ssh/id_rsa"}}, true, "is absolute"},
      {{{"skill", "rows"}, {"path", "references\\..\\..\\x"}}, true, "backslash"},
      {{{"skill", "rows"}, {"path", std::string("SKILL.md\0x", 10)}}, true, "control character"},
      {{{"skill", "rows"}, {"path", "scripts/run.sh"}}, true, "only SKILL.md and files under references/"},
      {{{"skill", "rows"}, {"path", "references/none.md"}},
       true,
       "has no file \"references/none.md\"; files: "
       "SKILL.md, references/softmax.cu"},
      {{{"skill", "rows"}, {"path", std::string(600, 'a')}}, true, "longer than 512 bytes"},
      {{{"skill", "rows"}, {"path", ""}}, true, "path is empty"},
      {{{"skill", "other"}, {"path", "SKILL.md"}}, true, "no skill \"other\"; skills: rows, gemm"},
      {{{"path", "SKILL.md"}}, true, "skill: required when there are several skills"},
      {{{"skill", 3}, {"path", "SKILL.md"}}, true, "skill: a string is required"},
      {{{"skill", "rows"}}, true, "path: a string is required"},
      {"SKILL.md", true, "arguments are not a JSON object"},
  };
  for (const Case& c : cases) {
    SkillFileAnswer answer = ReadSkillFile(skills, c.arguments);
    EXPECT_EQ(answer.error, c.error) << c.arguments.dump();
    if (c.error) {
      EXPECT_EQ(answer.text.rfind("read_skill_file: ", 0), 0u) << answer.text;
      EXPECT_NE(answer.text.find(c.expected), std::string::npos) << c.arguments.dump() << ": " << answer.text;
    } else {
      EXPECT_EQ(answer.text, c.expected) << c.arguments.dump();
    }
  }
}

TEST(SkillContextFuzzTest, NoPathReadsAnythingButTheSkillsOwnFiles) {
  const std::vector<ContextSkill> skills = Skills();
  fakes::FuzzTarget target;
  target.name = "read_skill_file";
  target.seeds = {"references/softmax.cu", "SKILL.md", "../SKILL.md", "/references/softmax.cu",
                  "references/./softmax.cu"};
  target.dictionary = {"/",  "..", ".",      "references", "SKILL.md", "softmax.cu",
                       "\\", "~",  "%2e%2e", "\0",         "//",       "scripts"};
  target.max_bytes = 700;
  target.property = [&skills](const std::string& path) -> fakes::FuzzOutcome {
    SkillFileAnswer answer = ReadSkillFile(skills, {{"skill", "rows"}, {"path", path}});
    if (answer.error) {
      if (answer.text.find('\n') != std::string::npos) return {"an error of several lines", ""};
      return {"", fakes::MessageLabel(answer.text)};
    }
    if (answer.text != "KERNEL" && answer.text != skills[0].readable.at("SKILL.md"))
      return {"served something that is not a file of the skill", ""};
    for (size_t start = 0; start <= path.size();) {
      size_t end = std::min(path.find('/', start), path.size());
      if (path.substr(start, end - start) == "..") return {"served a path with \"..\"", ""};
      start = end + 1;
    }
    if (!path.empty() && path[0] == '/') return {"served an absolute path", ""};
    return {"", "served"};
  };
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(), fakes::FuzzSeed());
  std::printf("fuzz read_skill_file: %s\n", report.Summary().c_str());
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
}

}  // namespace
}  // namespace kforge::generate
