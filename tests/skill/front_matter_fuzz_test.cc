// Fuzzes the SKILL.md front matter reader (a skill is downloaded text): every input is read or
// refused in one bounded line naming SKILL.md, never a crash; what is read has distinct keys, and
// its body is the end of the input. Seeds: the SKILL.md files of the tests and a few hand-made ones.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "fakes/fuzz.h"
#include "skill/front_matter.h"
#include "skill/skill_folder.h"

namespace kforge::skill {
namespace {

fakes::FuzzOutcome Property(const std::string& input) {
  auto fm = ParseFrontMatter(input, "SKILL.md");
  if (!fm.ok()) {
    const std::string& m = fm.status().message();
    if (m.rfind("SKILL.md", 0) != 0) return {"an error that does not name SKILL.md: " + m.substr(0, 80), ""};
    if (m.find('\n') != std::string::npos) return {"an error of several lines", ""};
    if (m.size() > 400) return {"an error longer than 400 bytes", ""};
    return {"", fakes::MessageLabel(m)};
  }
  std::set<std::string> keys;
  for (const FrontMatterField& f : fm->fields) {
    if (f.key.empty()) return {"an empty key", ""};
    if (!keys.insert(f.key).second) return {"a key read twice", ""};
    if (f.line < 2) return {"a field on the opening line", ""};
    if (f.is_map != !f.map.empty()) return {"a map without entries", ""};
  }
  if (fm->body.size() > input.size() ||
      input.compare(input.size() - fm->body.size(), fm->body.size(), fm->body) != 0)
    return {"the body is not the end of the input", ""};
  return {"", "ok " + std::to_string(fm->fields.size())};
}

TEST(FrontMatterFuzzTest, EveryInputIsReadOrRefusedInOneLine) {
  fakes::FuzzTarget target;
  target.name = "front_matter";
  target.seeds = {test_support::kSkillMd,
                  "---\nname: a\ndescription: 'it''s'\n---\nbody\n",
                  "---\r\nname: \"a\\\"b\"\r\nmetadata:\r\n  k: v\r\n  l: 'w'\r\n---\r\n",
                  "---\nname: a # c\n# comment\n\ndescription: >\n  x\n---\n",
                  "---\nmetadata:\n  a:\n    b: c\n---\n",
                  "---\nname: [a, b]\n---\n",
                  "---\n---\n"};
  target.dictionary = {"---\n",
                       "\n",
                       "\r\n",
                       ": ",
                       ":",
                       "  ",
                       "\t",
                       "\"",
                       "'",
                       "''",
                       "\\",
                       "\\\"",
                       "#",
                       " #",
                       "|",
                       ">",
                       "[",
                       "{",
                       "&a",
                       "*a",
                       "!tag",
                       "- ",
                       "name",
                       "description",
                       "metadata",
                       "\xEF\xBB\xBF",
                       "\xff",
                       "\xc3\xa9",
                       std::string(1, '\0')};
  target.max_bytes = 2048;
  target.property = Property;
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(), fakes::FuzzSeed());
  std::printf("fuzz front_matter: %s\n", report.Summary().c_str());
  RecordProperty("executions", std::to_string(report.executions));
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
}

}  // namespace
}  // namespace kforge::skill
