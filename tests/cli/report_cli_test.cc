// `kforge report` end to end: the terminal table, --json, --html and --baseline, skill evals beside
// runs (--skill-eval), and usage errors. The skill eval section's numbers from a real eval are checked in
// tests/skill/skill_eval_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "export/record_builder.h"
#include "fakes/command.h"
#include "fakes/special_files.h"
#include "kforge/skill/eval.h"

namespace {

namespace fs = std::filesystem;
using kforge::testing::MakeRecord;
using kforge::testing::RecordSpec;

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class ReportCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kforge_report_cli_" + std::to_string(getpid()) + "_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_ / "after");
    fs::create_directories(dir_ / "before");
    // after: 2 of 2 correct at 2x; before: 1 of 2 correct at 0.5x; one harness error each.
    std::vector<kforge::dataset::Trajectory> after, before;
    for (int s = 0; s < 2; ++s) {
      RecordSpec spec;
      spec.sample = s;
      spec.speedup = 2.0;
      after.push_back(MakeRecord(spec));
      spec.speedup = 0.5;
      spec.correct = s == 0;
      before.push_back(MakeRecord(spec));
    }
    RecordSpec broken;
    broken.sample = 9;
    broken.harness_error = true;
    after.push_back(MakeRecord(broken));
    before.push_back(MakeRecord(broken));
    kforge::testing::WriteRecords((dir_ / "after/trajectories.jsonl").string(), after);
    kforge::testing::WriteRecords((dir_ / "before/trajectories.jsonl").string(), before, "not json\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  CliRun Report(const std::string& args) {
    fs::path err = dir_ / "stderr.txt";
    kforge::fakes::CommandResult result = kforge::fakes::RunCommand(
        "cd " + dir_.string() + " && " + KFORGE_BINARY + " report " + args + " 2>" + err.string());
    std::ifstream in(err);
    return {result.exit_code, result.out, std::string(std::istreambuf_iterator<char>(in), {})};
  }
  fs::path dir_;
};

