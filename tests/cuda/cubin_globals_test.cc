// The writable globals and imports of a CUBIN that real NVRTC compiled (no GPU needed), the compiler's
// refusal of the device heap, and refusals of bytes that are not a well-formed ELF file.
#include "cuda/cubin_globals.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kforge/cuda/compiler.h"

namespace kforge::cuda {
namespace {

// A memoising kernel's state and every other kind of module-scope variable.
const char* kStatefulSource = R"(
__device__ float cache[1024];
__device__ int launches = 7;
__device__ unsigned long long fingerprint;
__managed__ int flag;
__constant__ float weights[4];
namespace ns { __device__ double pair[3]; }
extern "C" __global__ void k(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { y[i] = x[i] + cache[i % 1024] + launches + flag + weights[0] + ns::pair[i % 3]; cache[i % 1024] = y[i]; }
  if (i == 0) { atomicAdd(&launches, 1); fingerprint = 1; }
}
)";

std::string CompileToCubin(const std::string& source) {
  CompilerOptions options;
  options.use_cache = false;
  const Compiler compiler(options);
  CompileRequest request;
  request.source = source;
  CompileResult result = compiler.Compile(request);
  EXPECT_EQ(result.status, CompileStatus::kOk) << result.message << "\n" << result.log;
  return result.cubin;
}

TEST(CubinGlobalsTest, FindsDeviceAndManagedVariablesButNotConstants) {
  StatusOr<std::vector<CubinGlobal>> globals = CubinGlobals(CompileToCubin(kStatefulSource));
  ASSERT_TRUE(globals.ok()) << globals.status().message();
  std::map<std::string, uint64_t> found;
  for (const CubinGlobal& g : *globals) found[g.name] = g.bytes;
  EXPECT_EQ(found, (std::map<std::string, uint64_t>{{"cache", 4096},
                                                     {"launches", 4},
                                                     {"fingerprint", 8},
                                                     {"flag", 4},
                                                     {"_ZN2ns4pairE", 24}}));
}

TEST(CubinGlobalsTest, AKernelWithoutGlobalsHasNone) {
  StatusOr<std::vector<CubinGlobal>> globals =
      CubinGlobals(CompileToCubin("extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = 1.f; }\n"));
  ASSERT_TRUE(globals.ok()) << globals.status().message();
  EXPECT_TRUE(globals->empty());
}

// A kernel that keeps a block of the device heap: the heap outlives a run, so the compiler refuses it
// (the heap's functions are found as imports; printf's vprintf is one too, and allowed).
const char* kHeapSource = R"(
extern "C" __global__ void k(float* y) {
  float* kept = (float*)malloc(64);
  kept[0] = y[0];
  printf("%f\n", kept[0]);
  free(kept);
}
)";

TEST(CubinGlobalsTest, ImportsNameTheDeviceHeapAndPrintf) {
  StatusOr<std::vector<std::string>> imports = CubinImports(CompileToCubin(
      "extern \"C\" __global__ void k(float* y) { printf(\"%f\\n\", y[0]); }\n"));
  ASSERT_TRUE(imports.ok()) << imports.status().message();
  EXPECT_EQ(*imports, std::vector<std::string>{"vprintf"});
  StatusOr<std::vector<std::string>> none = CubinImports(CompileToCubin(kStatefulSource));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(CubinGlobalsTest, TheCompilerRefusesAKernelThatCallsTheDeviceHeap) {
  CompilerOptions options;
  options.use_cache = false;
  CompileRequest request;
  request.source = kHeapSource;
  CompileResult result = Compiler(options).Compile(request);
  EXPECT_EQ(result.status, CompileStatus::kInvalidSolution);
  EXPECT_NE(result.message.find("device heap (malloc)"), std::string::npos) << result.message;
  EXPECT_TRUE(result.cubin.empty());
}

TEST(CubinGlobalsTest, RefusesBytesThatAreNotAWellFormedElfFile) {
  const std::string cubin = CompileToCubin(kStatefulSource);
  EXPECT_EQ(CubinGlobals("").status().message(), "CUBIN: not an ELF file");
  EXPECT_EQ(CubinGlobals("not an elf file at all, but long enough for a header ........").status().message(),
            "CUBIN: not an ELF file");
  // Every cut of the file is refused or read without reading past its end (ASan and valgrind check the
  // latter); none crashes.
  for (size_t keep = 0; keep < cubin.size(); keep += 61) (void)CubinGlobals(cubin.substr(0, keep));
  std::string bad_sections = cubin;
  bad_sections[0x28] = '\xff';  // e_shoff's low byte: the section headers move past the end
  bad_sections[0x2f] = '\x7f';
  EXPECT_FALSE(CubinGlobals(bad_sections).ok());
}

}  // namespace
}  // namespace kforge::cuda
