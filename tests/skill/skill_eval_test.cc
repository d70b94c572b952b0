// `kforge skill eval` with scripted students on 127.0.0.1 judged by the fake GPU worker: a student
// that is right more often with the skill in its prompt (and not with the placebo) gives its known
// lift inside the interval and is called beneficial; one the skill does not help gives an interval
// around zero. Held-out filtering leaves the skill's own families out; the placebo has the skill's
// length and none of its words. `kforge report --skill-eval` shows the eval's numbers.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/http_server.h"
#include "kforge/common/task.h"
#include "kforge/skill/eval.h"
#include "kforge/skill/eval_report.h"
#include "skill/skill_folder.h"

namespace kforge::skill {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::SkillFolder;

const std::string kTechnique = "Use one warp per row and keep the running max in a register.";

/// A task tree of copies of demo/relu: evalsuite/t0..t7 (tag elementwise) and evalsuite/softmax_1..2
/// (also elementwise, but of the skill's family by their id).
class EvalTasks {
 public:
  EvalTasks() {
    fs::remove_all(root_);
    std::vector<std::string> names = {"t0", "t1", "t2", "t3",        "t4",
                                      "t5", "t6", "t7", "softmax_1", "softmax_2"};
    const fs::path demo = fs::path(KFORGE_SOURCE_DIR) / "tasks/demo/relu";
    for (const std::string& name : names) {
      const fs::path dir = root_ / "evalsuite" / name;
      fs::create_directories(dir);
      fs::copy_file(demo / "reference.py", dir / "reference.py");
      json task = json::parse(std::ifstream(demo / "task.json"));
      task["id"] = "evalsuite/" + name;
      task["tags"] = {"elementwise"};
      std::ofstream(dir / "task.json") << task.dump(2);
    }
  }
  ~EvalTasks() { fs::remove_all(root_); }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_ = fs::temp_directory_path() / ("kforge-skill-eval-tasks-" + std::to_string(getpid()));
};

std::string Reply(bool correct) {
  json plan = {{"launches",
                {{{"kernel", "relu"},
                  {"grid", {"cdiv(numel(x), 256)"}},
                  {"block", {256}},
                  {"args", {"x", "out0", "i64:numel(x)"}}}}}};
  return "```cuda\nextern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
         "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n// fake:" +
         std::string(correct ? "ok" : "mismatch") + "\n```\n```json\n" + plan.dump() + "\n```\n";
}

/// Students on an OpenAI-compatible server: for each (model, arm, task), the first `counts[arm][i]` of
/// the 4 samples of task t<i> are right. The arm is read from the system prompt.
class ScriptedStudents {
 public:
  using Counts = std::map<std::string, std::vector<int>>;  // arm -> right samples of t0..t7
  explicit ScriptedStudents(std::map<std::string, Counts> models)
      : models_(std::move(models)), server_([this](const fakes::HttpExchange& ex) { return Answer(ex); }) {}
  std::string url() const { return server_.url() + "/v1"; }
  int requests() const { return server_.request_count(); }

 private:
  fakes::FakeReply Answer(const fakes::HttpExchange& ex) {
    json body = json::parse(ex.body);
    const std::string model = body["model"];
    const std::string system = body["messages"][0]["content"];
    const std::string user = body["messages"][1]["content"];
    const std::string arm = system.find(kTechnique) != std::string::npos    ? "skill"
                            : system.find("## Skill:") != std::string::npos ? "placebo"
                                                                            : "none";
    std::smatch m;
    std::regex_search(user, m, std::regex("evalsuite/t([0-9])"));
    const int task = m.empty() ? -1 : std::stoi(m[1].str());
    bool correct = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const int seen = seen_[model + "/" + arm + "/" + std::to_string(task)]++;
      correct = task >= 0 && seen < models_.at(model).at(arm).at(static_cast<size_t>(task));
    }
    json message = {{"role", "assistant"}, {"content", Reply(correct)}};
    json completion = {{"id", "c"},
                       {"object", "chat.completion"},
                       {"model", model},
                       {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
                       {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 200}}}};
    return fakes::FakeReply::Json(200, completion.dump());
  }

  std::map<std::string, Counts> models_;
  std::mutex mu_;
  std::map<std::string, int> seen_;
  fakes::FakeHttpServer server_;
};

