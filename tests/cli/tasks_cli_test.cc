// `kforge tasks` on hostile or mistaken input: ids that would leave --out, missing inputs and bad
// flags are usage errors (exit 2, one line, nothing written), and expressions that overflow give a
// message instead of killing `tasks list` or `tasks show`.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cmd_tasks_audit.h"
#include "cli/cmd_tasks_check.h"
#include "fakes/command.h"
#include "fakes/task_root.h"

namespace {

namespace fs = std::filesystem;

struct TasksRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class TasksCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kforge_tasks_cli_" + std::to_string(getpid()) + "_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  TasksRun Tasks(const std::string& args, const std::string& env = "") {
    fs::path err = dir_ / "stderr.txt";
    kforge::fakes::CommandResult result = kforge::fakes::RunCommand(
        "cd " + dir_.string() + " && " + env + " " + KFORGE_BINARY + " tasks " + args + " 2>" + err.string());
    std::ifstream in(err);
    return {result.exit_code, result.out, std::string(std::istreambuf_iterator<char>(in), {})};
  }
  void Write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
  }
  fs::path dir_;
};

constexpr const char* kModule =
    "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
    "def get_inputs():\n    return [torch.randn(8)]\n";

// Nothing outside --out is touched, whatever the id: the command stops before the exporter runs.
TEST_F(TasksCliTest, ImportRefusesIdsThatLeaveOut) {
  Write(dir_ / "victim/keep.txt", "precious");
  Write(dir_ / "imp/out/.keep", "");
  Write(dir_ / "relu.py", kModule);
  for (const char* id : {"../../victim", "../victim/x", "/tmp/x/y", "suite//x", "suite/./x", "suite/..",
                         "single", "suite/x/", "suite/.hidden", "suite/-rf"}) {
    TasksRun run = Tasks(std::string("import module relu.py --id '") + id + "' --out imp/out --device cpu");
    EXPECT_EQ(run.exit_code, 2) << id << "\n" << run.err;
    EXPECT_NE(run.err.find("--id: malformed task id"), std::string::npos) << id << "\n" << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(run.out, "") << id;
  }
  std::ifstream keep(dir_ / "victim/keep.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(keep), {}), "precious");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "imp/out"), fs::directory_iterator()), 1);  // .keep
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()),
            4);  // victim imp relu.py stderr
}

