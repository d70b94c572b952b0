// `kforge verify --compile-only` end to end on bad input: one verdict line each, a one-line message
// naming what and where, the right exit code, and never the content of a rejected file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/special_files.h"

namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;
  std::vector<nlohmann::json> verdicts;
  std::string output;  // stdout and stderr
};

// Runs `kforge verify <args>` (a shell command line) and collects its verdicts and messages.
CliRun VerifyCommand(const std::string& args) {
  std::string command = std::string(KFORGE_BINARY) + " verify " + args;
  CliRun run;
  std::string err_path = fs::temp_directory_path() / ("kforge_cli_test_stderr_" + std::to_string(getpid()));
  FILE* pipe = popen((command + " 2>" + err_path).c_str(), "r");
  char buffer[4096];
  std::string out;
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  run.output = out + std::string(std::istreambuf_iterator<char>(err), {});
  err.close();
  std::error_code ignored;
  fs::remove(err_path, ignored);
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    run.verdicts.push_back(nlohmann::json::parse(out.substr(start, end - start)));
    start = end + 1;
  }
  return run;
}

CliRun Verify(const std::vector<std::string>& args) {
  std::string command = std::string("--compile-only --no-cache --tasks ") + KFORGE_SOURCE_DIR + "/tasks";
  for (const std::string& a : args) command += " '" + a + "'";
  return VerifyCommand(command);
}

class VerifyCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& content) {
    fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
  }
  std::string Solution(const std::string& source, const std::string& launch) {
    nlohmann::json j = {
        {"task", "demo/relu"}, {"source", source}, {"launches", nlohmann::json::parse(launch)}};
    return j.dump();
  }
  fs::path dir_;
};

constexpr const char* kRelu =
    "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
    "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = fmaxf(x[i], 0.f);\n}\n";
constexpr const char* kLaunch =
    R"J([{"kernel": "relu", "grid": ["cdiv(numel(x), 256)"], "block": [256], "args": ["x", "out0", "i64:numel(x)"]}])J";

TEST_F(VerifyCliTest, BadInputsGetOneLineVerdictsInOrder) {
  struct Case {
    std::string file;
    std::string status;
    std::string message;
  };
  const std::string secret = "TOP-SECRET-CONTENT";
  std::vector<Case> cases = {
      {Write("good.json", Solution(kRelu, kLaunch)), "ok", ""},
      {Write("malformed.json", "{\"task\": \"demo/relu\", " + secret), "invalid_solution",
       "malformed.json: line 1, column"},
      {Write("unknown.json", R"({"task": "demo/relu", "sauce": "x", "launches": []})"), "invalid_solution",
       "unknown.json: sauce: unknown field"},
      {Write("missing_kernel.json",
             Solution(kRelu, R"([{"kernel": "gelu", "grid": [1], "block": [1], "args": []}])")),
       "invalid_solution", "launches[0].kernel: no kernel \"gelu\""},
      {Write("div_zero.json",
             Solution(kRelu, R"([{"kernel": "relu", "grid": ["numel(x) / 0"], "block": [1], "args": []}])")),
       "invalid_solution", "launches[0].grid[0]: in \"numel(x) / 0\" at 10: division by zero"},
      {Write(
           "overflow.json",
           Solution(
               kRelu,
               R"([{"kernel": "relu", "grid": ["numel(x) * 9223372036854775807"], "block": [1], "args": []}])")),
       "invalid_solution", "integer overflow"},
      {Write("huge.json", Solution(std::string(50 << 20, 'a'), kLaunch)), "invalid_solution",
       "source: 52428800 bytes, over the 256 KiB limit"},
      {Write("garbage.json", std::string("\x7f"
                                         "ELF\x01\x02\x00\xff",
                                         8) +
                                 secret),
       "invalid_solution", "expected one ```cuda block and one ```json block"},
      {Write("passwd.json", Solution("#include \"/etc/passwd\"\n" + std::string(kRelu), kLaunch)),
       "invalid_solution", "/etc/passwd"},
      {Write("unknown_task.json",
             R"({"task": "demo/nope", "source": "x", "launches": [{"memset": "out0"}]})"),
       "invalid_solution", "task demo/nope"},
      {Write("compile_error.json",
             Solution("extern \"C\" __global__ void relu(float* y) { y[0] = 1 }", kLaunch)),
       "compile_error", "kernel.cu(1): error"},
  };
  std::vector<std::string> files;
  for (const Case& c : cases) files.push_back(c.file);
  CliRun run = Verify(files);
  EXPECT_EQ(run.exit_code, 1);
  ASSERT_EQ(run.verdicts.size(), cases.size()) << run.output.substr(0, 2000);
  for (size_t i = 0; i < cases.size(); ++i) {
    const nlohmann::json& v = run.verdicts[i];
    EXPECT_EQ(v["solution"], cases[i].file);
    EXPECT_EQ(v["status"], cases[i].status) << cases[i].file << ": " << v["message"];
    std::string message = v["message"];
    EXPECT_NE(message.find(cases[i].message), std::string::npos)
        << "got: " << message << "\nwant: " << cases[i].message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "message must be one line: " << message;
  }
  EXPECT_EQ(run.output.find(secret), std::string::npos);
  EXPECT_EQ(run.output.find("root:"), std::string::npos) << "content of /etc/passwd leaked";
}

