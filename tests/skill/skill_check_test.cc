// The skill folder check: a valid folder loads with its fields, hash and readable files; every refusal
// of the Agent Skills specification (and of kforge) is one line naming the file and the field.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "kforge/skill/skill.h"
#include "skill/front_matter.h"
#include "skill/skill_folder.h"

namespace kforge::skill {
namespace {

namespace fs = std::filesystem;

using test_support::SkillFolder;

std::string Joined(const CheckResult& r) {
  std::string all;
  for (const std::string& p : r.problems) all += p + "\n";
  return all;
}

TEST(SkillCheckTest, AValidFolderLoadsWithItsFieldsHashAndReadableFiles) {
  SkillFolder folder("softmax-rows");
  CheckResult r = CheckSkill(folder.dir());
  ASSERT_TRUE(r.ok()) << Joined(r);
  const Skill& s = r.skill;
  EXPECT_EQ(s.name, "softmax-rows");
  EXPECT_EQ(s.description.substr(0, 18), "Row softmax kernel");
  EXPECT_NE(s.description.find("softmax: and"), std::string::npos) << "a quoted value may hold \": \"";
  EXPECT_EQ(s.license, "MIT");
  EXPECT_EQ(s.allowed_tools, "Bash Read");
  ASSERT_EQ(s.metadata.size(), 2u);
  EXPECT_EQ(s.metadata[0], (std::pair<std::string, std::string>{"teacher", "claude-test"}));
  EXPECT_EQ(s.metadata[1], (std::pair<std::string, std::string>{"arch", "sm_90"}));
  EXPECT_EQ(s.body, "# Softmax\n\nSee [the kernel](references/softmax.cu).\n");
  EXPECT_EQ(s.body_tokens, (static_cast<int>(s.body.size()) + 3) / 4);
  EXPECT_EQ(s.readable.size(), 2u) << "SKILL.md and references/, not scripts/ or evals/";
  EXPECT_TRUE(s.readable.count("references/softmax.cu"));
  ASSERT_EQ(s.evals.size(), 1u);
  EXPECT_EQ(s.evals[0].task, "core/softmax");
  EXPECT_EQ(s.families, std::vector<std::string>{"softmax"});
  EXPECT_EQ(s.hash.substr(0, 7), "sha256:");
  // Any changed byte of any file is another skill.
  const std::string before = s.hash;
  folder.Write("scripts/verify.sh", "#!/bin/sh\nexec kforge verify  \"$@\"\n");
  EXPECT_NE(CheckSkill(folder.dir()).skill.hash, before);
  // A trailing slash names the same folder.
  EXPECT_TRUE(CheckSkill(folder.dir().string() + "/").ok());
}

struct Refusal {
  const char* what;
  std::string front_matter;  ///< the lines between the two "---"
  const char* expected;      ///< a part of the one problem
};

TEST(SkillCheckTest, EveryRefusalOfTheSpecificationIsOneLineNamingFileAndField) {
  const std::string description = "description: Row softmax.\n";
  const Refusal cases[] = {
      {"no name", description, "SKILL.md: name: missing"},
      {"no description", "name: softmax-rows\n", "SKILL.md: description: missing"},
      {"upper case", "name: Softmax-rows\n" + description,
       "name \"Softmax-rows\" may hold only a-z, 0-9 and '-'"},
      {"underscore", "name: softmax_rows\n" + description, "may hold only a-z"},
      {"leading hyphen", "name: -softmax\n" + description, "may not start or end with '-'"},
      {"trailing hyphen", "name: softmax-\n" + description, "may not start or end with '-'"},
      {"double hyphen", "name: soft--max\n" + description, "may not hold \"--\""},
      {"too long", "name: " + std::string(65, 'a') + "\n" + description, "longer than 64 characters"},
      {"not the folder", "name: softmax-cols\n" + description,
       "must equal the folder's name \"softmax-rows\""},
      {"empty description", "name: softmax-rows\ndescription: \"\"\n", "SKILL.md:3: description: is empty"},
      {"long description", "name: softmax-rows\ndescription: " + std::string(1025, 'x') + "\n",
       "SKILL.md:3: description: 1025 characters, at most 1024"},
      {"unknown field", "name: softmax-rows\n" + description + "version: 2\n",
       "SKILL.md:4: version: not a field of the Agent Skills specification"},
      {"metadata scalar", "name: softmax-rows\n" + description + "metadata: x\n",
       "SKILL.md:4: metadata: must be a map"},
      {"license map", "name: softmax-rows\n" + description + "license:\n  a: b\n",
       "license: must be a string"},
      {"long compatibility",
       "name: softmax-rows\n" + description + "compatibility: " + std::string(501, 'c') + "\n",
       "compatibility: 1 to 500 characters"},
      {"duplicate", "name: softmax-rows\nname: softmax-rows\n" + description,
       "SKILL.md:3: name is given twice"},
      {"block scalar", "name: softmax-rows\ndescription: >\n  folded\n",
       "SKILL.md:3: description: a block scalar"},
      {"flow list", "name: softmax-rows\n" + description + "allowed-tools: [Bash]\n", "a flow collection"},
      {"anchor", "name: &n softmax-rows\n" + description, "an anchor or alias"},
      {"colon in plain", "name: softmax-rows\ndescription: Use: for rows\n",
       "may not hold \": \"; put it in quotes"},
      {"continued line", "name: softmax-rows\ndescription: one\n  two\n",
       "SKILL.md:4: an indented line that belongs to no map"},
      {"tab", "name: softmax-rows\n" + description + "metadata:\n\tarch: sm_90\n", "SKILL.md:5: a tab"},
      {"nested map", "name: softmax-rows\n" + description + "metadata:\n  a:\n    b: c\n",
       "metadata.a has no value"},
      {"unclosed quote", "name: \"softmax-rows\n" + description,
       "SKILL.md:2: name: the quoted value is not closed"},
      {"not key value", "name softmax-rows\n" + description, "SKILL.md:2: expected \"key: value\""},
      {"empty value", "name: softmax-rows\n" + description + "license:\n",
       "SKILL.md:4: license has no value"},
  };
  for (const Refusal& c : cases) {
    SkillFolder folder("softmax-rows", {{"SKILL.md", "---\n" + c.front_matter + "---\nbody\n"}});
    CheckResult r = CheckSkill(folder.dir());
    ASSERT_EQ(r.problems.size(), 1u) << c.what << ":\n" << Joined(r);
    EXPECT_NE(r.problems[0].find(c.expected), std::string::npos) << c.what << ": " << r.problems[0];
    EXPECT_EQ(r.problems[0].find('\n'), std::string::npos) << c.what;
  }
}

TEST(SkillCheckTest, TheFileAroundTheFrontMatterIsChecked) {
  const std::string ok = "---\nname: s\ndescription: d\n---\n";
  const std::pair<std::string, const char*> cases[] = {
      {"name: s\ndescription: d\n", "SKILL.md:1: the front matter must open the file"},
      {"---\nname: s\ndescription: d\n", "SKILL.md: the front matter is not closed"},
      {"\xEF\xBB\xBF" + ok, "byte order mark"},
      {ok + "\xff\xfe", "SKILL.md: not valid UTF-8"},
      {ok + std::string(4 * kMaxBodyTokens + 1, 'x'),
       "SKILL.md: body: about 5001 tokens (20001 bytes / 4), at most 5000"},
      {ok + "See [x](references/missing.md) and [y](scripts/run.sh).\n",
       "SKILL.md:5: links to \"references/missing.md\", which is not a file of the skill"},
  };
  for (const auto& [text, expected] : cases) {
    SkillFolder folder("s", {{"SKILL.md", text}, {"scripts/run.sh", "x"}});
    CheckResult r = CheckSkill(folder.dir());
    ASSERT_EQ(r.problems.size(), 1u) << expected << ":\n" << Joined(r);
    EXPECT_NE(r.problems[0].find(expected), std::string::npos) << r.problems[0];
  }
  // 5,000 estimated tokens are allowed.
  SkillFolder at_limit("s", {{"SKILL.md", ok + std::string(4 * kMaxBodyTokens, 'x')}});
  EXPECT_TRUE(CheckSkill(at_limit.dir()).ok()) << Joined(CheckSkill(at_limit.dir()));
}

TEST(SkillCheckTest, FolderContentsLinksAndEvalsAreChecked) {
  {
    SkillFolder folder("softmax-rows");
    fs::remove(folder.dir() / "SKILL.md");
    EXPECT_EQ(CheckSkill(folder.dir()).problems,
              std::vector<std::string>{"SKILL.md: missing (a skill is a folder with a SKILL.md)"});
  }
  {
    SkillFolder folder("softmax-rows");
    std::ofstream(folder.root() / "secret.txt") << "outside";
    fs::create_symlink(folder.root() / "secret.txt", folder.dir() / "references/leak.md");
    CheckResult r = CheckSkill(folder.dir());
    ASSERT_EQ(r.problems.size(), 1u) << Joined(r);
    EXPECT_EQ(r.problems[0], "references/leak.md: a symbolic link; a skill's files must be its own");
    EXPECT_FALSE(r.skill.readable.count("references/leak.md"));
  }
  {
    SkillFolder folder("softmax-rows");
    folder.Write("references/blob.bin", std::string("\x00\x01", 2));
    CheckResult r = CheckSkill(folder.dir());
    ASSERT_EQ(r.problems.size(), 1u) << Joined(r);
    EXPECT_EQ(r.problems[0], "references/blob.bin: not UTF-8 text (references are read by a model)");
  }
  {
    // Control characters would reach the teacher's system prompt and the terminal unseen.
    const std::pair<std::string, std::string> controls[] = {
        {"a\nb \x1b[2J", "references/notes.md: line 2: U+001B, a control character"},
        {"x\xc2\x9b", "references/notes.md: line 1: U+009B, a control character"},
        {"if (admin) \xe2\x80\xae", "references/notes.md: line 1: U+202E, a control character"},
    };
    for (const auto& [text, expected] : controls) {
      SkillFolder folder("softmax-rows");
      folder.Write("references/notes.md", text);
      CheckResult r = CheckSkill(folder.dir());
      ASSERT_EQ(r.problems.size(), 1u) << Joined(r);
      EXPECT_EQ(r.problems[0].rfind(expected, 0), 0u) << r.problems[0];
      EXPECT_FALSE(r.skill.readable.count("references/notes.md"));
    }
    SkillFolder tabs("softmax-rows");
    tabs.Write("references/notes.md", "a\tb\r\n");
    EXPECT_TRUE(CheckSkill(tabs.dir()).ok()) << "tabs and CRLF line ends are text";
  }
  {
    SkillFolder folder("softmax-rows");
    fs::remove_all(folder.dir() / "scripts");
    folder.Write("scripts", "a file");
    EXPECT_EQ(CheckSkill(folder.dir()).problems, std::vector<std::string>{"scripts: must be a folder"});
  }
  const std::pair<const char*, const char*> evals[] = {
      {"[]", "evals/evals.json: not a JSON object"},
      {R"({"skill_name": "other", "evals": [{"id": 1, "task": "t"}]})",
       "evals/evals.json: skill_name: must be"},
      {R"({"skill_name": "softmax-rows", "evals": []})",
       "evals/evals.json: evals: must be a non-empty array"},
      {R"({"skill_name": "softmax-rows", "evals": [{"id": 1, "task": "t"}, {"id": 1, "task": "u"}]})",
       "evals/evals.json: evals[1].id: 1 is used twice"},
      {R"({"skill_name": "softmax-rows", "evals": [{"id": 1}]})",
       "evals/evals.json: evals[0].task: must be a task id"},
      {R"({"skill_name": "softmax-rows", "families": [3], "evals": [{"id": 1, "task": "t"}]})",
       "evals/evals.json: families[0]: must be a non-empty string"},
  };
  for (const auto& [text, expected] : evals) {
    SkillFolder folder("softmax-rows");
    folder.Write("evals/evals.json", text);
    CheckResult r = CheckSkill(folder.dir());
    ASSERT_EQ(r.problems.size(), 1u) << expected << ":\n" << Joined(r);
    EXPECT_NE(r.problems[0].find(expected), std::string::npos) << r.problems[0];
  }
  {
    SkillFolder folder("softmax-rows");
    fs::remove(folder.dir() / "evals/evals.json");
    EXPECT_NE(Joined(CheckSkill(folder.dir())).find("evals/evals.json: missing"), std::string::npos);
  }
  EXPECT_EQ(LoadSkill("/nonexistent/skill").status().message(), "/nonexistent/skill: not a folder");
}

TEST(FrontMatterTest, ScalarsQuotesCommentsAndTheBody) {
  auto fm = ParseFrontMatter(
      "---\r\n# about\r\na: 'it''s'\r\nb: \"x\\\"y\\n\" # c\r\nc: plain # comment\r\n---\r\nbody\r\n", "F");
  ASSERT_TRUE(fm.ok()) << fm.status().message();
  ASSERT_EQ(fm->fields.size(), 3u);
  EXPECT_EQ(fm->fields[0].scalar, "it's");
  EXPECT_EQ(fm->fields[0].line, 3);
  EXPECT_EQ(fm->fields[1].scalar, "x\"y\n");
  EXPECT_EQ(fm->fields[2].scalar, "plain");
  EXPECT_EQ(fm->body, "body\r\n");
  EXPECT_EQ(fm->body_line, 7);
  EXPECT_EQ(ParseFrontMatter("---\na: \"\\x41\"\n---\n", "F").status().message(),
            "F:2: a: the escape \\x is not read (only \\\" \\\\ \\/ \\n \\t)");
  EXPECT_EQ(ParseFrontMatter("---\na: b\n  c: d\n---\n", "F").status().message().substr(0, 38),
            "F:3: an indented line that belongs to ");
}

}  // namespace
}  // namespace kforge::skill
