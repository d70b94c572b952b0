// docs/cli.md and the command line agree: every flag a command's --help lists is documented in its
// section of docs/cli.md, and every flag the section names exists.
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fakes/command.h"

namespace kforge::cli {
namespace {

/// Flags named in `text`: --name tokens.
std::set<std::string> FlagsIn(const std::string& text) {
  static const std::regex kFlag(R"((^|[^\w-])(--[a-z][a-z0-9-]*))");
  std::set<std::string> flags;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kFlag); it != std::sregex_iterator(); ++it)
    flags.insert((*it)[2].str());
  flags.erase("--help");
  return flags;
}

/// The text of docs/cli.md's "## <name>" section (name as written after "## ", backticks and
/// "kforge " dropped).
std::string Section(const std::string& name) {
  std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/docs/cli.md");
  std::stringstream all;
  all << in.rdbuf();
  std::string doc = all.str(), body;
  bool inside = false;
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("## ", 0) == 0) {
      std::string title = std::regex_replace(line.substr(3), std::regex("`|kforge "), "");
      inside = title == name;
      continue;
    }
    if (inside) body += line + "\n";
  }
  return body;
}

std::set<std::string> HelpFlags(const std::string& args) {
  return FlagsIn(fakes::RunCommand(std::string(KFORGE_BINARY) + " " + args + " --help").out);
}

/// Flags of other programs that a section mentions in passing: compute-sanitizer's under verify,
/// scripts/setup.sh's under finetune-launch, the kforge serve line a `slurm serve` job runs.
const std::map<std::string, std::set<std::string>> kOtherPrograms = {
    {"verify", {"--tool"}},
    {"finetune-launch", {"--finetune"}},
    {"slurm", {"--listen", "--socket", "--address-file", "--idle-timeout"}}};

bool OtherProgramsFlag(const std::string& section, const std::string& flag) {
  auto it = kOtherPrograms.find(section);
  return it != kOtherPrograms.end() && it->second.count(flag) > 0;
}

TEST(DocsDriftTest, EveryFlagIsDocumentedAndEveryDocumentedFlagExists) {
  const struct {
    std::string section;
    std::vector<std::string> commands;
  } rows[] = {
      {"generate", {"generate"}},
      {"verify", {"verify"}},
      {"serve", {"serve"}},
      {"slurm", {"slurm generate", "slurm verify", "slurm tasks-check", "slurm serve"}},
      {"bench", {"bench"}},
      {"export", {"export"}},
      {"report", {"report"}},
      {"tasks",
       {"tasks list", "tasks show", "tasks import kernelbench", "tasks import module", "tasks build",
        "tasks check", "tasks audit"}},
      {"finetune-launch", {"finetune-launch"}},
      {"skill", {"skill check", "skill eval", "skill distill"}},
  };
  for (const auto& row : rows) {
    std::set<std::string> documented = FlagsIn(Section(row.section));
    ASSERT_FALSE(documented.empty()) << "no section \"## " << row.section << "\" in docs/cli.md";
    std::set<std::string> offered;
    for (const std::string& command : row.commands) {
      std::set<std::string> flags = HelpFlags(command);
      offered.insert(flags.begin(), flags.end());
    }
    EXPECT_GT(offered.size(), 2u) << "kforge " << row.section << " --help lists almost no flag";
    for (const std::string& flag : offered)
      EXPECT_TRUE(documented.count(flag))
          << "kforge " << row.section << " offers " << flag << " but docs/cli.md does not document it";
    for (const std::string& flag : documented)
      EXPECT_TRUE(offered.count(flag) || OtherProgramsFlag(row.section, flag))
          << "docs/cli.md documents " << flag << " for " << row.section << ", which has no such flag";
  }
}

}  // namespace
}  // namespace kforge::cli