TEST_F(VerifyCliTest, AllGoodExitsZeroAndUsageErrorsExitTwo) {
  std::string good = Write("good.json", Solution(kRelu, kLaunch));
  CliRun ok = Verify({good});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  ASSERT_EQ(ok.verdicts.size(), 1u);
  EXPECT_GT(ok.verdicts[0]["compile"]["kernels"]["relu"]["registers"].get<int>(), 0);
  CliRun bad_flag = Verify({"--trials", "0", good});
  EXPECT_EQ(bad_flag.exit_code, 2);
  EXPECT_TRUE(bad_flag.verdicts.empty());
  // An empty stream is a broken pipeline, not a pass.
  CliRun empty = VerifyCommand(std::string("--compile-only --no-cache --tasks ") + KFORGE_SOURCE_DIR +
                               "/tasks - </dev/null");
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  EXPECT_NE(empty.output.find("no solution was read: the input is empty"), std::string::npos) << empty.output;
}

TEST_F(VerifyCliTest, SharedGpuFlagsApply) {
  std::string good = Write("good.json", Solution(kRelu, kLaunch));
  CliRun seeded = Verify({"--seed", "7", good});
  ASSERT_EQ(seeded.verdicts.size(), 1u) << seeded.output;
  EXPECT_EQ(seeded.verdicts[0]["seed"], 7);
  EXPECT_NE(seeded.output.find("(seed 7)"), std::string::npos) << seeded.output;
  CliRun bad_devices = Verify({"--devices", "0,x", good});
  EXPECT_EQ(bad_devices.exit_code, 2);
  EXPECT_TRUE(bad_devices.verdicts.empty());
  EXPECT_NE(bad_devices.output.find("--devices: \"x\" is not a device index"), std::string::npos)
      << bad_devices.output;
}