std::string SkillMd() {
  return "---\nname: softmax-rows\ndescription: Row softmax kernels with one warp per row.\n---\n# "
         "Softmax\n\n" +
         kTechnique + "\n";
}

std::string Fixed(const json& v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v.get<double>());
  return buf;
}

std::string PValue(const json& p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), p.get<double>() < 0.001 ? "%.2g" : "%.4f", p.get<double>());
  return buf;
}

/// Screenshots `page` with headless Chromium into the build folder, for a person to look at.
void Screenshot(const fs::path& page, const std::string& name) {
  if (fakes::RunCommand("command -v chromium >/dev/null 2>&1").exit_code != 0) return;
  const fs::path png = fs::path(KFORGE_BINARY).parent_path() / name;
  fs::remove(png);
  fakes::CommandResult run = fakes::RunCommand(
      "chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2400 "
      "--screenshot=" +
      png.string() + " file://" + page.string() + " 2>&1");
  ASSERT_TRUE(fs::exists(png)) << run.out;
  EXPECT_GT(fs::file_size(png), 50000u) << "a page with tables and plots, not a blank one";
  std::printf("report page: %s\n", png.c_str());
}

/// `kforge report` on the helped student's runs with the eval's folder: the page has the eval's
/// section (arms, lifts, verdicts, tasks left out) after the runs' metrics, with the numbers of
/// eval.json, and the table ends with the eval's summary line.
void ExpectTheReportShows(const fs::path& out, const json& eval) {
  const fs::path page = out.parent_path() / "report.html";  // never inside a folder the report reads
  const std::string runs = (out / "helped/none").string() + " " + (out / "helped/skill").string();
  fakes::CommandResult report =
      fakes::RunCommand(std::string(KFORGE_BINARY) + " report " + runs + " --skill-eval " + out.string() +
                        " --html " + page.string());
  ASSERT_EQ(report.exit_code, 0) << report.out;
  const json& helped = eval["models"][0];
  const json& lift = helped["lifts"]["skill_vs_none"];
  const json& zero = eval["models"][1]["lifts"]["skill_vs_none"];
  const std::string summary =
      "skill eval softmax-rows (" + eval["skill"]["hash"].get<std::string>().substr(0, 19) +
      "): 8 held-out tasks x 4 samples, 2 left out; helped: beneficial, lift 0.562 [" +
      Fixed(lift["low"], 3) + ", " + Fixed(lift["high"], 3) + "], Holm p " +
      PValue(lift["mcnemar"]["holm_p"]) + "; unhelped: no lift shown, lift 0.000 [" + Fixed(zero["low"], 3) +
      ", " + Fixed(zero["high"], 3) + "]";
  EXPECT_NE(report.out.find(summary), std::string::npos) << summary << "\n" << report.out;
  EXPECT_NE(report.out.find("run " + (out / "helped/skill").string()), std::string::npos) << report.out;

  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), {});
  const json& skill = helped["arms"]["skill"];
  const json& geomean = skill["geomean_speedup_vs_none"];
  for (const std::string& expected :
       {std::string("<h2>Skill eval: softmax-rows</h2>"),
        std::string("<li>evalsuite/softmax_1: its family softmax is one the skill was built from</li>"),
        std::string("<h3>helped: <span class=\"yes\">beneficial</span></h3>"),
        std::string("<h3>unhelped: <span class=\"no\">no lift shown</span></h3>"),
        "<tr><td>skill</td><td>27/32</td><td>0.84</td><td>0.84</td><td>0.00</td><td>" +
            Fixed(geomean["arm"], 2) + "x / " + Fixed(geomean["none"], 2) +
            "x (7)</td><td>38400</td><td>$0.0000</td><td>mismatch 5</td></tr>",
        std::string("<tr><td>none</td><td>9/32</td>"), std::string("<td>mismatch 23</td></tr>"),
        std::string("<tr><td>teacher</td><td>32/32</td>"),
        "<tr><td>skill_vs_none</td><td>0.562</td><td>[" + Fixed(lift["low"], 3) + ", " +
            Fixed(lift["high"], 3) + "]</td><td>" + PValue(lift["mcnemar"]["p"]) + " (" +
            lift["mcnemar"]["only_arm"].dump() + " vs " + lift["mcnemar"]["only_baseline"].dump() +
            ")</td><td>" + PValue(lift["mcnemar"]["holm_p"]) + "</td><td>" + Fixed(lift["mde"], 3) +
            "</td><td></td></tr>",
        "<td>" + zero["worse_tasks"][0]["task"].get<std::string>() + ", " +
            zero["worse_tasks"][1]["task"].get<std::string>() + ", " +
            zero["worse_tasks"][2]["task"].get<std::string>() + "</td></tr>",
        std::string(".skill-eval .yes { color: #070; }")})
    EXPECT_NE(html.find(expected), std::string::npos) << expected;
  EXPECT_LT(html.find("<h2>Metrics</h2>"), html.find("<h2>Skill eval: softmax-rows</h2>"));
  EXPECT_LT(html.find("<h2>Skill eval: softmax-rows</h2>"), html.find("<h2>Plots</h2>"));
  Screenshot(page, "report_skill_eval_test.png");
}

