// The parts of the teacher loop: prompt templates, task views, candidates from replies, feedback and
// the choice of the best attempt.
#include <gtest/gtest.h>

#include "generate/episode.h"
#include "generate/feedback.h"
#include "generate/prompts.h"
#include "generate/reply.h"
#include "generate/task_view.h"
#include "kforge/common/task.h"

namespace kforge::generate {
namespace {

using nlohmann::json;

TEST(PromptsTest, RenderReplacesPlaceholdersOnceAndRefusesUnknownOnes) {
  auto text = Render("a {{x}} b {{y}}", {{"x", "{{y}}"}, {"y", "2"}}, "t");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "a {{y}} b 2") << "values are not expanded again";
  auto unknown = Render("{{nope}}", {}, "task.md");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("task.md: unknown placeholder {{nope}}"), std::string::npos);
  EXPECT_FALSE(Render("{{open", {}, "t").ok());
}

TEST(PromptsTest, TheBundledTemplatesRenderWithWhatGenerateSupplies) {
  auto prompts = PromptSet::Load(std::string(KFORGE_SOURCE_DIR) + "/prompts");
  ASSERT_TRUE(prompts.ok()) << prompts.status().message();
  EXPECT_EQ(prompts->hash.rfind("sha256:", 0), 0u);
  for (common::OpPolicy policy :
       {common::OpPolicy::kNone, common::OpPolicy::kLibrary, common::OpPolicy::kAll}) {
    auto system = Render(prompts->system,
                         {{"device", "d"},
                          {"arch", "sm_90a"},
                          {"protocol", "p"},
                          {"library_ops", prompts->LibraryOps(policy)}},
                         "system.md");
    ASSERT_TRUE(system.ok()) << system.status().message();
    // The prompt offers the ops the run allows, and no others.
    EXPECT_EQ(system->find("\"op\": \"linear\"") != std::string::npos, policy != common::OpPolicy::kNone);
    EXPECT_EQ(system->find("aten::") != std::string::npos, policy == common::OpPolicy::kAll);
    EXPECT_EQ(system->find("No library ops in this run") != std::string::npos,
              policy == common::OpPolicy::kNone);
  }
  EXPECT_TRUE(
      Render(prompts->task, {{"task_id", "t"}, {"task_view", "v"}, {"tensors", "x"}}, "task.md").ok());
  EXPECT_TRUE(Render(prompts->feedback, {{"result", "r"}, {"next_step", "n"}}, "feedback.md").ok());
  auto missing = PromptSet::Load("/nonexistent");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/system.md"), std::string::npos);
}

TEST(TaskViewTest, ViewsShowWhatTheyNameAndTheTensorTableIsComplete) {
  auto task = common::LoadTask(std::string(KFORGE_SOURCE_DIR) + "/tasks/demo/relu");
  ASSERT_TRUE(task.ok()) << task.status().message();
  auto code = RenderTaskView(*task, View::kCode, "class Model: pass\n");
  ASSERT_TRUE(code.ok());
  EXPECT_NE(code->find("```python\nclass Model: pass\n```"), std::string::npos);
  auto kb = RenderTaskView(*task, View::kKernelBench, "class Model: pass\n");
  ASSERT_TRUE(kb.ok());
  EXPECT_NE(kb->find("You are given the following architecture"), std::string::npos);
  auto nl = RenderTaskView(*task, View::kNlSpec, "");
  ASSERT_TRUE(nl.ok());
  EXPECT_NE(nl->find(task->description), std::string::npos);
  EXPECT_NE(nl->find(task->spec), std::string::npos);
  EXPECT_EQ(kViewNames.Parse("pictures"), std::nullopt);
  EXPECT_EQ(kViewNames.Spellings(), "code, nl, spec, nl+spec or kernelbench");
  std::string table = RenderTensorTable(*task);
  EXPECT_NE(table.find("- input `x`: float32[M, N] = [1024, 1024]"), std::string::npos) << table;
  EXPECT_NE(table.find("- output `out0`"), std::string::npos) << table;
  EXPECT_NE(table.find("variant `odd`: M = 333, N = 1000"), std::string::npos) << table;
}