// -v and --log-file also work after the command; the log file gets the diagnostics, never the records
// or the summary. Not compile-only, so that a worker starts (without a GPU it answers no_gpu).
TEST_F(VerifyCliTest, VerboseAndLogFileMayFollowTheCommand) {
  std::string good = Write("good.json", Solution(kRelu, kLaunch));
  fs::path log = dir_ / "kforge.log";
  std::string common =
      std::string("--no-cache --kernel-timeout 1 --tasks ") + KFORGE_SOURCE_DIR + "/tasks '" + good + "'";
  CliRun run = VerifyCommand("-v --log-file '" + log.string() + "' " + common);
  ASSERT_EQ(run.verdicts.size(), 1u) << run.output;
  EXPECT_NE(run.output.find("debug worker: started "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("verify: 1 solution"), std::string::npos) << "the summary stays on stderr";
  std::ifstream in(log);
  std::string logged((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(logged.find(" debug ["), std::string::npos) << logged;
  EXPECT_NE(logged.find("worker: started "), std::string::npos) << logged;
  EXPECT_EQ(logged.find("verify: 1 solution"), std::string::npos) << logged;
  EXPECT_EQ(logged.find("\"schema\""), std::string::npos) << "no records in the log";

  CliRun quiet = VerifyCommand(common);
  ASSERT_EQ(quiet.verdicts.size(), 1u) << quiet.output;
  EXPECT_EQ(quiet.output.find("debug"), std::string::npos) << quiet.output;
  CliRun unopenable = VerifyCommand("--log-file /proc/kforge/none " + common);
  EXPECT_EQ(unopenable.exit_code, 2);
  EXPECT_NE(unopenable.output.find("kforge: --log-file /proc/kforge/none: cannot open it for writing"),
            std::string::npos)
      << unopenable.output;
}

// Whatever a line holds, the batch gives exactly one verdict for it, in order, and goes on: numbers
// past a double, invalid UTF-8, duplicate keys, a SIGFPE in an expression, 60 MB of nesting.
TEST_F(VerifyCliTest, EveryInputLineGetsExactlyOneVerdict) {
  std::string good = Solution(kRelu, kLaunch);
  auto with_grid = [&](const std::string& grid) {
    return Solution(kRelu, R"J([{"kernel": "relu", "grid": [")J" + grid +
                               R"J("], "block": [256], "args": ["x", "out0", "i64:numel(x)"]}])J");
  };
  struct Case {
    std::string line;
    std::string status;
    std::string message;
  };
  std::string dup = good;
  dup.insert(1, "\"task\": \"demo/gelu\", ");
  std::vector<Case> cases = {
      {good, "ok", ""},
      {R"({"x": 1e400})", "invalid_solution", "line 1, column 11: number out of range"},
      {with_grid("cdiv(-9223372036854775807-1, -1)"), "invalid_solution", "launches[0].grid[0]: in \"cdiv("},
      {with_grid("cdiv(-9223372036854775807-1, -1)"), "invalid_solution", "integer overflow"},
      {dup, "invalid_solution", "task: duplicate key"},
      {std::string(60 << 20, '['), "invalid_solution", "nested deeper than 64 levels"},
      {"\xEF\xBB\xBF" + good, "ok", ""},
      {"[1, 2", "invalid_solution", "malformed JSON"},
      {good, "ok", ""},
  };
  std::string lines;
  for (const Case& c : cases) lines += c.line + "\n";
  std::string jsonl = Write("batch.jsonl", lines);
  std::string reply =
      Write("reply.md", std::string("```cuda\n") + kRelu +
                            "// \xff\xfe\n```\n```json\n{\"task\": \"demo/relu\", \"launches\": " + kLaunch +
                            "}\n```\n");
  CliRun run = Verify({jsonl, reply});
  EXPECT_EQ(run.exit_code, 1);
  ASSERT_EQ(run.verdicts.size(), cases.size() + 1) << run.output.substr(0, 2000);
  for (size_t i = 0; i < cases.size(); ++i) {
    const nlohmann::json& v = run.verdicts[i];
    EXPECT_EQ(v["solution"], jsonl + ":" + std::to_string(i + 1));
    EXPECT_EQ(v["status"], cases[i].status) << i << ": " << v["message"];
    EXPECT_NE(v["message"].get<std::string>().find(cases[i].message), std::string::npos)
        << i << ": " << v["message"] << "\nwant: " << cases[i].message;
  }
  EXPECT_EQ(run.verdicts.back()["status"], "invalid_solution");
  EXPECT_NE(run.verdicts.back()["message"].get<std::string>().find("```cuda block: invalid UTF-8"),
            std::string::npos)
      << run.verdicts.back()["message"];
}

