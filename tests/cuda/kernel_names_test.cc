// Kernels by name: template instances through NVRTC name expressions, C++ kernels by their plain
// or qualified names, and a missing name's message listing the kernels there are. Real NVRTC.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "kforge/cuda/compiler.h"

namespace kforge::cuda {
namespace {

const char* kSource = R"(
template <typename T, int N>
__global__ void softmax(const T* x, T* y) { y[threadIdx.x % N] = x[0]; }
template __global__ void softmax<double, 64>(const double*, double*);
__global__ void plain(float* p) { p[0] = 1.f; }
extern "C" __global__ void cfun(float* p) { p[0] = 2.f; }
namespace ns {
__global__ void scale(int* p) { *p = 3; }
}
__global__ void over(float* p) { p[0] = 4.f; }
__global__ void over(double* p) { p[0] = 5.0; }
template <typename T>
__device__ T helper(T v) { return v + 1; }
namespace {
__global__ void hidden(float* p) { p[0] = 6.f; }
}
)";

struct NameCase {
  const char* launch;                // what a launch names
  bool expression;                   // handed to NVRTC as a name expression
  std::string symbol;                // the symbol found ("...x": one ending in x), or "" when none is
  std::vector<std::string> message;  // parts of the NotFound message
};

std::vector<NameCase> NameCases() {
  const std::vector<std::string> listing = {
      "the source has", "cfun", "plain(float*)", "softmax<double, 64>(double const*, double*)",
      "a template kernel is named by an instance, as in \"softmax<float, 256>\""};
  auto with = [&](std::vector<std::string> parts) {
    parts.insert(parts.end(), listing.begin(), listing.end());
    return parts;
  };
  return {
      {"softmax<float, 256>", true, "_Z7softmaxIfLi256EEvPKT_PS0_", {}},
      {"softmax<float,256>", true, "_Z7softmaxIfLi256EEvPKT_PS0_", {}},
      {"softmax<double, 64>", true, "_Z7softmaxIdLi64EEvPKT_PS0_", {}},
      {"cfun", false, "cfun", {}},
      {"plain", false, "_Z5plainPf", {}},
      {"ns::scale", false, "_ZN2ns5scaleEPi", {}},
      {"::plain", false, "_Z5plainPf", {}},
      {"_Z5plainPf", false, "_Z5plainPf", {}},
      // The anonymous namespace's symbol holds a hash of the program: match its end.
      {"hidden", false, "...6hiddenEPf", {}},
      {"softmax", false, "", with({"no kernel \"softmax\" in the compiled source"})},
      {"nosuch", false, "", with({"no kernel \"nosuch\" in the compiled source"})},
      {"softmax<float>", true, "", with({"no kernel \"softmax<float>\": cannot determine which instance"})},
      {"nosuch<int>", true, "", with({"no kernel \"nosuch<int>\": identifier \"nosuch\" is undefined"})},
      {"helper<float>", true, "",
       with({"no kernel \"helper<float>\": Name expression cannot form address of a non-__global__ "
             "function"})},
      {"over", false, "", with({"several kernels are named \"over\""})},
  };
}

class KernelNamesTest : public ::testing::TestWithParam<NameCase> {};

TEST_P(KernelNamesTest, Resolves) {
  const NameCase& c = GetParam();
  CompilerOptions options;
  options.use_cache = false;
  const Compiler compiler(options);
  CompileRequest request;
  request.source = kSource;
  // A good expression alongside: one that names nothing must not cost the others.
  if (c.expression) request.name_expressions = {c.launch, "softmax<int, 32>"};
  const CompileResult r = compiler.Compile(request);
  ASSERT_EQ(r.status, CompileStatus::kOk) << r.message << "\n" << r.log;
  if (c.expression) {
    ASSERT_EQ(r.lowered_names.count("softmax<int, 32>"), 1u);
    EXPECT_EQ(r.kernels.count(r.lowered_names.at("softmax<int, 32>")), 1u);
  }
  const StatusOr<std::string> symbol = FindKernel(r, c.launch);
  if (!c.symbol.empty()) {
    ASSERT_TRUE(symbol.ok()) << symbol.status().message();
    if (c.symbol.rfind("...", 0) == 0) {
      const std::string end = c.symbol.substr(3);
      EXPECT_TRUE(symbol->size() > end.size() && symbol->substr(symbol->size() - end.size()) == end)
          << *symbol;
    } else {
      EXPECT_EQ(*symbol, c.symbol);
    }
    return;
  }
  ASSERT_FALSE(symbol.ok()) << *symbol;
  const std::string& message = symbol.status().message();
  for (const std::string& part : c.message) EXPECT_NE(message.find(part), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_LE(message.size(), 600u);
}

INSTANTIATE_TEST_SUITE_P(Table, KernelNamesTest, ::testing::ValuesIn(NameCases()), [](const auto& info) {
  std::string name;
  for (const char c : std::string(info.param.launch))
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name + "_" + std::to_string(info.index);
});

TEST(KernelNames, LoweredNamesAndErrorsAreCached) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kforge-names-cache-" + std::to_string(getpid()));
  CompilerOptions options;
  options.cache_dir = dir;
  const Compiler compiler(options);
  CompileRequest request;
  request.source = kSource;
  request.name_expressions = {"softmax<float, 128>", "nosuch<int>"};
  const CompileResult first = compiler.Compile(request);
  const CompileResult second = compiler.Compile(request);
  std::filesystem::remove_all(dir);
  ASSERT_EQ(second.status, CompileStatus::kOk) << second.message;
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.lowered_names, first.lowered_names);
  EXPECT_EQ(second.name_errors, first.name_errors);
  EXPECT_EQ(second.lowered_names.at("softmax<float, 128>"), "_Z7softmaxIfLi128EEvPKT_PS0_");
  EXPECT_EQ(second.name_errors.count("nosuch<int>"), 1u);
}

TEST(KernelNames, ExpressionsThatCouldInjectCodeAreRefused) {
  CompilerOptions options;
  options.use_cache = false;
  const Compiler compiler(options);
  for (const char* bad : {"k<1>\n#include </etc/passwd>", "k<\"x\">", "k<1> // c", "_Pragma(\"x\")"}) {
    CompileRequest request;
    request.source = kSource;
    request.name_expressions = {bad};
    const CompileResult r = compiler.Compile(request);
    EXPECT_EQ(r.status, CompileStatus::kInvalidSolution) << bad;
    EXPECT_NE(r.message.find("is not a C++ name"), std::string::npos) << r.message;
  }
}

TEST(KernelNames, SourceErrorsStayCompileErrors) {
  CompilerOptions options;
  options.use_cache = false;
  const Compiler compiler(options);
  CompileRequest request;
  request.source = std::string(kSource) + "__global__ void broken() { nope; }\n";
  request.name_expressions = {"nosuch<int>"};
  const CompileResult r = compiler.Compile(request);
  EXPECT_EQ(r.status, CompileStatus::kCompileError);
  EXPECT_NE(r.log.find("\"nope\" is undefined"), std::string::npos) << r.log;
}

}  // namespace
}  // namespace kforge::cuda