TEST(SkillEvalTest, AHelpedStudentShowsItsKnownLiftAndAnUnhelpedOneAnIntervalAroundZero) {
  SkillFolder skill("softmax-rows", {{"SKILL.md", SkillMd()}, {"evals/evals.json", test_support::kEvals}});
  EvalTasks tasks;
  // helped: skill - none = (3, 2, 2, 1, 3, 2, 2, 3) / 4, mean 0.5625; the placebo is no better than none.
  // unhelped: skill - none = (1, -1, 1, -1, 0, 1, -1, 0) / 4, mean 0.
  ScriptedStudents students({{"helped",
                              {{"skill", {4, 3, 4, 2, 3, 4, 3, 4}},
                               {"none", {1, 1, 2, 1, 0, 2, 1, 1}},
                               {"placebo", {1, 1, 2, 1, 0, 2, 1, 1}}}},
                             {"teacher", {{"none", {4, 4, 4, 4, 4, 4, 4, 4}}}},
                             {"unhelped",
                              {{"skill", {2, 1, 3, 1, 2, 2, 1, 2}},
                               {"none", {1, 2, 2, 2, 2, 1, 2, 2}},
                               {"placebo", {1, 2, 2, 2, 2, 1, 2, 2}}}}});
  EvalOptions options;
  options.skill_dir = skill.dir();
  options.models = {"helped", "unhelped"};
  options.teacher_model = "teacher";
  options.holdout = {"elementwise"};
  options.out = skill.root() / "eval";
  options.resamples = 4000;
  options.bootstrap_seed = 11;
  generate::GenerateOptions& run = options.run;
  run.tasks_root = tasks.root();
  run.teacher = llm::ProviderSpec{llm::ProviderKind::kOpenAi, ""};
  run.provider.base_url = students.url();
  run.provider.api_key_env = "KFORGE_SKILL_EVAL_TEST_KEY";
  setenv("KFORGE_SKILL_EVAL_TEST_KEY", "sk-test", 1);
  run.samples = 4;
  run.max_turns = 1;
  run.concurrency = 8;
  run.probe = false;
  run.prompts_dir = fs::path(KFORGE_SOURCE_DIR) / "prompts";
  run.bench.verify.worker_program = KFORGE_FAKE_WORKER;
  run.bench.verify.trials = 1;
  run.bench.measure.max_seconds = 0.05;

  auto result = RunSkillEval(options);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const json& eval = *result;
  EXPECT_EQ(students.requests(), 2 * 3 * 8 * 4 + 8 * 4) << "the teacher arm runs once";
  EXPECT_EQ(eval["tasks"].size(), 8u);
  EXPECT_EQ(eval["compile_only"], false) << "judged by the fake GPU worker";
  ASSERT_EQ(eval["left_out"].size(), 2u);
  EXPECT_EQ(eval["left_out"][0]["task"], "evalsuite/softmax_1");
  EXPECT_EQ(eval["left_out"][0]["reason"], "its family softmax is one the skill was built from");
  for (const json& id : eval["tasks"]) EXPECT_EQ(id.get<std::string>().find("softmax"), std::string::npos);

  const json& helped = eval["models"][0];
  ASSERT_EQ(helped["model"], "helped");
  EXPECT_EQ(helped["arms"]["skill"]["correct"], 27);
  EXPECT_EQ(helped["arms"]["none"]["correct"], 9);
  EXPECT_EQ(helped["arms"]["none"]["failures"]["mismatch"], 23);
  EXPECT_EQ(helped["arms"]["skill"]["fast_p"]["1.5"], 27.0 / 32) << "the fake times every kernel at 2x";
  EXPECT_EQ(helped["arms"]["skill"]["fast_p"]["2"], 0.0) << "a lower bound at 2x does not clear 2";
  EXPECT_EQ(helped["arms"]["skill"]["geomean_speedup_vs_none"]["tasks"], 7)
      << "t4 has no correct episode without the skill";
  const json& lift = helped["lifts"]["skill_vs_none"];
  EXPECT_DOUBLE_EQ(lift["lift"].get<double>(), 0.5625);
  EXPECT_LT(lift["low"].get<double>(), 0.5625);
  EXPECT_GT(lift["high"].get<double>(), 0.5625);
  EXPECT_GT(lift["low"].get<double>(), 0.0);
  EXPECT_EQ(lift["mcnemar"]["only_arm"].get<int>() - lift["mcnemar"]["only_baseline"].get<int>(), 27 - 9);
  EXPECT_LT(lift["mcnemar"]["holm_p"].get<double>(), 0.05);
  EXPECT_TRUE(lift["worse_tasks"].empty());
  EXPECT_DOUBLE_EQ(helped["lifts"]["placebo_vs_none"]["lift"].get<double>(), 0.0);
  EXPECT_GT(helped["lifts"]["skill_vs_placebo"]["low"].get<double>(), 0.0);
  EXPECT_EQ(helped["beneficial"], true);
  EXPECT_EQ(helped["arms"]["teacher"]["correct"], 32);
  EXPECT_DOUBLE_EQ(helped["lifts"]["teacher_vs_none"]["lift"].get<double>(), 23.0 / 32);
  EXPECT_EQ(eval["models"][1]["arms"]["teacher"]["correct"], 32) << "shared by every model";

  const json& unhelped = eval["models"][1];
  const json& zero = unhelped["lifts"]["skill_vs_none"];
  EXPECT_DOUBLE_EQ(zero["lift"].get<double>(), 0.0);
  EXPECT_LT(zero["low"].get<double>(), 0.0);
  EXPECT_GT(zero["high"].get<double>(), 0.0);
  ASSERT_EQ(zero["worse_tasks"].size(), 3u);
  EXPECT_EQ(zero["worse_tasks"][0]["task"], "evalsuite/t1");
  EXPECT_EQ(unhelped["beneficial"], false);
  EXPECT_EQ(unhelped["verdict"], "no lift shown");
  EXPECT_GT(zero["mde"].get<double>(), 0.0);

  json written = json::parse(std::ifstream(options.out / "eval.json"));
  EXPECT_EQ(written, eval);
  const std::string table = EvalTable(eval);
  EXPECT_NE(table.find("verdict: beneficial"), std::string::npos) << table;
  EXPECT_NE(table.find("left out evalsuite/softmax_2"), std::string::npos) << table;
  std::printf("%s", table.c_str());
  const std::string html = EvalHtml(eval);
  EXPECT_NE(html.find("<h2>helped: <span class=\"yes\">beneficial</span></h2>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>skill_vs_none</td><td>0.562</td>"), std::string::npos) << html;
  ExpectTheReportShows(options.out, eval);
}