TEST_F(VerifyCliTest, ShardsSplitTheInputByPositionAndTogetherJudgeEachSolutionOnce) {
  const std::string good = Solution(kRelu, kLaunch);
  std::string lines;
  for (int i = 0; i < 5; ++i) lines += (i == 3 ? std::string("[1, 2") : good) + "\n";
  const std::string jsonl = Write("batch.jsonl", lines);
  const std::string single = Write("one.json", good);
  std::multiset<std::string> judged;
  for (int shard = 0; shard < 3; ++shard) {
    CliRun run = Verify({"--shard", std::to_string(shard) + "/3", jsonl, single});
    // Positions 0-4 are the lines, 5 the file: shard 0 has 0 and 3 (malformed), 1 has 1 and 4, 2 has 2 and 5.
    EXPECT_EQ(run.exit_code, shard == 0 ? 1 : 0) << run.output;
    ASSERT_EQ(run.verdicts.size(), 2u) << run.output;
    for (const nlohmann::json& v : run.verdicts) judged.insert(v["solution"].get<std::string>());
    if (shard == 2) {
      EXPECT_EQ(run.verdicts[1]["solution"], single);
    }
    EXPECT_NE(run.output.find("verify: 2 solutions"), std::string::npos) << run.output;
  }
  EXPECT_EQ(judged.size(), 6u);
  EXPECT_EQ(std::set<std::string>(judged.begin(), judged.end()).size(), 6u) << "a solution judged twice";
  for (const char* bad : {"3/3", "1", "0/0", "a/2"}) {
    CliRun run = Verify({"--shard", bad, single});
    EXPECT_EQ(run.exit_code, 2) << bad;
    EXPECT_NE(run.output.find("--shard " + std::string(bad) + ": expected i/n"), std::string::npos) << run.output;
  }
}

// The static plan check uses the task's real sizes, per variant: a plan that needs size(x, 1) != 1
// is valid, and one that fails only on the "odd" variant says so.
TEST_F(VerifyCliTest, PlansAreCheckedAgainstEveryVariantsRealShapes) {
  std::string needs_sizes =
      Write("needs_sizes.json",
            Solution(kRelu,
                     R"J([{"kernel": "relu", "grid": ["cdiv(numel(x), size(x, 1) - 1)"], "block": [256],
                   "args": ["x", "out0", "i64:numel(x)"]}])J"));
  std::string odd_fails = Write(
      "odd_fails.json", Solution(kRelu, R"J([{"kernel": "relu", "grid": ["size(x, 0) - 333"], "block": [256],
                                 "args": ["x", "out0", "i64:numel(x)"]}])J"));
  CliRun run = Verify({needs_sizes, odd_fails});
  ASSERT_EQ(run.verdicts.size(), 2u) << run.output;
  EXPECT_EQ(run.verdicts[0]["status"], "ok") << run.verdicts[0]["message"];
  EXPECT_EQ(run.verdicts[1]["status"], "invalid_solution");
  EXPECT_EQ(run.verdicts[1]["message"], "launches[0].grid[0]: 0 is outside 1..2147483647 (variant \"odd\")");
}

// A derived variant (sizes the problem never asked for) decides no verdict: a plan that fits only the
// declared sizes passes the static check, where the same variant declared refuses it.
TEST_F(VerifyCliTest, DerivedVariantsDoNotDecideThePlanCheck) {
  for (const char* kind : {"declared", "derived"}) {
    fs::path root = dir_ / (std::string("tasks_") + kind);
    fs::create_directories(root / "demo");
    fs::copy(fs::path(KFORGE_SOURCE_DIR) / "tasks/demo/relu", root / "demo/relu", fs::copy_options::recursive);
    nlohmann::json task = nlohmann::json::parse(std::ifstream(root / "demo/relu/task.json"));
    ASSERT_TRUE(task.contains("variants") && !task["variants"].empty()) << task.dump();
    task["variants"][0]["kind"] = kind;
    std::ofstream(root / "demo/relu/task.json") << task.dump(2);
    const std::string variant = task["variants"][0]["name"];
    const std::string sizes = task["variants"][0]["symbols"].begin().key();
    // Valid at the default size only: the grid is 0 on the variant's smaller size.
    const int64_t base = task["symbols"][sizes].get<int64_t>();
    std::string only_default = Write(std::string("only_default_") + kind + ".json",
                                     Solution(kRelu, R"J([{"kernel": "relu", "grid": [")J" + sizes + " - " +
                                                         std::to_string(base - 1) + R"J("], "block": [256],
                                 "args": ["x", "out0", "i64:numel(x)"]}])J"));
    CliRun run = VerifyCommand("--compile-only --no-cache --tasks '" + root.string() + "' '" + only_default + "'");
    ASSERT_EQ(run.verdicts.size(), 1u) << run.output;
    if (std::string(kind) == "declared") {
      EXPECT_EQ(run.verdicts[0]["status"], "invalid_solution") << run.output;
      EXPECT_NE(run.verdicts[0]["message"].get<std::string>().find("(variant \"" + variant + "\")"),
                std::string::npos)
          << run.output;
    } else {
      EXPECT_EQ(run.verdicts[0]["status"], "ok") << run.output;
    }
  }
}