// Missing inputs and malformed flags say so on one line and exit 2 (they printed "0/0 imported",
// exit 0, or a Python traceback).
TEST_F(TasksCliTest, ImportUsageErrorsAreOneLine) {
  Write(dir_ / "kb/level1/1_Relu.py", kModule);
  Write(dir_ / "relu.py", kModule);
  fs::create_directories(dir_ / "moddir");
  Write(dir_ / "afile", "x");
  struct Case {
    std::string args;
    std::string says;
  } cases[] = {
      {"import kernelbench /nonexistent --out out", "/nonexistent: not a folder"},
      {"import kernelbench kb --levels 1,x --out out", "--levels 1,x: expected level numbers"},
      {"import kernelbench kb --levels 2 --out out",
       "kb: no level folder (level1/, level2/, ...) for --levels 2"},
      {"import kernelbench kb --out afile", "--out afile: not a folder"},
      {"import kernelbench kb --out out --mem-limit-gb 0", "--mem-limit-gb"},
      {"import module moddir --id a/b --out out", "moddir: not a file"},
      {"import module missing.py --id a/b --out out", "missing.py: not a file"},
      {"build missing_root --out out", "missing_root: no such folder"},
  };
  for (const Case& c : cases) {
    TasksRun run = Tasks(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.err;
    EXPECT_NE(run.err.find(c.says), std::string::npos) << c.args << "\n" << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << c.args << "\n" << run.err;
    EXPECT_EQ(run.err.find("Traceback"), std::string::npos) << run.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// The exporter's own check of --out: a folder that cannot be made is one line, exit 2.
TEST_F(TasksCliTest, ExporterReportsAnUnwritableOutInOneLine) {
  Write(dir_ / "relu.py", kModule);
  TasksRun run = Tasks("import module relu.py --id user/relu --out /proc/nope --device cpu");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("--out /proc/nope"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("Traceback"), std::string::npos) << run.err;
}

nlohmann::json OverflowTask() {
  return {{"schema", "kforge.task/1"},
          {"id", "t/overflow"},
          {"description", "d"},
          {"reference", "reference.py"},
          {"symbols", {{"N", 8}, {"M", 1}}},
          {"inputs", {{{"name", "x"}, {"dtype", "float32"}, {"shape", {"N"}}}}},
          {"outputs", {{{"name", "out0"}, {"dtype", "float32"}, {"shape", {"N"}}}}},
          {"variants", {{{"name", "huge"}, {"symbols", {{"M", INT64_MIN}}}}}},
          {"cost", {{"flops", "cdiv(M, -1)"}, {"bytes", "4 * N"}}}};
}

// cdiv(INT64_MIN, -1) raised SIGFPE in `tasks show` (per variant) and `tasks list` (default).
TEST_F(TasksCliTest, OverflowingCostsAreMessagesNotSignals) {
  Write(dir_ / "root/t/overflow/task.json", OverflowTask().dump());
  Write(dir_ / "root/t/overflow/reference.py", kModule);
  TasksRun show = Tasks("show root t/overflow");
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("flops = cdiv(M, -1) = -1\n"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("flops = cdiv(M, -1) = in \"cdiv(M, -1)\" at 12: integer overflow"),
            std::string::npos)
      << show.out;

  nlohmann::json broken = OverflowTask();
  broken["symbols"]["M"] = INT64_MIN;
  broken.erase("variants");
  Write(dir_ / "root/t/overflow/task.json", broken.dump());
  TasksRun list = Tasks("list root");
  EXPECT_EQ(list.exit_code, 2) << list.err;
  EXPECT_NE(list.err.find("task.json: cost.flops: in \"cdiv(M, -1)\" at 12: integer overflow"),
            std::string::npos)
      << list.err;
}

// tasks check: a bad --device or root is one line and exit 2 before any worker starts; without a GPU
// it says so (exit 2) instead of failing every task.
TEST_F(TasksCliTest, CheckUsageErrorsAndNoGpuAreOneLine) {
  const std::string root = std::string(KFORGE_SOURCE_DIR) + "/tasks";
  struct Case {
    std::string args;
    std::string message;
  } cases[] = {
      {"check " + root + " --device cudax", "--device: expected cuda or cuda:N, got \"cudax\""},
      {"check " + root + " --device cuda:", "--device: expected cuda or cuda:N"},
      {"check " + root + " --device cuda:1,2", "--device: expected cuda or cuda:N"},
      {"check " + (dir_ / "nowhere").string(), "nowhere"},
  };
  for (const Case& c : cases) {
    TasksRun run = Tasks(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.err;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << c.args << "\n" << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
  }
  if (std::system("nvidia-smi -L >/dev/null 2>&1") == 0) return;  // with a GPU the check would run
  TasksRun run = Tasks("check " + root + " --filter 'demo/*'");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("tasks check: needs a GPU"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
}

nlohmann::json CheckedTask(const std::string& id, bool ill_conditioned) {
  nlohmann::json task = {{"schema", "kforge.task/1"},
                         {"id", id},
                         {"description", "d"},
                         {"reference", "reference.py"},
                         {"inputs", {{{"name", "x"}, {"dtype", "float32"}, {"shape", {8}}}}},
                         {"outputs", {{{"name", "out0"}, {"dtype", "float32"}, {"shape", {8}}}}}};
  if (ill_conditioned)
    task["conditioning"] = {{"float64_rel_l2", 0.7963},
                            {"float64_mismatches", 8},
                            {"numel", 8},
                            {"rel_l2_bound", 1e-3},
                            {"ill_conditioned", true}};
  return task;
}

struct CheckRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CheckRun CheckWithFakeWorker(kforge::cli::TasksCheckOptions options) {
  options.worker_program = KFORGE_FAKE_WORKER;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int code = kforge::cli::CheckTasks(options);
  std::string out = ::testing::internal::GetCapturedStdout();
  return {code, out, ::testing::internal::GetCapturedStderr()};
}

CheckRun AuditWithFakeWorker(kforge::cli::TasksAuditOptions options) {
  options.worker_program = KFORGE_FAKE_WORKER;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int code = kforge::cli::AuditTasks(options);
  std::string out = ::testing::internal::GetCapturedStdout();
  return {code, out, ::testing::internal::GetCapturedStderr()};
}

/// The line of `text` that names `id`.
std::string LineOf(const std::string& text, const std::string& id) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.find(" " + id + " ") != std::string::npos || line.find("\"" + id + "\"") != std::string::npos)
      return line;
  return "";
}

// --shard i/n checks the tasks whose position in the sorted, filtered list is i modulo n: the shards
// together check every task once.
TEST_F(TasksCliTest, CheckShardsSplitTheSortedTasks) {
  for (auto [id, ill] : {std::pair{"t/good", false}, std::pair{"t/fake_fail", false},
                         std::pair{"t/ill_ok", true}, std::pair{"t/ill_fake_fail", true}, std::pair{"u/other", false}}) {
    Write(dir_ / "root" / id / "task.json", CheckedTask(id, ill).dump());
    Write(dir_ / "root" / id / "reference.py", kModule);
  }
  kforge::cli::TasksCheckOptions options;
  options.root = (dir_ / "root").string();
  options.filter = "t/*";
  // Sorted and filtered: t/fake_fail, t/good, t/ill_fake_fail, t/ill_ok.
  const std::vector<std::vector<std::string>> expected = {{"t/fake_fail", "t/ill_fake_fail"}, {"t/good", "t/ill_ok"}};
  for (int shard = 0; shard < 2; ++shard) {
    options.shard = std::to_string(shard) + "/2";
    CheckRun run = CheckWithFakeWorker(options);
    EXPECT_EQ(run.exit_code, shard == 0 ? 1 : 0) << run.err;
    EXPECT_NE(run.err.find("tasks check: 2 tasks,"), std::string::npos) << run.err;
    for (const char* id : {"t/fake_fail", "t/good", "t/ill_fake_fail", "t/ill_ok", "u/other"}) {
      const bool mine = std::find(expected[shard].begin(), expected[shard].end(), id) != expected[shard].end();
      EXPECT_EQ(!LineOf(run.out, id).empty(), mine) << "shard " << shard << ": " << id << "\n" << run.out;
    }
  }
  options.shard = "2/2";
  CheckRun bad = CheckWithFakeWorker(options);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("kforge tasks check: --shard 2/2: expected i/n with 0 <= i < n"), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty()) << bad.out;
}

// A task that the import flagged ill-conditioned is counted apart, whether the worker passes or fails
// it, and is no failure of the check; a plain failure still is.
TEST_F(TasksCliTest, CheckCountsIllConditionedTasksApart) {
  for (auto [id, ill] : {std::pair{"t/good", false}, std::pair{"t/fake_fail", false},
                         std::pair{"t/ill_ok", true}, std::pair{"t/ill_fake_fail", true}}) {
    Write(dir_ / "root" / id / "task.json", CheckedTask(id, ill).dump());
    Write(dir_ / "root" / id / "reference.py", kModule);
  }
  kforge::cli::TasksCheckOptions options;
  options.root = (dir_ / "root").string();
  CheckRun run = CheckWithFakeWorker(options);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("tasks check: 4 tasks, 1 ok, 1 fail, 2 ill_conditioned, 0 degenerate, 0 nondeterministic, 0 harness_error;"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(LineOf(run.out, "t/good").rfind("ok              t/good ", 0), 0u) << run.out;
  EXPECT_EQ(LineOf(run.out, "t/fake_fail").rfind("fail            t/fake_fail ", 0), 0u) << run.out;
  const std::string ill_fail = LineOf(run.out, "t/ill_fake_fail");
  EXPECT_EQ(ill_fail.rfind("ill_conditioned t/ill_fake_fail ", 0), 0u) << run.out;
  EXPECT_NE(
      ill_fail.find("  a float64 run of the reference differs from the golden outputs by relative L2 0.7963 "
                    "(the judge allows 0.001); worker: fail: golden outputs: out0: 9 of 10 elements differ"),
      std::string::npos)
      << ill_fail;
  EXPECT_NE(LineOf(run.out, "t/ill_ok").find("; worker: ok"), std::string::npos) << run.out;

  options.filter = "t/ill*";  // nothing but ill-conditioned tasks: nothing failed
  options.json = true;
  run = CheckWithFakeWorker(options);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("tasks check: 2 tasks, 0 ok, 0 fail, 2 ill_conditioned, 0 degenerate, 0 nondeterministic, 0 harness_error;"),
            std::string::npos)
      << run.err;
  nlohmann::json record = nlohmann::json::parse(LineOf(run.out, "t/ill_fake_fail"));
  EXPECT_EQ(record["status"], "fail");  // the worker's record, as it said it
  EXPECT_EQ(record["ill_conditioned"], true);
  EXPECT_EQ(record["conditioning"]["float64_rel_l2"], 0.7963);
  EXPECT_EQ(record["conditioning"]["rel_l2_bound"], 1e-3);

  options.filter = "t/good";
  run = CheckWithFakeWorker(options);
  record = nlohmann::json::parse(LineOf(run.out, "t/good"));
  EXPECT_EQ(record["ill_conditioned"], false);
  EXPECT_FALSE(record.contains("conditioning"));
}

// The reference's own % of speed of light: the task's cost at the fake device's 1000 GB/s against the
// fake reference time (1.5 ms), on the line, in the record and counted in bands; a task without a cost
// has none.
TEST_F(TasksCliTest, CheckGivesTheReferencesPercentOfSpeedOfLight) {
  const std::vector<std::tuple<std::string, std::string, std::string>> tasks = {
      {"t/slow", "8", "300000000"},        // 0.3 ms floor: 20%
      {"t/fast", "2 * 8", "1200000000"},   // 1.2 ms: 80%
      {"t/bound", "1 - 1", "60000000"},    // 0.06 ms: 4%
      {"t/nocost", "", ""}};
  for (const auto& [id, flops, bytes] : tasks) {
    nlohmann::json task = CheckedTask(id, false);
    if (!bytes.empty()) task["cost"] = {{"flops", flops}, {"bytes", bytes}, {"derived", "torch-flop-counter/1"}};
    Write(dir_ / "root" / id / "task.json", task.dump());
    Write(dir_ / "root" / id / "reference.py", kModule);
  }
  kforge::cli::TasksCheckOptions options;
  options.root = (dir_ / "root").string();
  CheckRun run = CheckWithFakeWorker(options);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(LineOf(run.out, "t/fast").find("ref 1.500 ms  %SOL 80.0 (floor 1.200 ms)"), std::string::npos) << run.out;
  EXPECT_NE(LineOf(run.out, "t/slow").find("%SOL 20.0 (floor 0.300 ms)"), std::string::npos) << run.out;
  EXPECT_EQ(LineOf(run.out, "t/nocost").find("%SOL"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("reference %SOL over 3 tasks with a cost: 1 under 10%, 1 10-50%, 1 over 50%; median 20.0%"),
            std::string::npos)
      << run.err;

  options.json = true;
  run = CheckWithFakeWorker(options);
  nlohmann::json record = nlohmann::json::parse(LineOf(run.out, "t/fast"));
  EXPECT_DOUBLE_EQ(record["reference_roofline"]["sol_pct"].get<double>(), 80.0);
  EXPECT_DOUBLE_EQ(record["reference_roofline"]["sol_ms"].get<double>(), 1.2);
  EXPECT_DOUBLE_EQ(record["reference_roofline"]["reference_ms"].get<double>(), 1.5);
  EXPECT_EQ(record["reference_roofline"]["bytes"], 1.2e9);
  EXPECT_EQ(record["reference_roofline"]["derived"], "torch-flop-counter/1");
  EXPECT_TRUE(nlohmann::json::parse(LineOf(run.out, "t/nocost"))["reference_roofline"].is_null());
}

// The reference of `import module` is arbitrary code: it runs without the API keys of our
// environment, and one that never ends is stopped at --timeout with its process group.
TEST_F(TasksCliTest, ImportModuleRunsWithoutKeysAndWithinItsTimeout) {
  const fs::path seen = dir_ / "seen.txt";
  Write(dir_ / "envmod.py", "import os\nopen(" + nlohmann::json(seen.string()).dump() +
                                ", 'w').write(os.environ.get('ANTHROPIC_API_KEY', 'none') + ',' + "
                                "os.environ.get('MY_SERVICE_TOKEN', 'none') + ',' + os.environ.get('KEEP_ME', ''))\n" +
                                kModule);
  TasksRun run = Tasks("import module envmod.py --id user/envmod --out out --device cpu",
                       "ANTHROPIC_API_KEY=sk-ant-secret-0123456789 MY_SERVICE_TOKEN=t0k3n KEEP_ME=kept");
  std::ifstream in(seen);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "none,none,kept") << run.err;

  Write(dir_ / "loop.py", "while True:\n    pass\n");
  auto start = std::chrono::steady_clock::now();
  TasksRun loop = Tasks("import module loop.py --id user/loop --out out --device cpu --timeout 3");
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(loop.exit_code, 1) << loop.err;
  EXPECT_NE(loop.err.find("exporter stopped after 3 s (--timeout)"), std::string::npos) << loop.err;
  EXPECT_LT(took, 30) << loop.err;
}

// A hand-written task (its costs, tolerances, variants) is not lost to an --id typed twice.
TEST_F(TasksCliTest, ImportModuleDoesNotReplaceATaskWithoutForce) {
  Write(dir_ / "relu.py", kModule);
  Write(dir_ / "out/user/relu/task.json", "hand-written");
  TasksRun run = Tasks("import module relu.py --id user/relu --out out --device cpu");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(
      run.err.find("--id user/relu: out/user/relu exists; its task would be replaced (--force replaces it)"),
      std::string::npos)
      << run.err;
  std::ifstream kept(dir_ / "out/user/relu/task.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "hand-written");
  TasksRun forced = Tasks("import module relu.py --id user/relu --out out --device cpu --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  std::ifstream replaced(dir_ / "out/user/relu/task.json");
  EXPECT_NE(std::string(std::istreambuf_iterator<char>(replaced), {}).find("kforge.task/1"),
            std::string::npos);
}

// A reference that ends the Python process while it is imported leaves no task, no work folder and
// no exit 0 behind, whether it calls exit() or os._exit().
TEST_F(TasksCliTest, AReferenceThatEndsThePythonEarlyFailsTheImportAndTheBuild) {
  for (const std::string ending : {"import sys\nsys.exit(0)\n", "import os\nos._exit(0)\n"}) {
    SCOPED_TRACE(ending);
    Write(dir_ / "early.py", ending + kModule);
    TasksRun run = Tasks("import module early.py --id user/early --out out --device cpu");
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_FALSE(fs::exists(dir_ / "out/user/early"));
    EXPECT_TRUE(fs::is_empty(dir_ / "out/user")) << "a work folder was left behind";
    fs::remove_all(dir_ / "root");
    fs::create_directories(dir_ / "root/demo");
    fs::copy(fs::path(KFORGE_SOURCE_DIR) / "tasks/demo/relu", dir_ / "root/demo/relu",
             fs::copy_options::recursive);
    Write(dir_ / "root/demo/relu/reference.py", ending + kModule);
    TasksRun build = Tasks("build root --device cpu");
    EXPECT_EQ(build.exit_code, 1) << build.err;
    for (const auto& entry : fs::directory_iterator(dir_ / "root/demo/relu"))
      EXPECT_NE(entry.path().filename().string().rfind(".build", 0), 0u) << entry.path();
  }
}

/// Whether `pid` ends (or is a zombie no one reaps) within 5 s.
bool Ends(long pid) {
  for (int i = 0; i < 250; ++i, usleep(20000)) {
    if (kill(static_cast<pid_t>(pid), 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text(std::istreambuf_iterator<char>(stat), {});
    const size_t paren = text.rfind(')');
    if (paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z') return true;
  }
  return false;
}

// What a reference starts in a session of its own ends with the import, and a kill -9 of kforge ends
// the exporter.
TEST_F(TasksCliTest, NoChildOfTheImportOutlivesIt) {
  const fs::path pidfile = dir_ / "escaped.pid";
  Write(dir_ / "escape.py",
        "import subprocess\np = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "open(" +
            nlohmann::json(pidfile.string()).dump() + ", 'w').write(str(p.pid))\n" + kModule);
  TasksRun run = Tasks("import module escape.py --id user/escape --out out --device cpu");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::ifstream in(pidfile);
  long escaped = 0;
  ASSERT_TRUE(in >> escaped) << run.err;
  bool gone = Ends(escaped);
  EXPECT_TRUE(gone) << "the reference's child " << escaped << " outlived the import";
  if (!gone) kill(static_cast<pid_t>(escaped), SIGKILL);

  const fs::path started = dir_ / "started.pid";
  Write(dir_ / "slow.py", "import os, time\nopen(" + nlohmann::json(started.string()).dump() +
                              ", 'w').write(str(os.getpid()))\ntime.sleep(300)\n");
  pid_t kforge = fork();
  ASSERT_GE(kforge, 0);
  if (kforge == 0) {
    const std::string command =
        "cd " + dir_.string() + " && exec " + KFORGE_BINARY +
        " tasks import module slow.py --id user/slow --out out --device cpu 2>/dev/null";
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  long exporter = 0;
  for (int i = 0; i < 1500 && exporter == 0; ++i, usleep(20000)) std::ifstream(started) >> exporter;
  kill(kforge, SIGKILL);
  waitpid(kforge, nullptr, 0);
  ASSERT_GT(exporter, 0) << "the exporter never started";
  gone = Ends(exporter);
  EXPECT_TRUE(gone) << "the exporter " << exporter << " outlived kforge's kill -9";
  if (!gone) kill(static_cast<pid_t>(exporter), SIGKILL);
}

TEST_F(TasksCliTest, ATaskTreeDoesNotWalkALinkToItsAncestors) {
  fs::create_directories(dir_ / "root/demo");
  fs::copy(fs::path(KFORGE_SOURCE_DIR) / "tasks/demo/relu", dir_ / "root/demo/relu", fs::copy_options::recursive);
  fs::create_symlink("/", dir_ / "root/demo/slash");
  fs::create_symlink("..", dir_ / "root/demo/up");
  auto start = std::chrono::steady_clock::now();
  TasksRun run = Tasks("list root");
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("demo/relu"), std::string::npos) << run.out;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
  EXPECT_LT(took, 5) << "walked the filesystem";
}

// Without a GPU, --device cuda is one line and exit 2 (not one FAIL line per task), and verify's
// no_gpu says what works without one.
TEST_F(TasksCliTest, WithoutAGpuCudaWorkSaysSoOnceAndWhatToDoInstead) {
  if (kforge::fakes::HasCudaDevice()) GTEST_SKIP() << "a GPU is here";
  TasksRun build = Tasks(std::string("build ") + KFORGE_SOURCE_DIR + "/tasks --out built --device cuda");
  EXPECT_EQ(build.exit_code, 2) << build.err;
  EXPECT_NE(build.err.find("--device cuda needs a GPU and none is visible here"), std::string::npos) << build.err;
  EXPECT_EQ(std::count(build.err.begin(), build.err.end(), '\n'), 1) << build.err;
  EXPECT_FALSE(fs::exists(dir_ / "built"));
  kforge::fakes::CommandResult verify = kforge::fakes::RunCommand(
      std::string(KFORGE_BINARY) + " verify --no-cache --tasks " + KFORGE_SOURCE_DIR + "/tasks " +
      KFORGE_SOURCE_DIR + "/examples/demo/relu.json 2>&1 >/dev/null");
  EXPECT_EQ(verify.exit_code, 2) << verify.out;
  EXPECT_NE(verify.out.find("--compile-only compiles the solutions"), std::string::npos) << verify.out;
}

// Tasks the import found degenerate (outputs independent of the inputs) or nondeterministic are
// counted apart too, with the measure on their line, and are no failure of the check.
TEST_F(TasksCliTest, CheckCountsDegenerateAndNondeterministicTasksApart) {
  nlohmann::json degenerate = CheckedTask("t/flat", false);
  degenerate["behaviour"] = {{"variant", "default"},
                             {"outputs", {{"out0", "zero"}}},
                             {"rerun_mismatches", 0},
                             {"degenerate", true},
                             {"nondeterministic", false}};
  nlohmann::json random = CheckedTask("t/dropout_fake_fail", false);
  random["behaviour"] = {{"variant", "default"},
                         {"outputs", {{"out0", "varies"}}},
                         {"rerun_mismatches", 37710},
                         {"degenerate", false},
                         {"nondeterministic", true}};
  for (const nlohmann::json& task : {degenerate, random, CheckedTask("t/good", false)}) {
    std::string id = task["id"];
    Write(dir_ / "root" / id / "task.json", task.dump());
    Write(dir_ / "root" / id / "reference.py", kModule);
  }
  kforge::cli::TasksCheckOptions options;
  options.root = (dir_ / "root").string();
  CheckRun run = CheckWithFakeWorker(options);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("tasks check: 3 tasks, 1 ok, 0 fail, 0 ill_conditioned, 1 degenerate, 1 nondeterministic, "
                         "0 harness_error;"),
            std::string::npos)
      << run.err;
  const std::string flat = LineOf(run.out, "t/flat");
  EXPECT_EQ(flat.rfind("degenerate      t/flat ", 0), 0u) << run.out;
  EXPECT_NE(flat.find("the outputs do not depend on the inputs (out0 zero, measured on variant default); worker: ok"),
            std::string::npos)
      << flat;
  const std::string dropout = LineOf(run.out, "t/dropout_fake_fail");
  EXPECT_EQ(dropout.rfind("nondeterministic t/dropout_fake_fail ", 0), 0u) << run.out;
  EXPECT_NE(dropout.find("differs in 37710 elements (variant default); worker: fail"), std::string::npos) << dropout;
}

// The audit prints each no-work candidate the judge accepted: on a judgeable task it is a hole in the
// judge (exit 1); on a degenerate task it is counted apart (any no-op passes there by definition).
TEST_F(TasksCliTest, AuditReportsAcceptedCandidatesAndCountsUnjudgeableTasksApart) {
  nlohmann::json flat = CheckedTask("t/flat_fake_hole", false);
  flat["behaviour"] = {{"variant", "default"},
                       {"outputs", {{"out0", "zero"}}},
                       {"rerun_mismatches", 0},
                       {"degenerate", true},
                       {"nondeterministic", false}};
  for (const nlohmann::json& task :
       {flat, CheckedTask("t/good", false), CheckedTask("t/weak_fake_hole", false)}) {
    std::string id = task["id"];
    Write(dir_ / "root" / id / "task.json", task.dump());
    Write(dir_ / "root" / id / "reference.py", kModule);
  }
  kforge::cli::TasksAuditOptions options;
  options.root = (dir_ / "root").string();
  CheckRun run = AuditWithFakeWorker(options);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.out.find("accepted        t/weak_fake_hole  zeros\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("accepted        t/flat_fake_hole  zeros  (task is degenerate)"), std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find("t/good"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("zeros                3         1                       1"), std::string::npos)
      << run.err;
  EXPECT_NE(
      run.err.find("tasks audit: 3 tasks (1 unjudgeable: degenerate, nondeterministic or ill_conditioned), "
                   "1 no-work candidates accepted on judgeable tasks, 0 harness_error"),
      std::string::npos)
      << run.err;

  options.filter = "t/[fg]*";  // the degenerate task and a sound one: no hole
  run = AuditWithFakeWorker(options);
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

// The timing audit prints each cheat that took a shortcut on a checked run, and each timed faster than its
// honest kernel; either on a judgeable task fails the audit (exit 1). The controls are counted, not holes.
TEST_F(TasksCliTest, TimingAuditFailsOnAShortcutOrAFasterCheat) {
  for (const char* id : {"t/good", "t/memo_fake_hole", "t/memo_fake_fast", "t/memo_fake_near"}) {
    nlohmann::json task = CheckedTask(id, false);
    Write(dir_ / "root" / id / "task.json", task.dump());
    Write(dir_ / "root" / id / "reference.py", kModule);
  }
  kforge::cli::TasksAuditOptions options;
  options.root = (dir_ / "root").string();
  options.timing = true;
  CheckRun run = AuditWithFakeWorker(options);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.out.find("accepted        t/memo_fake_hole  memo\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("faster          t/memo_fake_fast  memo  0.6000 ms, honest 1.0000 ms\n"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find("t/good"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("t/memo_fake_near"), std::string::npos)
      << run.out;                                                    // 0.9x is within the measurement's noise
  EXPECT_EQ(run.out.find("control"), std::string::npos) << run.out;  // a control that fires is as expected
  EXPECT_NE(
      run.err.find(
          "tasks audit --timing: 4 tasks (0 unjudgeable), 1 timing cheats accepted on judgeable tasks "
          "(a shortcut on a checked timed run), 2 timed faster than their honest kernel, 4 of 4 controls "
          "took their shortcut, 0 harness_error"),
      std::string::npos)
      << run.err;

  options.filter = "t/good";
  run = AuditWithFakeWorker(options);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("memo                 1         0                       0        0"),
            std::string::npos)
      << run.err;
}

// A cheat that does not apply to a task (the memo where the outputs pass its cap) is not counted as tried,
// in the table or among the controls. A nondeterministic task is not timed at all: its reference disagrees
// with itself, so the honest work would fail its own checks.
TEST_F(TasksCliTest, TimingAuditLeavesNotApplicableCheatsAndNondeterministicTasksUncounted) {
  nlohmann::json random = CheckedTask("t/dropout", false);
  random["behaviour"] = {{"variant", "default"},
                         {"outputs", {{"out0", "varies"}}},
                         {"rerun_mismatches", 4723},
                         {"degenerate", false},
                         {"nondeterministic", true}};
  for (const nlohmann::json& task :
       {CheckedTask("t/good", false), CheckedTask("t/memo_fake_big", false), random}) {
    std::string id = task["id"];
    Write(dir_ / "root" / id / "task.json", task.dump());
    Write(dir_ / "root" / id / "reference.py", kModule);
  }
  kforge::cli::TasksAuditOptions options;
  options.root = (dir_ / "root").string();
  options.timing = true;
  CheckRun run = AuditWithFakeWorker(options);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find("control silent"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("memo                 1         0"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("control              1         1"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("launch_counter       2         0"), std::string::npos) << run.err;
  EXPECT_NE(
      run.err.find(
          "tasks audit --timing: 3 tasks (1 unjudgeable), 0 timing cheats accepted on judgeable tasks "
          "(a shortcut on a checked timed run), 0 timed faster than their honest kernel, 1 of 1 controls "
          "took their shortcut, 0 harness_error, 1 not timed (nondeterministic)"),
      std::string::npos)
      << run.err;
  EXPECT_NE(
      run.out.find("not timed       t/dropout  (task is nondeterministic: no timed run can be checked)\n"),
      std::string::npos)
      << run.out;
}

}  // namespace