TEST(SkillEvalTest, ThePlaceboHasTheSkillsLengthsAndNoneOfItsWords) {
  SkillFolder folder("softmax-rows", {{"SKILL.md", SkillMd()}});
  auto skill = LoadSkill(folder.dir());
  ASSERT_TRUE(skill.ok()) << skill.status().message();
  generate::ContextSkill a = MakePlacebo(*skill), b = MakePlacebo(*skill);
  EXPECT_EQ(a.body, b.body) << "deterministic";
  EXPECT_EQ(a.body.size(), skill->body.size());
  EXPECT_EQ(a.description.size(), skill->description.size());
  EXPECT_EQ(a.name, skill->name);
  for (const char* word : {"warp", "register", "max"})
    EXPECT_EQ(a.body.find(word), std::string::npos) << word;
  EXPECT_NE(a.hash, skill->hash);
  folder.Write("SKILL.md", SkillMd() + "More.\n");
  auto changed = LoadSkill(folder.dir());
  ASSERT_TRUE(changed.ok());
  EXPECT_NE(MakePlacebo(*changed).body.substr(0, 40), a.body.substr(0, 40)) << "another skill, another draw";
}

TEST(SkillEvalTest, FamiliesComeFromTagsAndIds) {
  common::Task task;
  task.id = "kernelbench/level1/23_Softmax";
  task.tags = {"Reduction"};
  EXPECT_EQ(TaskFamilies(task), (std::vector<std::string>{"reduction", "softmax"}));
  task.id = "core/relu_3";
  task.tags = {};
  EXPECT_EQ(TaskFamilies(task), std::vector<std::string>{"relu"});
  task.id = "core/conv2d_3x3";
  EXPECT_EQ(TaskFamilies(task), std::vector<std::string>{"conv2d_3x3"});
}

}  // namespace
}  // namespace kforge::skill

