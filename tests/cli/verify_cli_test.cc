// `kforge verify --compile-only` end to end on bad input: one verdict line each, a one-line message
// naming what and where, the right exit code, and never the content of a rejected file.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;
  std::vector<nlohmann::json> verdicts;
  std::string output;  // stdout and stderr
};

CliRun Verify(const std::vector<std::string>& args) {
  std::string command = std::string(KFORGE_BINARY) + " verify --compile-only --no-cache --tasks " +
                        KFORGE_SOURCE_DIR + "/tasks";
  for (const std::string& a : args) command += " '" + a + "'";
  CliRun run;
  std::string err_path = fs::temp_directory_path() / "kforge_cli_test_stderr";
  FILE* pipe = popen((command + " 2>" + err_path).c_str(), "r");
  char buffer[4096];
  std::string out;
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  run.output = out + std::string(std::istreambuf_iterator<char>(err), {});
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    run.verdicts.push_back(nlohmann::json::parse(out.substr(start, end - start)));
    start = end + 1;
  }
  return run;
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

}  // namespace