// Mistakes of the caller are usage errors: exit 2, one line on stderr, no verdict blaming a solution.
TEST_F(VerifyCliTest, JUnitIntoADeviceOrAFifoLeavesItWhatItWas) {
  const std::string relu = std::string(KFORGE_SOURCE_DIR) + "/examples/demo/relu.json";
  if (!kforge::fakes::MakeNullDevice(dir_ / "null")) GTEST_SKIP() << "mknod is not allowed here (it needs CAP_MKNOD)";
  CliRun run = Verify({"--junit", (dir_ / "null").string(), relu});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(kforge::fakes::IsNullDevice(dir_ / "null")) << "the device was replaced by a file";
  std::string xml;
  {
    kforge::fakes::FifoReader reader(dir_ / "fifo");
    ASSERT_TRUE(reader.ok());
    run = Verify({"--junit", (dir_ / "fifo").string(), relu});
    xml = reader.Finish();
  }
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(kforge::fakes::IsFifo(dir_ / "fifo")) << "the FIFO was replaced by a file";
  EXPECT_NE(xml.find("<testsuite name=\"kforge verify\""), std::string::npos) << xml;
}

TEST_F(VerifyCliTest, JUnitNeverLandsInATaskFolder) {
  fs::create_directories(dir_ / "tasks/demo");
  fs::copy(std::string(KFORGE_SOURCE_DIR) + "/tasks/demo/relu", dir_ / "tasks/demo/relu", fs::copy_options::recursive);
  const std::string task = (dir_ / "tasks/demo/relu/task.json").string();
  std::ifstream in(task);
  const std::string before(std::istreambuf_iterator<char>(in), {});
  const std::string relu = std::string(KFORGE_SOURCE_DIR) + "/examples/demo/relu.json";
  for (const std::string& junit : {task, (dir_ / "tasks/demo/relu/report.xml").string(),
                                   (dir_ / "tasks/demo/../demo/relu/task.json").string()}) {
    CliRun run = VerifyCommand("--compile-only --no-cache --tasks " + (dir_ / "tasks").string() + " --junit " + junit +
                               " " + relu);
    EXPECT_EQ(run.exit_code, 2) << junit << "\n" << run.output;
    EXPECT_NE(run.output.find("inside the task folder " + (dir_ / "tasks/demo/relu").string()), std::string::npos)
        << run.output;
  }
  std::ifstream after(task);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(after), {}), before);
  EXPECT_FALSE(fs::exists(dir_ / "tasks/demo/relu/report.xml"));
}

