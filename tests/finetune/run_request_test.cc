// CheckRunRequest: the checks across finetune-launch's options, without the command line.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "kforge/finetune/run.h"

namespace kforge::finetune {
namespace {

RunRequest Valid() {
  RunRequest r;
  r.launch.data = "/data/train.jsonl";
  r.launch.model = "org/model";
  r.launch.out = "/runs/a";
  return r;
}

TEST(RunRequestTest, ValidRequestsPass) {
  EXPECT_TRUE(CheckRunRequest(Valid()).ok());
  RunRequest grpo = Valid();
  grpo.launch.trainer = Trainer::kGrpo;
  grpo.launch.data.clear();  // GRPO's prompts are the server's tasks by default
  grpo.launch.grpo.servers = {"/tmp/judge.sock"};
  grpo.launch.grpo.token_file = "/tmp/token";
  EXPECT_TRUE(CheckRunRequest(grpo).ok()) << CheckRunRequest(grpo).message();
}

TEST(RunRequestTest, EachCheckNamesItsFlag) {
  struct Case {
    const char* name;
    std::function<void(RunRequest&)> change;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"reward server with sft", [](RunRequest& r) { r.launch.grpo.servers = {"host:1"}; },
       "--reward-server and --token-file need --trainer grpo"},
      {"token file with sft", [](RunRequest& r) { r.launch.grpo.token_file = "/t"; },
       "--reward-server and --token-file need --trainer grpo"},
      {"no data", [](RunRequest& r) { r.launch.data.clear(); }, "--data is required (or --status RUN)"},
      {"no model", [](RunRequest& r) { r.launch.model.clear(); }, "--model is required (or --status RUN)"},
      {"no out", [](RunRequest& r) { r.launch.out.clear(); }, "--out is required (or --status RUN)"},
      {"push with slurm",
       [](RunRequest& r) {
         r.push_to_hub = "org/name";
         r.launch.launcher = Launcher::kSlurm;
       },
       "--push-to-hub with --launcher slurm: the model exists once the job has ended; upload DIR/model then "
       "(scripts/hub_push.py)"},
  };
  for (const Case& c : cases) {
    RunRequest r = Valid();
    c.change(r);
    Status s = CheckRunRequest(r);
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.message(), c.expect) << c.name;
  }
  RunRequest bad_repo = Valid();
  bad_repo.push_to_hub = "no-slash";
  Status s = CheckRunRequest(bad_repo);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("--push-to-hub", 0), 0u) << s.message();
}

}  // namespace
}  // namespace kforge::finetune
