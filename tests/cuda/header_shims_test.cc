// Headers as models write them: C and C++ library headers compile through kforge's shims and mean
// what they mean in C and C++; host-only headers are dropped with a warning. Real NVRTC, no GPU.
#include "cuda/header_shims.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "kforge/cuda/compiler.h"

namespace kforge::cuda {
namespace {

struct HeaderCase {
  const char* name;
  std::string source;
  /// Each must occur in one of the result's warnings, and there must be as many warnings.
  std::vector<std::string> warnings;
};

// Each source checks meanings with static_assert, so a wrong definition fails the compile.
std::vector<HeaderCase> HeaderCases() {
  const std::string same =
      "template <class A, class B> struct same { static constexpr bool v = false; };\n"
      "template <class A> struct same<A, A> { static constexpr bool v = true; };\n";
  return {
      {"math_h",
       "#include <math.h>\n"
       "static_assert(INFINITY > 3.4e38f, \"\");\nstatic_assert(NAN != NAN, \"\");\n"
       "static_assert(HUGE_VALF == INFINITY && HUGE_VAL > 1e308, \"\");\n"
       "static_assert(M_PI > 3.14159 && M_PI < 3.1416, \"\");\n"
       "__device__ const float kNegInf = -INFINITY;\n"
       "extern \"C\" __global__ void k(float* x) { x[0] = fmaxf(sqrtf(x[1]), kNegInf) + (isnan(x[2]) ? NAN : "
       "0.f); }\n",
       {}},
      {"cmath",
       "#include <cmath>\n" + same +
           "extern \"C\" __global__ void k(float* x, double* d) {\n"
           "  static_assert(same<decltype(std::abs(x[0])), float>::v, \"abs(float) is float\");\n"
           "  static_assert(same<decltype(std::sqrt(x[0])), float>::v, \"\");\n"
           "  static_assert(same<decltype(std::exp(d[0])), double>::v, \"\");\n"
           "  static_assert(same<decltype(std::pow(x[0], 2)), float>::v, \"\");\n"
           "  x[0] = std::tanh(x[1]) + std::fmax(x[2], x[3]) + std::round(x[4]) + (std::isinf(x[5]) ? 1.f : "
           "0.f);\n"
           "  d[0] = std::floor(d[1]) + std::abs(-3) + M_PI;\n}\n",
       {}},
      {"float_h_and_cfloat",
       "#include <float.h>\n#include <cfloat>\n"
       "static_assert(FLT_MAX > 3.4e38f && (double)FLT_MAX < 3.5e38, \"\");\n"
       "static_assert(FLT_MIN > 1.1e-38f && FLT_EPSILON == 1.0f / 8388608, \"\");\n"
       "static_assert(DBL_MAX > 1.7e308 && DBL_EPSILON == 1.0 / 4503599627370496.0, \"\");\n"
       "static_assert(FLT_MANT_DIG == 24 && DBL_DIG == 15, \"\");\n"
       "extern \"C\" __global__ void k(float* x) { float m = -FLT_MAX; x[0] = fmaxf(m, x[1]); }\n",
       {}},
      {"stdint_and_cstdint",
       "#include <stdint.h>\n#include <cstdint>\n" + same +
           "static_assert(sizeof(int64_t) == 8 && sizeof(uint8_t) == 1 && sizeof(std::int32_t) == 4, \"\");\n"
           "static_assert(INT64_MAX == 9223372036854775807LL && UINT32_MAX == 4294967295u, \"\");\n"
           "static_assert(same<std::uint64_t, uint64_t>::v && (int64_t)-1 < 0, \"\");\n"
           "extern \"C\" __global__ void k(const float* x, float* y, int64_t n) {\n"
           "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }\n",
       {}},
      {"limits_climits",
       "#include <limits>\n#include <climits>\n#include <limits.h>\n"
       "static_assert(std::numeric_limits<int>::max() == INT_MAX && CHAR_BIT == 8, \"\");\n"
       "static_assert(std::numeric_limits<float>::infinity() > std::numeric_limits<float>::max(), \"\");\n"
       "static_assert(std::numeric_limits<float>::lowest() == -std::numeric_limits<float>::max(), \"\");\n"
       "extern \"C\" __global__ void k(float* x) { x[0] = -std::numeric_limits<float>::infinity(); }\n",
       {}},
      {"algorithm",
       "#include <algorithm>\n"
       "static_assert(std::min(3, 4) == 3 && std::max(3, 4) == 4 && std::clamp(9, 0, 5) == 5, \"\");\n"
       "struct Greater {\n  __host__ __device__ constexpr bool operator()(int a, int b) const { return a > "
       "b; }\n};\n"
       "static_assert(std::max(1, 2, Greater()) == 1 && std::min(1, 2, Greater()) == 2, \"\");\n"
       "extern \"C\" __global__ void k(float* x) { x[0] = std::min(x[1], x[2]) + std::max(x[3], 0.f); }\n",
       {}},
      {"stdio_stdlib_string_assert_stddef",
       "#include <stdio.h>\n#include <cstdio>\n#include <stdlib.h>\n#include <cstdlib>\n#include <string.h>\n"
       "#include <cstring>\n#include <assert.h>\n#include <cassert>\n#include <stddef.h>\n#include "
       "<cstddef>\n"
       "struct P { int a; float b; };\nstatic_assert(offsetof(P, b) == 4, \"\");\n"
       "extern \"C\" __global__ void k(float* x) {\n  assert(x != NULL);\n  std::size_t n = sizeof(P);\n"
       "  if (threadIdx.x == 0) std::printf(\"%d %f\\n\", std::abs(-2), x[0]);\n"
       "  std::memcpy(x, x + 1, n); memset(x + 2, 0, 4);\n}\n",
       {}},
      {"cuda_h_and_runtime",
       "#include <cuda.h>\n#include <cuda_runtime.h>\n#include <cuda_runtime_api.h>\n"
       "static_assert(sizeof(CUdeviceptr) == 8 && sizeof(CUtensorMap) == 128 && alignof(CUtensorMap) == 64, "
       "\"\");\n"
       "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = 0.f; }\n",
       {}},
      {"type_traits_and_utility",
       "#include <type_traits>\n#include <utility>\n"
       "template <class T, class = std::enable_if_t<std::is_floating_point_v<T>>>\n"
       "__device__ T twice(T v) { return v * 2; }\n"
       "static_assert(std::is_same<std::remove_cv_t<const float>, float>::value, \"\");\n"
       "extern \"C\" __global__ void k(float* x) { float a = x[0], b = x[1]; std::swap(a, b);"
       " auto p = std::make_pair(a, b); x[0] = twice(p.first) + std::move(b); }\n",
       {}},
      {"host_code_headers_dropped",
       "#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n#include <c10/cuda/CUDAGuard.h>\n"
       "#include <pybind11/pybind11.h>\n#include <vector>\n#include <iostream>\n"
       "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n",
       {"#include <torch/extension.h> dropped: not needed: host code is not part of a solution",
        "#include <ATen/cuda/CUDAContext.h> dropped: not needed: host code is not part of a solution",
        "#include <c10/cuda/CUDAGuard.h> dropped: not needed",
        "#include <pybind11/pybind11.h> dropped: not needed",
        "#include <vector> dropped: a host-only C++ library header",
        "#include <iostream> dropped: a host-only C++ library header"}},
      // The include block of a published KernelBench solution, device code as published.
      {"published_style",
       "#include <torch/extension.h>\n#include <cuda_runtime.h>\n#include <cuda.h>\n#include <cuda_fp16.h>\n"
       "#include <math.h>\n#include <float.h>\n#include <cfloat>\n#include <stdint.h>\n#include <vector>\n"
       "#include <algorithm>\n\n"
       "__global__ void max_reduce_kernel(const float* __restrict__ input, float* __restrict__ output,\n"
       "                                  int64_t outer, int64_t inner) {\n"
       "  int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
       "  if (idx >= outer) return;\n"
       "  float m = -FLT_MAX;\n"
       "  for (int64_t j = 0; j < inner; ++j) m = fmaxf(m, input[idx * inner + j]);\n"
       "  output[idx] = m == -INFINITY ? 0.0f : m;\n}\n",
       {"#include <torch/extension.h> dropped", "#include <vector> dropped"}},
  };
}

class HeaderShimsTest : public ::testing::TestWithParam<HeaderCase> {};

TEST_P(HeaderShimsTest, CompilesAndWarns) {
  const HeaderCase& c = GetParam();
  CompilerOptions options;
  options.use_cache = false;
  const Compiler compiler(options);
  CompileRequest request;
  request.source = c.source;
  const CompileResult r = compiler.Compile(request);
  ASSERT_EQ(r.status, CompileStatus::kOk) << r.message << "\n" << r.log;
  EXPECT_FALSE(r.cubin.empty());
  ASSERT_EQ(r.warnings.size(), c.warnings.size()) << ::testing::PrintToString(r.warnings);
  for (size_t i = 0; i < c.warnings.size(); ++i) {
    EXPECT_NE(r.warnings[i].find(c.warnings[i]), std::string::npos) << r.warnings[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Table, HeaderShimsTest, ::testing::ValuesIn(HeaderCases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(HeaderShims, EveryShimCompilesUnderEachAllowedDialect) {
  std::string source;
  for (const char* h :
       {"math.h",   "cmath",   "float.h",   "cfloat", "stdint.h",    "cstdint", "limits.h", "climits",
        "stddef.h", "cstddef", "stdio.h",   "cstdio", "stdlib.h",    "cstdlib", "string.h", "cstring",
        "assert.h", "cassert", "algorithm", "limits", "type_traits", "utility", "cuda.h"}) {
    source += std::string("#include <") + h + ">\n";
  }
  source +=
      "extern \"C\" __global__ void k(float* x) { x[0] = std::min(FLT_MAX, INFINITY) + (int64_t)INT_MAX; }\n";
  CompilerOptions options;
  options.use_cache = false;
  const Compiler compiler(options);
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
           {}, {"--std=c++20"}, {"-default-device"}, {"--use_fast_math", "-std=c++17"}}) {
    CompileRequest request;
    request.source = source;
    request.options = flags;
    const CompileResult r = compiler.Compile(request);
    EXPECT_EQ(r.status, CompileStatus::kOk) << ::testing::PrintToString(flags) << ": " << r.message << "\n"
                                            << r.log;
    EXPECT_TRUE(r.warnings.empty());
  }
}

TEST(HeaderShims, ErrorsInsideAShimAreCompileErrorsThatNameIt) {
  CompilerOptions options;
  options.use_cache = false;
  const Compiler compiler(options);
  CompileRequest request;
  // Breaks the shim's own text: the log points into it, and it is not a file outside the sandbox.
  request.source = "#define using int\n#include <cstdint>\nextern \"C\" __global__ void k() {}\n";
  const CompileResult r = compiler.Compile(request);
  ASSERT_EQ(r.status, CompileStatus::kCompileError) << r.message;
  EXPECT_NE(r.log.find("cstdint("), std::string::npos) << r.log;
}

TEST(HeaderShims, WarningsAreRecomputedForCachedResults) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kforge-shim-cache-" + std::to_string(getpid()));
  CompilerOptions options;
  options.cache_dir = dir;
  const Compiler compiler(options);
  CompileRequest request;
  request.source = "#include <torch/extension.h>\nextern \"C\" __global__ void k(float* x) { x[0] = 2.f; }\n";
  const CompileResult first = compiler.Compile(request);
  const CompileResult second = compiler.Compile(request);
  std::filesystem::remove_all(dir);
  ASSERT_EQ(second.status, CompileStatus::kOk) << second.message;
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.warnings, first.warnings);
  EXPECT_EQ(second.warnings.size(), 1u);
}

TEST(HeaderShims, OnlyTheNamedShimsAndTheirNeedsAreHandedToNvrtc) {
  std::vector<std::string> warnings;
  const std::vector<internal::InMemoryHeader> headers =
      internal::ShimsFor({"cmath", "cuda_fp16.h", "math.h", "torch/types.h", "cstdint"}, &warnings);
  std::vector<std::string> names;
  for (const internal::InMemoryHeader& h : headers) names.push_back(h.name);
  EXPECT_EQ(names, (std::vector<std::string>{"cmath", "math.h", "torch/types.h", "cstdint", "stdint.h"}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "#include <torch/types.h> dropped: not needed: host code is not part of a solution");
  EXPECT_EQ(headers[2].text, "");
}

TEST(HeaderShims, FindByNameAndFamily) {
  struct Row {
    const char* header;
    bool found;
  };
  const Row rows[] = {{"math.h", true},  {"cmath", true},       {"ATen/ATen.h", true},
                      {"torch/", false}, {"torchx/y.h", false}, {"cuda_fp16.h", false},
                      {"math", false},   {"Python.h", true},    {"vector", true}};
  for (const Row& row : rows)
    EXPECT_EQ(internal::FindHeaderShim(row.header) != nullptr, row.found) << row.header;
}

}  // namespace
}  // namespace kforge::cuda
