// `kforge verify --compile-only` end to end on what the compile stage decides: a preprocessor bomb
// is a compile_error at the deadline and the process exits promptly; headers as models write them
// compile with warnings in the verdict; template kernels are found by name; a failed compile that
// quotes an absolute path keeps its log. No GPU needed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/command.h"

namespace {

namespace fs = std::filesystem;

class CompileCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_compile_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A demo/relu solution with `source` and one launch of `kernel`, written to `name`.
  std::string Write(const std::string& name, const std::string& source, const std::string& kernel) {
    const nlohmann::json launch = {{"kernel", kernel},
                                   {"grid", {"cdiv(numel(x), 256)"}},
                                   {"block", {256}},
                                   {"args", {"x", "out0", "i64:numel(x)"}}};
    const nlohmann::json j = {{"task", "demo/relu"}, {"source", source}, {"launches", {launch}}};
    const fs::path path = dir_ / name;
    std::ofstream(path) << j.dump();
    return path.string();
  }

  kforge::fakes::CommandResult Verify(const std::vector<std::string>& files, const std::string& flags = "") {
    std::string command = std::string(KFORGE_BINARY) + " verify --compile-only --no-cache --tasks " +
                          KFORGE_SOURCE_DIR + "/tasks " + flags;
    for (const std::string& f : files) command += " '" + f + "'";
    return kforge::fakes::RunCommand(command + " 2>/dev/null");
  }

  fs::path dir_;
};

TEST_F(CompileCliTest, ExpansionBombIsACompileErrorAtTheDeadlineAndTheProcessExits) {
  std::string bomb = "#define A0 x x\n";
  for (int i = 1; i <= 60; ++i) {
    bomb +=
        "#define A" + std::to_string(i) + " A" + std::to_string(i - 1) + " A" + std::to_string(i - 1) + "\n";
  }
  bomb += "extern \"C\" __global__ void relu(const float* x, float* y, long long n) { A60; }\n";
  const std::string file = Write("bomb.json", bomb, "relu");
  const auto start = std::chrono::steady_clock::now();
  const kforge::fakes::CommandResult run = Verify({file}, "--compile-timeout 2");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(8)) << "verify must exit soon after the 2 s deadline";
  EXPECT_EQ(run.exit_code, 1);
  const std::vector<nlohmann::json> verdicts = kforge::fakes::JsonLines(run.out);
  ASSERT_EQ(verdicts.size(), 1u) << run.out;
  EXPECT_EQ(verdicts[0].value("status", ""), "compile_error");
  EXPECT_EQ(verdicts[0].value("message", ""), "compile exceeded the 2000 ms deadline");
}

TEST_F(CompileCliTest, VerdictsOfTheCompileStage) {
  const std::string relu_body =
      "(const float* x, float* y, long long n) {\n"
      "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = fmaxf(x[i], 0.f);\n}\n";
  struct Case {
    std::string file;
    std::string status;
    std::string message;  // part of the message ("" when ok)
    std::string compile;  // part of the verdict's compile object, dumped
  };
  const std::vector<Case> cases = {
      {Write("headers.json",
             "#include <torch/extension.h>\n#include <math.h>\n#include <cfloat>\n#include <cstdint>\n"
             "extern \"C\" __global__ void relu" +
                 relu_body,
             "relu"),
       "ok", "", "#include <torch/extension.h> dropped: not needed: host code is not part of a solution"},
      {Write("template.json", "template <typename T>\n__global__ void relu" + relu_body, "relu<float>"), "ok",
       "", "_Z4reluIfE"},
      {Write("cxx_kernel.json", "__global__ void relu" + relu_body, "relu"), "ok", "", "_Z4reluPKfPfx"},
      {Write("missing.json", "template <typename T>\n__global__ void relu" + relu_body, "relu"),
       "invalid_solution",
       "launches[0].kernel: no kernel \"relu\" in the compiled source; the source has no kernels", ""},
      {Write("missing_instance.json", "template <typename T>\n__global__ void relu" + relu_body,
             "gelu<float>"),
       "invalid_solution", "launches[0].kernel: no kernel \"gelu<float>\": identifier \"gelu\" is undefined",
       ""},
      {Write("path_in_literal.json",
             "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
             "  const char* p = \"/etc/passwd\"; y[0] = undefined_name;\n}\n",
             "relu"),
       "compile_error", "kernel.cu(2): error: identifier \"undefined_name\" is undefined", "/etc/passwd"},
  };
  std::vector<std::string> files;
  for (const Case& c : cases) files.push_back(c.file);
  const kforge::fakes::CommandResult run = Verify(files);
  const std::vector<nlohmann::json> verdicts = kforge::fakes::JsonLines(run.out);
  ASSERT_EQ(verdicts.size(), cases.size()) << run.out;
  for (size_t i = 0; i < cases.size(); ++i) {
    const nlohmann::json& v = verdicts[i];
    EXPECT_EQ(v.value("status", ""), cases[i].status) << cases[i].file << ": " << v.value("message", "");
    EXPECT_NE(v.value("message", "").find(cases[i].message), std::string::npos)
        << cases[i].file << ": " << v.value("message", "");
    EXPECT_NE(v["compile"].dump().find(cases[i].compile), std::string::npos)
        << cases[i].file << ": " << v["compile"];
  }
}

// The solutions of the GPU test of device libraries (tests/verify/device_libraries_gpu_test.cc)
// compile and pass the static plan check here, without a GPU.
TEST_F(CompileCliTest, DeviceLibrarySolutionsCompile) {
  std::vector<std::string> files;
  for (const auto& entry :
       fs::directory_iterator(fs::path(KFORGE_SOURCE_DIR) / "tests/verify/device_libraries")) {
    files.push_back(entry.path().string());
  }
  ASSERT_EQ(files.size(), 3u);
  const kforge::fakes::CommandResult run = Verify(files);
  const std::vector<nlohmann::json> verdicts = kforge::fakes::JsonLines(run.out);
  ASSERT_EQ(verdicts.size(), files.size()) << run.out;
  for (const nlohmann::json& v : verdicts) {
    EXPECT_EQ(v.value("status", ""), "ok")
        << v.value("solution", "") << ": " << v.value("message", "") << "\n"
        << v["compile"].value("log", "");
  }
  EXPECT_EQ(run.exit_code, 0);
}

}  // namespace