namespace kforge::skill {
namespace {

TEST(SkillEvalTest, BadInputIsOneLineBeforeAnythingRuns) {
  SkillFolder skill("softmax-rows", {{"SKILL.md", SkillMd()}, {"evals/evals.json", test_support::kEvals}});
  EvalTasks tasks;
  EvalOptions options;
  options.skill_dir = skill.dir();
  options.models = {"m"};
  options.out = skill.root() / "eval";
  options.run.tasks_root = tasks.root();
  options.run.teacher = llm::ProviderSpec{llm::ProviderKind::kOpenAi, ""};
  options.holdout = {"convolution"};
  EXPECT_EQ(RunSkillEval(options).status().message(),
            "--holdout: no task counts: no task under " + tasks.root().string() +
                " has one of these families (task tags or id families)");
  options.holdout = {"softmax"};
  EXPECT_EQ(
      RunSkillEval(options).status().message(),
      "--holdout: no task counts: 2 were named and all are left out, e.g. evalsuite/softmax_1: its family "
      "softmax is one the skill was built from");
  options.models = {};
  EXPECT_EQ(RunSkillEval(options).status().message(), "--model: name at least one student model");
  options.models = {"m"};
  skill.Write("SKILL.md", "---\nname: other\ndescription: d\n---\n");
  EXPECT_NE(RunSkillEval(options).status().message().find("must equal the folder's name"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(options.out)) << "nothing ran";
}

}  // namespace
}  // namespace kforge::skill
