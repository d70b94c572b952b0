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
  EXPECT_TRUE(
      LogNamesOnlyAllowedFiles("kernel.cu(2): error: x\n/c/include/mma.h(3): note\n", "kernel.cu", dirs));
  EXPECT_FALSE(LogNamesOnlyAllowedFiles("/etc/passwd(1): error: x\n", "kernel.cu", dirs));
  EXPECT_FALSE(LogNamesOnlyAllowedFiles("other.h(1): error: x\n", "kernel.cu", dirs));
  EXPECT_FALSE(LogNamesOnlyAllowedFiles("in file \"/c/include/../../etc/shadow\"\n", "kernel.cu", dirs));
  EXPECT_FALSE(LogNamesOnlyAllowedFiles("see /home/u/secret\n", "kernel.cu", dirs));
  EXPECT_TRUE(LogNamesOnlyAllowedFiles("x = a/b; (3): text\n", "kernel.cu", dirs));
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
}

}  // namespace
}  // namespace kforge::cuda::internal