TEST_F(VerifyCliTest, CallerMistakesAreUsageErrors) {
  std::string good = Write("good.json", Solution(kRelu, kLaunch));
  fs::create_directories(dir_ / "d.jsonl");
  fs::create_directories(dir_ / "empty_root");
  std::string tasks = std::string(" --tasks ") + KFORGE_SOURCE_DIR + "/tasks ";
  struct Case {
    std::string args;
    std::string says;
  } cases[] = {
      {"--compile-only" + tasks + (dir_ / "missing.json").string(), "missing.json: no such file"},
      {"--compile-only" + tasks + good + " " + (dir_ / "d.jsonl").string(),
       "d.jsonl: a folder, not a solution file"},
      {"--compile-only --tasks " + (dir_ / "nope").string() + " " + good,
       "--tasks " + (dir_ / "nope").string() + ": no such folder"},
      {"--compile-only --tasks " + (dir_ / "empty_root").string() + " " + good, "no task.json below it"},
      {"--compile-only --arch sm_20" + tasks + good, "--arch \"sm_20\": not supported"},
      {"--compile-only --arch sm_80a" + tasks + good, "no such variant"},
      {"--compile-only --arch compute_90" + tasks + good, "not of the form sm_XX[a|f]"},
      {"--compile-only --seed -1" + tasks + good, "--seed"},
      {"--compile-only --seed 18446744073709551616" + tasks + good, "--seed"},
      {"--compile-only --kernel-timeout nan" + tasks + good, "--kernel-timeout"},
      {"--compile-only --kernel-timeout inf" + tasks + good, "--kernel-timeout"},
  };
  for (const Case& c : cases) {
    CliRun run = VerifyCommand(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.output;
    EXPECT_TRUE(run.verdicts.empty()) << c.args;
    EXPECT_NE(run.output.find(c.says), std::string::npos) << c.args << "\n" << run.output;
    EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << c.args << "\n" << run.output;
  }
  // The largest seed is fine, and a pipe is a solution file like any other.
  CliRun piped = VerifyCommand("--compile-only --seed 18446744073709551615" + tasks + "/dev/stdin < " + good);
  EXPECT_EQ(piped.exit_code, 0) << piped.output;
  ASSERT_EQ(piped.verdicts.size(), 1u) << piped.output;
  EXPECT_EQ(piped.verdicts[0]["seed"], 18446744073709551615ull);
  CliRun fifo = VerifyCommand("--compile-only" + tasks + "/dev/stdin < /dev/null");
  ASSERT_EQ(fifo.verdicts.size(), 1u) << fifo.output;
  EXPECT_EQ(fifo.verdicts[0]["status"], "invalid_solution");
}

// `verify -` as a coprocess: one solution in, its verdict out before the next line is written.
TEST_F(VerifyCliTest, StreamAnswersEachLineBeforeTheNextArrives) {
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  std::string tasks = std::string(KFORGE_SOURCE_DIR) + "/tasks";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1], null}) close(fd);
    execl(KFORGE_BINARY, KFORGE_BINARY, "verify", "--compile-only", "--tasks", tasks.c_str(), "-",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  std::string buffer;
  // The next verdict line, or "" when none comes within 60 s.
  auto read_line = [&]() -> std::string {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (buffer.find('\n') == std::string::npos) {
      int left = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now())
              .count());
      pollfd fd{from_child[0], POLLIN, 0};
      if (left <= 0 || poll(&fd, 1, left) <= 0) return "";
      char chunk[4096];
      ssize_t n = read(from_child[0], chunk, sizeof chunk);
      if (n <= 0) return "";
      buffer.append(chunk, static_cast<size_t>(n));
    }
    std::string line = buffer.substr(0, buffer.find('\n'));
    buffer.erase(0, line.size() + 1);
    return line;
  };
  std::string lines[] = {Solution(kRelu, kLaunch), "{\"task\": \"demo/relu\"}", Solution(kRelu, kLaunch)};
  const char* statuses[] = {"ok", "invalid_solution", "ok"};
  for (int i = 0; i < 3; ++i) {
    std::string line = lines[i] + "\n";
    ASSERT_EQ(write(to_child[1], line.data(), line.size()), static_cast<ssize_t>(line.size()));
    std::string verdict = read_line();
    if (verdict.empty()) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      FAIL() << "no verdict for line " << i + 1 << " within 60 s while the stream stays open";
    }
    nlohmann::json v = nlohmann::json::parse(verdict);
    EXPECT_EQ(v["solution"], "-:" + std::to_string(i + 1));
    EXPECT_EQ(v["status"], statuses[i]) << v["message"];
  }
  close(to_child[1]);
  EXPECT_EQ(read_line(), "");
  int status = 0;
  waitpid(pid, &status, 0);
  close(from_child[0]);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

}  // namespace
