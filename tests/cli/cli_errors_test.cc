// What a newcomer's mistakes get: one line in kforge's words (never CLI11's own texts), the closest
// flag for a mistyped one, and where a missing task folder comes from.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "fakes/command.h"

namespace kforge {
namespace {

fakes::CommandResult Kforge(const std::string& args) {
  return fakes::RunCommand(std::string(KFORGE_BINARY) + " " + args + " 2>&1");
}

TEST(CliErrorsTest, BadFlagValuesAndUnknownFlagsAreOneLineInKforgesWords) {
  const std::string tasks = std::string(" --tasks ") + KFORGE_SOURCE_DIR + "/tasks";
  struct Case {
    std::string args;
    std::string says;
  };
  const Case cases[] = {
      {"verify --trials 5000 x.json" + tasks,
       "kforge: --trials 5000: expected a number from 1 to 1000 (see --help)"},
      {"generate --teacher replay:x --out o --sed 5" + tasks,
       "kforge: unknown flag '--sed' of 'generate'; did you mean '--seed'? (see --help)"},
      {"verify --compile-onyl x.json" + tasks,
       "kforge: unknown flag '--compile-onyl' of 'verify'; did you mean '--compile-only'? (see --help)"},
      {"verify --zzzzzzzzzzzz x.json", "kforge: unknown flag '--zzzzzzzzzzzz' of 'verify' (see --help)"},
      {"generate --teacher replay:x --out a --out b" + tasks,
       "kforge: --out is given 2 times; it takes one value"},
      {"tasks import module m.py --id a/b --device gpu", "kforge: --device gpu: expected one of cpu,cuda"},
      {"export run --out o --filter ''", "kforge: --filter: empty: name at least one glob"},
  };
  for (const Case& c : cases) {
    fakes::CommandResult run = Kforge(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.out;
    EXPECT_NE(run.out.find(c.says), std::string::npos) << c.args << "\n" << run.out;
    EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << c.args << "\n" << run.out;
    for (const char* clis :
         {"not in range", "At Most", "were not expected", "was not expected", "Could not convert"})
      EXPECT_EQ(run.out.find(clis), std::string::npos) << c.args << "\n" << run.out;
  }
}

TEST(CliErrorsTest, EveryCommandsFailureIsOneLineWithItsName) {
  const std::string tasks = std::string(" --tasks ") + KFORGE_SOURCE_DIR + "/tasks";
  struct Case {
    std::string args;
    std::string line;  // the whole of stderr
  };
  const Case cases[] = {
      {"verify --rejudge --shard 0/2 run" + tasks,
       "kforge verify: --shard: not with --rejudge (it rewrites whole run folders)"},
      {"bench" + tasks, "kforge bench: give solutions, or --reference TASK... (not both)"},
      {"bench x.json --max-noise abc" + tasks,
       "kforge bench: --max-noise: expected a fraction such as 0.005 or 0.5%, got \"abc\""},
      {"serve" + tasks, "kforge serve: give --socket PATH, --listen HOST:PORT or both"},
      {"serve --socket /tmp/unused.sock --address-file /tmp/unused.address" + tasks,
       "kforge serve: --address-file needs --listen"},
      {"finetune-launch --data d.jsonl --out o", "kforge finetune-launch: --model is required (or --status RUN)"},
      {"finetune-launch --data d.jsonl --model m --out o --token-file t",
       "kforge finetune-launch: --reward-server and --token-file need --trainer grpo"},
      {"export - --out o --balance-cap 3 </dev/null", "kforge export: --balance-cap needs --balance level|tag"},
      {"generate --teacher replay:x --out o --batch-api" + tasks,
       "kforge generate: --batch-api: only --teacher anthropic (Message Batches) or openai (Batch API)"},
  };
  for (const Case& c : cases) {
    fakes::CommandResult run = Kforge(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.out;
    EXPECT_EQ(run.out, c.line + "\n") << c.args;
  }
}

TEST(CliErrorsTest, AMissingTaskFolderSaysHowToBuildOne) {
  fakes::CommandResult run =
      Kforge("generate --tasks /nonexistent/tasks --teacher replay:x --out /tmp/unused");
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("--tasks /nonexistent/tasks: no such folder"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("kforge tasks build tasks --out build/tasks"), std::string::npos) << run.out;
}

TEST(CliErrorsTest, ServeHelpListsNoSeedItRefuses) {
  fakes::CommandResult help = Kforge("serve --help");
  EXPECT_EQ(help.exit_code, 0) << help.out;
  EXPECT_NE(help.out.find("--socket"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("--seed"), std::string::npos) << help.out;
  fakes::CommandResult seeded =
      Kforge(std::string("serve --socket /tmp/unused.sock --seed 3 --tasks ") + KFORGE_SOURCE_DIR + "/tasks");
  EXPECT_EQ(seeded.exit_code, 2) << seeded.out;
  EXPECT_NE(seeded.out.find("--seed: each client brings its own"), std::string::npos) << seeded.out;
}

}  // namespace
}  // namespace kforge