TEST(ReplyTest, CandidatesFromTextAndFromToolCalls) {
  const std::string text =
      "x\n```cuda\n__global__ void k() {}\n```\n```json\n{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], "
      "\"block\": [32], \"args\": []}]}\n```\n";
  auto one = CandidatesOf(common::Message::Assistant(text), dataset::Protocol::kText, "demo/relu");
  ASSERT_EQ(one.size(), 1u);
  ASSERT_TRUE(one[0].solution.ok()) << one[0].solution.status().message();
  EXPECT_EQ(one[0].solution->task, "demo/relu");
  // A reply that quotes the previous attempt first is read by its last blocks.
  const std::string quoted = "Before:\n```cuda\nold\n```\n```json\n{}\n```\nNow:\n" + text;
  auto last = CandidatesOf(common::Message::Assistant(quoted), dataset::Protocol::kText, "demo/relu");
  ASSERT_EQ(last.size(), 1u);
  ASSERT_TRUE(last[0].solution.ok()) << last[0].solution.status().message();
  EXPECT_EQ(last[0].solution->source, "__global__ void k() {}\n");
  EXPECT_FALSE(common::ParseSolutionText(quoted, "reply").ok()) << "verify stays strict";
  auto none = CandidatesOf(common::Message::Assistant("no code"), dataset::Protocol::kText, "demo/relu");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_FALSE(none[0].solution.ok());

  json args = {{"source", "__global__ void k() {}"},
               {"launches", {{{"kernel", "k"}, {"grid", {1}}, {"block", {32}}, {"args", json::array()}}}},
               {"task", "other/task"}};
  common::Message calls = common::Message::Assistant(
      "", {{"c1", "run", args}, {"c2", "submit", args}, {"c3", "shell", args}, {"c4", "run", "not json"}});
  auto found = CandidatesOf(calls, dataset::Protocol::kTools, "demo/relu");
  ASSERT_EQ(found.size(), 4u);
  ASSERT_TRUE(found[0].solution.ok()) << found[0].solution.status().message();
  EXPECT_EQ(found[0].solution->task, "demo/relu") << "the task is generate's, not the model's";
  EXPECT_FALSE(found[0].submit);
  EXPECT_TRUE(found[1].submit);
  EXPECT_EQ(found[1].tool_call_id, "c2");
  EXPECT_NE(found[2].solution.status().message().find("unknown tool \"shell\""), std::string::npos);
  EXPECT_FALSE(found[3].solution.ok());
  EXPECT_TRUE(CandidatesOf(common::Message::Assistant("just text"), dataset::Protocol::kTools, "t").empty());
  std::vector<common::ToolSpec> tools = SolutionTools();
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[0].parameters["required"], json({"source", "launches"}));
}

dataset::Attempt MakeAttempt(const std::string& status, bool correct, std::optional<double> speedup,
                             bool compiled = true) {
  dataset::Attempt a;
  if (status != dataset::kNoSolution) a.status = *common::kVerdictStatusNames.Parse(status);
  a.correct = correct;
  a.speedup = speedup;
  a.compiled = compiled;
  return a;
}

TEST(EpisodeTest, BestIsTheFastestCorrectElseTheLastCompiledElseTheLast) {
  struct Case {
    std::vector<dataset::Attempt> attempts;
    std::optional<int> best;
  };
  const Case cases[] = {
      {{}, std::nullopt},
      {{MakeAttempt("compile_error", false, {}, false)}, 0},
      {{MakeAttempt("mismatch", false, {}), MakeAttempt("compile_error", false, {}, false)}, 0},
      {{MakeAttempt("ok", true, 1.2), MakeAttempt("ok", true, 1.5), MakeAttempt("ok", true, 1.1)}, 1},
      {{MakeAttempt("ok", true, 0.9), MakeAttempt("mismatch", false, {})}, 0},
  };
  for (const Case& c : cases) EXPECT_EQ(BestAttempt(c.attempts), c.best);
}