TEST_F(ReportCliTest, TableWithABaseline) {
  CliRun run = Report("after --baseline before --per-task");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("run after: 2 episodes of 1 tasks"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("baseline run before: 2 episodes of 1 tasks (1 malformed and 0 torn lines skipped)"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("harness errors: 1"), std::string::npos);
  EXPECT_NE(run.out.find("after against the baseline before"), std::string::npos);
  EXPECT_NE(run.out.find("+50.0 pp"), std::string::npos) << "correctness 100% against 50%\n" << run.out;
  EXPECT_NE(run.out.find("x4.000"), std::string::npos) << "geomean 2x against 0.5x\n" << run.out;
  EXPECT_NE(run.err.find("kforge report: skipped before/trajectories.jsonl:4:"), std::string::npos)
      << run.err;
}

TEST_F(ReportCliTest, ARunReadTwiceCountsEachEpisodeOnce) {
  // The merged file of two overlapping shard folders: every record of `after` twice.
  fs::copy_file(dir_ / "after/trajectories.jsonl", dir_ / "twice.jsonl");
  {
    std::ifstream in(dir_ / "after/trajectories.jsonl");
    std::ofstream(dir_ / "twice.jsonl", std::ios::app) << in.rdbuf();
  }
  nlohmann::json once = nlohmann::json::parse(Report("after --json").out)["runs"][0];
  CliRun run = Report("twice.jsonl --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("report: twice.jsonl: 3 duplicate records dropped"), std::string::npos) << run.err;
  nlohmann::json twice = nlohmann::json::parse(run.out)["runs"][0];
  EXPECT_EQ(twice["groups"], once["groups"]);
  EXPECT_EQ(twice["tasks"], once["tasks"]);
  EXPECT_EQ(twice["read"]["records"], 3);
  EXPECT_EQ(twice["read"]["duplicates"], 3);
}

TEST_F(ReportCliTest, JsonAndHtml) {
  CliRun run = Report("after before --json --html page.html");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << "one JSON line";
  nlohmann::json report = nlohmann::json::parse(run.out);
  EXPECT_EQ(report["schema"], "kforge.report/1");
  ASSERT_EQ(report["runs"].size(), 2u);
  EXPECT_EQ(report["runs"][0]["label"], "after");
  EXPECT_EQ(report["runs"][0]["groups"][0]["correctness"], 1.0);
  EXPECT_EQ(report["runs"][0]["groups"][0]["fast_p"]["fast_1"], 1.0);
  EXPECT_EQ(report["runs"][0]["groups"][0]["harness_errors"], 1);
  EXPECT_EQ(report["runs"][1]["groups"][0]["correctness"], 0.5);
  EXPECT_EQ(report["runs"][1]["groups"][0]["fast_p"]["fast_0"], 0.5);
  EXPECT_EQ(report["runs"][1]["groups"][0]["fast_p"]["fast_1"], 0.0);
  std::ifstream in(dir_ / "page.html");
  std::string html((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(html.find("<svg"), std::string::npos);
}

TEST_F(ReportCliTest, KernelsMostlyInLibraryOpsAreCountedAndFastPIsGivenWithoutThem) {
  fs::create_directories(dir_ / "ops");
  RecordSpec own, library;
  own.speedup = 2.0;
  library.sample = 1;
  library.speedup = 3.0;
  library.ops_fraction = 0.97;
  kforge::testing::WriteRecords((dir_ / "ops/trajectories.jsonl").string(),
                                {MakeRecord(own), MakeRecord(library)});
  CliRun run = Report("ops");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("library ops: 1 of 2 correct kernels spent over 90% of their GPU time in them; "
                         "fast_p without their speedups: fast_0 50.0%  fast_1 50.0%"),
            std::string::npos)
      << run.out;
  nlohmann::json group = nlohmann::json::parse(Report("ops --json").out)["runs"][0]["groups"][0];
  EXPECT_EQ(group["mostly_library_ops"], 1);
  EXPECT_EQ(group["fast_p"]["fast_2"], 0.5) << "as KernelBench counts it";
  EXPECT_EQ(group["fast_p_without_library_ops"]["fast_2"], 0.0) << "2.0x is not > 2; 3.0x is the library's";
}

TEST_F(ReportCliTest, UsageErrors) {
  fs::create_directories(dir_ / "folder");
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"missing", "missing: no such run folder or file"},
           {"after --baseline missing", "missing: no such run folder or file"},
           {"after --html folder", "--html folder: a folder, not a file"},
           {"", "runs is required"}}) {
    CliRun run = Report(args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_NE(run.err.find(message), std::string::npos) << args << "\n" << run.err;
    EXPECT_TRUE(run.out.empty()) << args;
  }
}

TEST_F(ReportCliTest, HtmlNeverReplacesAnInput) {
  std::ifstream in(dir_ / "after/trajectories.jsonl");
  const std::string before(std::istreambuf_iterator<char>(in), {});
  for (const char* args : {"after --html after/trajectories.jsonl", "after --baseline before --html ./before/trajectories.jsonl"}) {
    CliRun run = Report(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.err;
    EXPECT_NE(run.err.find("the report never writes over what it reads"), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
  std::ifstream after(dir_ / "after/trajectories.jsonl");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(after), {}), before);
}

TEST_F(ReportCliTest, HtmlNeverLandsInsideAnInputRunFolder) {
  std::ofstream(dir_ / "after/run.json") << "{\"schema\": \"kforge.run/1\"}\n";
  std::ofstream(dir_ / "after/unfinished.jsonl") << "";
  // By name: the files a resume reads, a file not there yet, a path through `..`, the records file given.
  for (const char* args : {"after --html after/run.json", "after --html after/unfinished.jsonl",
                           "after --html after/report.html", "after --html before/../after/report.html",
                           "before --baseline after/trajectories.jsonl --html after/page.html",
                           "after/trajectories.jsonl --html after/page.html"}) {
    CliRun run = Report(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.err;
    EXPECT_NE(run.err.find("is inside the input folder"), std::string::npos) << args << "\n" << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
  std::ifstream run_json(dir_ / "after/run.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(run_json), {}), "{\"schema\": \"kforge.run/1\"}\n");
  EXPECT_FALSE(fs::exists(dir_ / "after/report.html"));
  // By inode: the run folder under another name (a link to it).
  fs::create_directory_symlink(dir_ / "after", dir_ / "alias");
  CliRun linked = Report("after --html alias/page.html");
  EXPECT_EQ(linked.exit_code, 2) << linked.err;
  CliRun beside = Report("after --html page.html");
  EXPECT_EQ(beside.exit_code, 0) << beside.err;
}

TEST_F(ReportCliTest, HtmlIntoADeviceOrAFifoLeavesItWhatItWas) {
  const fs::path device = dir_ / "null";
  if (!kforge::fakes::MakeNullDevice(device)) GTEST_SKIP() << "mknod is not allowed here (it needs CAP_MKNOD)";
  CliRun run = Report("after --html null");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(kforge::fakes::IsNullDevice(device)) << "the device was replaced by a file";
  std::string page;
  {
    kforge::fakes::FifoReader reader(dir_ / "fifo");
    ASSERT_TRUE(reader.ok());
    run = Report("after --html fifo");
    page = reader.Finish();
  }
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(kforge::fakes::IsFifo(dir_ / "fifo")) << "the FIFO was replaced by a file";
  EXPECT_NE(page.find("<svg"), std::string::npos) << "the page went through the FIFO";
  run = Report("after --html fifo");  // no reader now: refused, not waited on
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("a FIFO that no reader holds open"), std::string::npos) << run.err;
  EXPECT_TRUE(kforge::fakes::IsFifo(dir_ / "fifo"));
}

TEST_F(ReportCliTest, AnEndlessInputIsAnErrorNotAHang) {
  for (const char* args : {"/dev/zero", "after --baseline /dev/zero"}) {
    const auto start = std::chrono::steady_clock::now();
    kforge::fakes::CommandResult run =
        kforge::fakes::RunCommand("cd " + dir_.string() + " && timeout 60 " + KFORGE_BINARY + " report " + args + " 2>&1");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out;
    EXPECT_NE(run.out.find("/dev/zero:1: a line longer than 64 MiB"), std::string::npos) << run.out;
    EXPECT_LT(seconds, 30) << args;
  }
}

TEST_F(ReportCliTest, PerTaskRowsEscapeControlCharacters) {
  fs::create_directories(dir_ / "hostile");
  RecordSpec spec;
  spec.task = "evil/\x1b[2J\x1b]0;owned\x07\xc2\x9b" "31m";
  kforge::testing::WriteRecords((dir_ / "hostile/trajectories.jsonl").string(), {MakeRecord(spec)});
  CliRun run = Report("hostile --per-task");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find('\x07'), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("\xc2\x9b"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("evil/\\x1b[2J"), std::string::npos) << run.out;
}

}  // namespace

namespace {

using nlohmann::json;

/// An eval.json whose strings are hostile (markup, quotes, terminal escapes), its numbers computed by
/// skill eval's own code (ModelReport) from episodes: the skill arm fails the evil task that no skill
/// solves, and solves core/ok that no skill fails.
json HostileEval() {
  const std::string evil = "evil/<script>alert(\"x\")</script>&";
  kforge::skill::EvalEpisode right, wrong;
  right.correct = true;
  right.speedup = right.speedup_low = 1.2;
  wrong.status = "<b>mismatch</b>";
  kforge::skill::ArmEpisodes none = {{evil, {right, right}}, {"core/ok", {wrong, wrong}}};
  kforge::skill::ArmEpisodes with = {{evil, {wrong, wrong}}, {"core/ok", {right, right}}};
  json model = kforge::skill::ModelReport({{"none", none}, {"skill", with}, {"placebo", none}}, 2, 200, 1);
  model["model"] = "<img src=x onerror=alert(1)>\x1b[2J";
  model["beneficial"] = false;
  model["verdict"] = "no lift shown";
  return {{"schema", "kforge.skill_eval/1"},
          {"skill", {{"name", "<b>skill</b>"}, {"hash", "sha256:<x>"}}},
          {"tasks", {evil, "core/ok"}},
          {"left_out", {{{"task", "<iframe src=x>"}, {"reason", "r&d"}}}},
          {"samples", 2},
          {"protocol", "text"},
          {"compile_only", false},
          {"bootstrap", {{"resamples", 200}, {"seed", 1}}},
          {"models", {model}}};
}

void WriteJson(const fs::path& file, const json& value) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << value.dump(2);
}

TEST_F(ReportCliTest, SkillEvalStringsAreEscapedOnThePageAndTheTerminal) {
  WriteJson(dir_ / "eval/eval.json", HostileEval());
  CliRun run = Report("after --skill-eval eval --html page.html");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream in(dir_ / "page.html");
  const std::string html((std::istreambuf_iterator<char>(in)), {});
  for (const char* markup : {"<script", "<img", "<iframe", "<b>"})
    EXPECT_EQ(html.find(markup), std::string::npos) << markup;
  for (const char* escaped :
       {"<h2>Skill eval: &lt;b&gt;skill&lt;/b&gt;</h2>",
        "<h3>&lt;img src=x onerror=alert(1)&gt;\x1b[2J: <span class=\"no\">no lift shown</span></h3>",
        "<li>&lt;iframe src=x&gt;: r&amp;d</li>", "<td>&lt;b&gt;mismatch&lt;/b&gt; 2</td>",
        "<td>evil/&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;</td></tr>"})
    EXPECT_NE(html.find(escaped), std::string::npos) << escaped;
  EXPECT_NE(run.out.find("skill eval <b>skill</b> (sha256:<x>): 2 held-out tasks x 2 samples, 1 left out; "
                         "<img src=x onerror=alert(1)>\\x1b[2J: no lift shown, lift 0.000 ["),
            std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << "no terminal escape reaches the terminal";
}

TEST_F(ReportCliTest, ACompileOnlySkillEvalSaysNoLiftWasMeasured) {
  json eval = HostileEval();
  eval["compile_only"] = true;
  WriteJson(dir_ / "eval/eval.json", eval);
  CliRun run = Report("after --skill-eval eval --html page.html");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("2 held-out tasks x 2 samples, 1 left out; compile-only, no lift measured\n"),
            std::string::npos)
      << run.out;
  std::ifstream in(dir_ / "page.html");
  const std::string html((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(
      html.find(
          "<p>Compile-only: nothing ran on a GPU, so no kernel is correct and no lift is measured.</p>"),
      std::string::npos);
}

TEST_F(ReportCliTest, SkillEvalsAndRunsAreToldApart) {
  WriteJson(dir_ / "eval/eval.json", HostileEval());
  json wrong_type = HostileEval();
  wrong_type["models"][0]["arms"]["none"]["correct"] = "2";
  WriteJson(dir_ / "bad.json", wrong_type);
  WriteJson(dir_ / "other.json", {{"schema", "kforge.report/1"}});
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"eval", "eval: a skill eval's output (eval.json), not a run; pass it as --skill-eval eval"},
           {"after --baseline eval/eval.json",
            "eval/eval.json: a skill eval's output (eval.json), not a run"},
           {"after --skill-eval before",
            "--skill-eval before: a folder without eval.json (a run folder: name it "
            "without --skill-eval)"},
           {"after --skill-eval missing", "--skill-eval missing: no such skill eval folder or file"},
           {"after --skill-eval bad.json",
            "--skill-eval bad.json: models[0].arms.none.correct: expected an integer, found string"},
           {"after --skill-eval other.json",
            "--skill-eval other.json: schema \"kforge.report/1\", not kforge.skill_eval/1 (not a skill "
            "eval's output)"},
           {"after --skill-eval after/trajectories.jsonl", "--skill-eval after/trajectories.jsonl: "},
           {"after --skill-eval eval --html eval/eval.json",
            "--html eval/eval.json is the input eval/eval.json; the report never writes over what it "
            "reads"}}) {
    CliRun run = Report(args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_NE(run.err.find("kforge report: " + message), std::string::npos) << args << "\n" << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << "\n" << run.err;
    EXPECT_TRUE(run.out.empty()) << args;
  }
  json eval = HostileEval();
  std::ifstream in(dir_ / "eval/eval.json");
  EXPECT_EQ(json::parse(in), eval) << "nothing written over";

  CliRun run = Report("after --skill-eval eval --skill-eval eval/eval.json --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json report = json::parse(run.out);
  ASSERT_EQ(report["skill_evals"].size(), 2u);
  EXPECT_EQ(report["skill_evals"][1], eval);
  EXPECT_EQ(report["runs"].size(), 1u);
  EXPECT_FALSE(json::parse(Report("after --json").out).contains("skill_evals")) << "unchanged without evals";
}

}  // namespace
