// `kforge skill distill` from a recorded run with a teacher on 127.0.0.1: the verified episodes
// (correct, speedup's lower bound above 1x) become references and evals, the failures they repaired
// reach the teacher as pitfalls, and the folder written passes the check.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/http_server.h"
#include "fakes/task_root.h"
#include "kforge/dataset/trajectory.h"
#include "kforge/skill/skill.h"

namespace kforge::skill {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

dataset::Attempt Correct(int turn, const std::string& source, double speedup, double low) {
  dataset::Attempt a;
  a.turn = turn;
  a.status = common::VerdictStatus::kOk;
  a.compiled = a.correct = true;
  a.speedup = speedup;
  const nlohmann::json solution = {
      {"schema", "kforge.solution/1"},
      {"task", "x"},
      {"source", source},
      {"launches", {{{"kernel", "k"}, {"grid", {1}}, {"block", {256}}, {"args", {"x", "out0"}}}}}};
  a.solution = *common::SolutionFromJson(solution, "test");
  a.solution_as_read = std::make_shared<const nlohmann::json>(solution);  // as a record holds it
  a.bench = *common::BenchResultFromJson({{"speedup", {{"ratio", speedup}, {"ci", {low, speedup + 0.1}}}}}, "bench");
  return a;
}

dataset::Trajectory Episode(const std::string& task, std::vector<dataset::Attempt> attempts) {
  dataset::Trajectory t;
  t.id = "r/" + task + "/0";
  t.run_id = "r";
  t.task.id = task;
  t.attempts = std::move(attempts);
  t.best = static_cast<int>(t.attempts.size()) - 1;
  t.stop = dataset::StopReason::kTargetReached;
  t.device = common::DeviceRecord{};
  t.device->name = "NVIDIA H200";
  t.device->cc = "9.0";
  for (const dataset::Attempt& a : t.attempts) {
    (void)a;
    t.messages.push_back(common::Message::Assistant("..."));
  }
  return t;
}

TEST(SkillDistillTest, AFolderFromVerifiedEpisodesWithPitfallsThatPassesTheCheck) {
  const fs::path dir = fs::temp_directory_path() / ("kforge-skill-distill-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "run");
  dataset::Attempt broken;
  broken.turn = 1;
  broken.status = common::VerdictStatus::kCompileError;
  broken.verdict.emplace();
  broken.verdict->task = "kernelbench/level1/23_Softmax";
  broken.verdict->status = common::VerdictStatus::kCompileError;
  broken.verdict->message = "line 3: expected a \";\"";
  dataset::Attempt mismatch;
  mismatch.turn = 1;
  mismatch.status = common::VerdictStatus::kMismatch;
  mismatch.verdict.emplace();
  mismatch.verdict->task = "core/log_softmax";
  mismatch.verdict->status = common::VerdictStatus::kMismatch;
  mismatch.verdict->message = "out0: 512 of 1048576 elements differ";
  dataset::Trajectory slow = Episode("core/gelu", {Correct(1, "SLOW-GELU-KERNEL", 1.05, 0.97)});
  dataset::Trajectory wrong = Episode("core/matmul", {mismatch});
  {
    std::ofstream out(dir / "run" / "trajectories.jsonl");
    for (const dataset::Trajectory& t :
         {Episode("kernelbench/level1/23_Softmax", {broken, Correct(2, "SOFTMAX-KERNEL", 2.5, 2.2)}),
          Episode("core/log_softmax", {mismatch, Correct(2, "LOG-SOFTMAX-KERNEL", 1.8, 1.6)}),
          Episode("demo/relu", {Correct(1, "RELU-KERNEL", 1.3, 1.1)}), slow, wrong})
      out << dataset::ToJson(t).dump() << "\n";
  }
  fakes::FakeHttpServer teacher([](const fakes::HttpExchange&) {
    json reply = {{"id", "m"},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", "claude-test"},
                  {"content",
                   {{{"type", "text"},
                     {"text",
                      "DESCRIPTION: Softmax and ReLU kernels: row reductions in one warp; use for "
                      "softmax-like tasks.\nBODY:\n# Row softmax\n\nOne warp per row. See "
                      "[softmax](references/softmax.md).\n"}}}},
                  {"stop_reason", "end_turn"},
                  {"usage", {{"input_tokens", 5000}, {"output_tokens", 300}}}};
    return fakes::FakeReply::Json(200, reply.dump());
  });
  const fs::path out = dir / "skills" / "softmax-relu";
  const std::string command = "ANTHROPIC_API_KEY=sk-test " + std::string(KFORGE_BINARY) + " skill distill " +
                              fakes::ShellQuote(dir / "run") +
                              " --teacher anthropic --model claude-test --base-url " + teacher.url() +
                              " --license MIT --out " + fakes::ShellQuote(out) + " 2>&1";
  fakes::CommandResult run = fakes::RunCommand(command);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("from 3 verified episodes (2 pitfalls; families log_softmax, relu, softmax)"),
            std::string::npos)
      << run.out;

  // What the teacher was shown: the verified kernels and the repaired failures, not the others.
  ASSERT_EQ(teacher.request_count(), 1);
  const std::string prompt = json::parse(teacher.requests()[0].body)["messages"][0]["content"].dump();
  for (const char* shown : {"SOFTMAX-KERNEL", "LOG-SOFTMAX-KERNEL", "RELU-KERNEL",
                            "compile_error (kernelbench/level1/23_Softmax, turn 1, fixed in turn 2)",
                            "512 of 1048576 elements differ", "references/softmax.md"})
    EXPECT_NE(prompt.find(shown), std::string::npos) << shown;
  EXPECT_EQ(prompt.find("SLOW-GELU-KERNEL"), std::string::npos) << "its lower bound is below 1x";

  auto skill = LoadSkill(out);
  ASSERT_TRUE(skill.ok()) << skill.status().message();
  EXPECT_EQ(skill->name, "softmax-relu");
  EXPECT_EQ(skill->license, "MIT");
  EXPECT_NE(skill->description.find("row reductions in one warp"), std::string::npos);
  EXPECT_EQ(skill->body.substr(0, 13), "# Row softmax");
  std::map<std::string, std::string> metadata(skill->metadata.begin(), skill->metadata.end());
  EXPECT_EQ(metadata["teacher"], "anthropic claude-test");
  EXPECT_EQ(metadata["arch"], "NVIDIA H200 (cc 9.0)");
  EXPECT_EQ(metadata["trajectories"], "3");
  EXPECT_EQ(metadata["trajectories-hash"].substr(0, 7), "sha256:");
  const std::string softmax = skill->readable.at("references/softmax.md");
  EXPECT_NE(softmax.find("## kernelbench/level1/23_Softmax (2.50x, lower bound 2.20x)"), std::string::npos)
      << softmax;
  EXPECT_NE(skill->readable.at("references/log_softmax.md").find("LOG-SOFTMAX-KERNEL"), std::string::npos);
  EXPECT_NE(skill->readable.at("references/relu.md").find("RELU-KERNEL"), std::string::npos);
  EXPECT_EQ(skill->families, (std::vector<std::string>{"log_softmax", "relu", "softmax"}));
  ASSERT_EQ(skill->evals.size(), 3u);
  EXPECT_EQ(skill->evals[0].task, "core/log_softmax");
  EXPECT_EQ(skill->evals[0].family, "log_softmax") << "an id family of its own";
  EXPECT_TRUE(fs::exists(out / "scripts" / "verify.sh"));
  EXPECT_EQ(
      fakes::RunCommand(std::string(KFORGE_BINARY) + " skill check " + fakes::ShellQuote(out)).exit_code, 0);

  // A second distill into the same folder is refused before anything is sent.
  fakes::CommandResult again = fakes::RunCommand(command);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.out.find("already exists"), std::string::npos) << again.out;
  EXPECT_EQ(teacher.request_count(), 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kforge::skill
