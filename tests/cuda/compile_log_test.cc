// Tests of log post-processing and the opened-files audit.
#include "cuda/compile_log.h"

#include <gtest/gtest.h>

namespace kforge::cuda::internal {
namespace {

TEST(ExtractPtxasInfo, ParsesEntriesAndStripsInfoLines) {
  const std::string log =
      "kernel.cu(3): warning: something\n"
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : Function properties for k\n"
      "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 368 bytes cmem[0]\n"
      "ptxas info    : Function properties for helper\n"
      "ptxas         .     32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas warning : Registers are spilled to local memory in function 'k'\n"
      "ptxas info    : Compile time = 2.882 ms\n";
  std::map<std::string, KernelInfo> kernels;
  const std::string out = ExtractPtxasInfo(log, &kernels);
  EXPECT_EQ(out,
            "kernel.cu(3): warning: something\n"
            "ptxas warning : Registers are spilled to local memory in function 'k'\n");
  ASSERT_EQ(kernels.size(), 1u);
  const KernelInfo& k = kernels.at("k");
  EXPECT_EQ(k.registers, 40);
  EXPECT_EQ(k.shared_bytes, 2048);
  EXPECT_EQ(k.stack_bytes, 16);
  EXPECT_EQ(k.spill_store_bytes, 8);
  EXPECT_EQ(k.spill_load_bytes, 4);
}

TEST(ShortenPaths, LongestPrefixFirst) {
  EXPECT_EQ(ShortenPaths("/c/include/cccl/cub/x.cuh(1): /c/include/mma.h",
                         {{"/c/include", "<cuda>"}, {"/c/include/cccl", "<cccl>"}}),
            "<cccl>/cub/x.cuh(1): <cuda>/mma.h");
}

TEST(LogNamesOnlyAllowedFiles, Table) {
  const std::vector<std::string> dirs = {"/c/include/cccl", "/c/include"};
  const std::vector<std::string> in_memory = {"math.h", "torch/extension.h"};
  struct Row {
    const char* log;
    bool allowed;
  };
  const Row rows[] = {
      {"kernel.cu(2): error: x\n/c/include/mma.h(3): note\n", true},
      {"/etc/passwd(1): error: x\n", false},
      {"other.h(1): error: x\n", false},
      {"/c/include/../../etc/shadow(1): error: x\n", false},
      {"math.h(4): error: x\ntorch/extension.h(1): warning: y\n", true},
      {"__nv_name_map(2): error: identifier \"k\" is undefined\n", true},
      {"__nv_nvrtc_builtin_header.h(9): error: x\n", true},
      {"kernel.cu(1): error: x\n  detected during instantiation of \"f<int>\" at line 7 of "
       "/c/include/cub/a.cuh\n",
       true},
      {"kernel.cu(1): error: x\n  detected during instantiation of \"f<int>\" at line 7 of /home/u/a.h\n",
       false},
      {"kernel.cu(1): error: x\n  detected during instantiation of \"f<int>\" at line 7\n", true},
      // Paths that are not file reads: source lines quoted under a diagnostic, prose, literals.
      {"kernel.cu(3): error: expected a \";\"\n  const char* p = \"/etc/passwd\" x\n    ^\n", true},
      {"kernel.cu(3): error: identifier \"y\" is undefined\n  f(\"/home/u/secret(1): error\", y);\n", true},
      {"see /home/u/secret\n", true},
      {"x = a/b; (3): text\n", true},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(LogNamesOnlyAllowedFiles(row.log, "kernel.cu", dirs, in_memory), row.allowed) << row.log;
  }
}

TEST(FilesNamedInLog, LocationsAndInstantiationContexts) {
  EXPECT_EQ(
      FilesNamedInLog("a.cu(1): error: x\n  \"/q/r\"\n  at line 3 of /x/y.h\nat line 4\nb.h(2): note\n"),
      (std::vector<std::string>{"a.cu", "/x/y.h", "b.h"}));
}

TEST(NameMap, ErrorsAreAttributedToTheirNames) {
  const std::string log =
      "__nv_name_map(2): error: identifier \"nosuch\" is undefined\n"
      "  #pragma nv_mangled_name nosuch\n"
      "                          ^\n\n"
      "__nv_name_map(3): error: cannot determine which instance of function template \"f\" is intended\n"
      "  #pragma nv_mangled_name f<float>\n\n"
      "2 errors detected in the compilation of \"kernel.cu\".\n";
  EXPECT_TRUE(ErrorsOnlyInNameMap(log));
  const std::map<std::string, std::string> errors = NameMapErrors(log, {"nosuch", "f<float>", "ok<int>"});
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors.at("nosuch"), "identifier \"nosuch\" is undefined");
  EXPECT_EQ(errors.at("f<float>"), "cannot determine which instance of function template \"f\" is intended");

  EXPECT_FALSE(ErrorsOnlyInNameMap("kernel.cu(1): error: x\n" + log));
  EXPECT_FALSE(ErrorsOnlyInNameMap("kernel.cu(1): warning: x\n"));
  EXPECT_TRUE(ErrorsOnlyInNameMap("kernel.cu(1): warning: x\n__nv_name_map(2): error: y\n"));
}

TEST(ReadOpenedHeaders, ParsesTrace) {
  std::vector<std::string> headers;
  ASSERT_TRUE(ReadOpenedHeaders(
      R"({"traceEvents":[{"name":"Processing Header File","args":{"detail":"/c/include/mma.h"}},
                         {"name":"Phase I","args":{"detail":"x"}}]})",
      &headers));
  EXPECT_EQ(headers, std::vector<std::string>{"/c/include/mma.h"});
  EXPECT_FALSE(ReadOpenedHeaders("not json", &headers));
}

TEST(IsAllowedOpenedFile, Table) {
  const std::vector<std::string> dirs = {"/c/include"};
  EXPECT_TRUE(IsAllowedOpenedFile("__nv_nvrtc_builtin_header.h", dirs));
  EXPECT_TRUE(IsAllowedOpenedFile("/c/include/cuda_fp16.h", dirs));
  EXPECT_FALSE(IsAllowedOpenedFile("/c/includex/a.h", dirs));
  EXPECT_FALSE(IsAllowedOpenedFile("/c/include/../secret", dirs));
  EXPECT_FALSE(IsAllowedOpenedFile("/tmp/x.h", dirs));
  EXPECT_FALSE(IsAllowedOpenedFile("x.h", dirs));
  EXPECT_TRUE(IsAllowedOpenedFile("math.h", dirs, {"math.h"}));
  EXPECT_FALSE(IsAllowedOpenedFile("./math.h", dirs, {"math.h"}));
  EXPECT_TRUE(IsAllowedOpenedFile("__nv_name_map", dirs));
}

}  // namespace
}  // namespace kforge::cuda::internal