TEST(FeedbackTest, SaysWhatWentWrongWhereAndHowFast) {
  dataset::Attempt compile = MakeAttempt("compile_error", false, {}, false);
  compile.verdict.emplace();
  compile.verdict->status = common::VerdictStatus::kCompileError;
  compile.verdict->message = "kernel.cu(2): error: expected a \";\"";
  compile.verdict->compile = common::CompileFacts{};
  compile.verdict->compile->log = "kernel.cu(2): error: expected a \";\"\n";
  std::string text = DescribeAttempt(compile, "line one\nint x = 1\nline three\n");
  EXPECT_NE(text.find("Compile error"), std::string::npos);
  EXPECT_NE(text.find("line 2: int x = 1"), std::string::npos) << text;

  dataset::Attempt mismatch = MakeAttempt("mismatch", false, {});
  mismatch.verdict.emplace();
  mismatch.verdict->status = common::VerdictStatus::kMismatch;
  mismatch.verdict->message = "out0 differs";
  mismatch.verdict->trials = *common::TrialRecordsFromJson(json::array({{{"variant", "default"},
                                            {"trial", 0},
                                            {"outputs",
                                             {{{"name", "out0"},
                                               {"mismatches", 12},
                                               {"numel", 100},
                                               {"max_abs_err", 0.5},
                                               {"max_rel_err", "inf"},
                                               {"rel_l2_err", 0.1},
                                               {"first_mismatch", 7}}}}}}), "trials");
  mismatch.verdict->compile = *common::CompileFactsFromJson(
      {{"kernels", {{"k", {{"registers", 40}, {"spill_store_bytes", 8}, {"spill_load_bytes", 8}}}}}}, "compile");
  text = DescribeAttempt(mismatch, "");
  EXPECT_NE(text.find("12 of 100 elements differ"), std::string::npos) << text;
  EXPECT_NE(text.find("max rel err inf"), std::string::npos) << text;
  EXPECT_NE(text.find("first at flat index 7"), std::string::npos) << text;
  EXPECT_NE(text.find("40 registers, spills: 8 bytes stored, 8 loaded"), std::string::npos) << text;

  dataset::Attempt fast = MakeAttempt("ok", true, 1.5);
  json bench = {{"status", "ok"},
                {"candidate", {{"count", 10}, {"median_ms", 2.0}}},
                {"reference", {{"count", 10}, {"median_ms", 3.0}}},
                {"speedup", {{"ratio", 1.5}}},
                {"roofline", {{"achieved_gbps", 2000.0}, {"sol_pct", 47.0}}},
                {"flags", json::array()}};
  fast.bench = *common::BenchResultFromJson(bench, "bench");
  text = DescribeAttempt(fast, "");
  EXPECT_NE(text.find("speedup 1.50x"), std::string::npos) << text;
  EXPECT_NE(text.find("2000 GB/s, 47.0% of speed of light"), std::string::npos) << text;
  EXPECT_EQ(text.find("Roofline:"), std::string::npos) << "no floor in the record: no roofline line";

  // The whole roofline of a bench record: what the task moves and computes, the floor, the reference.
  bench["roofline"] = {{"flops", 2.5e9},     {"bytes", 8388608.0}, {"peak_gbps", 4000.0},
                       {"peak_tflops", 50.0}, {"sol_ms", 0.05},     {"achieved_gbps", 4.19},
                       {"sol_pct", 2.5},      {"reference_sol_pct", 1.26}};
  fast.bench = *common::BenchResultFromJson(bench, "bench");
  text = DescribeAttempt(fast, "");
  EXPECT_NE(text.find("4 GB/s, 2.5% of speed of light (the reference: 1.3%)"), std::string::npos) << text;
  EXPECT_NE(text.find("Roofline: the task moves at least 8.39 MB and computes 2.5 GFLOP; at 4000 GB/s and "
                      "50 TFLOP/s its floor is 0.05 ms (compute-bound)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(NextStep(fast, 2.0, false).find("at least 2.00x"), std::string::npos);
  EXPECT_NE(NextStep(MakeAttempt("no_solution", false, {}, false), 1, false).find("complete solution"),
            std::string::npos);
}

}  // namespace
}  // namespace kforge::generate
