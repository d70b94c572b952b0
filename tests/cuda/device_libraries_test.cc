// The CUDA device libraries compile under kforge's sandbox: WMMA (<mma.h>), cooperative groups,
// <cuda_pipeline.h>, <cuda/barrier>, the fp16/bf16/fp8 types, and wgmma/TMA inline PTX on sm_90a.
// Their headers include their neighbours by quoted relative names, which the sandbox must allow
// without letting the program's own quoted includes reach the working directory. Real NVRTC.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "kforge/cuda/compiler.h"

namespace kforge::cuda {
namespace {

struct LibraryCase {
  const char* name;
  std::string source;
  std::string arch;
  CompileStatus expect;
  const char* kernel;  // a kernel the CUBIN must have (when ok), or text the log must hold
};

const char* kWmma = R"(#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;
extern "C" __global__ void wmma16(const __half* a, const __half* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
)";

const char* kCooperativeGroups = R"(#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cg_sum(const float* x, float* out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  float v = 0.f;
  for (int i = block.thread_rank(); i < n; i += block.size()) v += x[i];
  v = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) atomicAdd(out, v);
}
)";

const char* kPipeline = R"(#include <cuda_pipeline.h>
extern "C" __global__ void staged_copy(const float4* x, float4* y) {
  __shared__ float4 s[128];
  __pipeline_memcpy_async(&s[threadIdx.x], &x[threadIdx.x], sizeof(float4));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  y[threadIdx.x] = s[threadIdx.x];
}
)";

const char* kBarrier = R"(#include <cuda/barrier>
extern "C" __global__ void with_barrier(float* x) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  x[threadIdx.x] += 1.f;
  bar.arrive_and_wait();
}
)";

const char* kFloatTypes = R"(#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
extern "C" __global__ void convert(const __half* h, const __nv_bfloat16* b, __nv_fp8_e4m3* f, float* y) {
  const float v = __half2float(h[0]) + __bfloat162float(b[0]);
  f[0] = __nv_fp8_e4m3(v);
  y[0] = float(f[0]) + float(__nv_fp8_e5m2(v)) + __half2float(__hadd(h[0], h[1]));
}
)";

const char* kWgmma =
    R"(extern "C" __global__ void wgmma_m64n8k16(float* out, unsigned long long da, unsigned long long db) {
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(da), "l"(db), "r"(1));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  out[threadIdx.x] = d0 + d1 + d2 + d3;
}
)";

const char* kTma = R"(#include <cuda.h>
extern "C" __global__ void tma_load(const __grid_constant__ CUtensorMap map, float* out) {
  __shared__ alignas(128) float tile[32 * 32];
  __shared__ alignas(8) unsigned long long bar;
  const unsigned bar_addr = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_addr));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_addr), "r"(4096));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        ::"r"(dst), "l"(&map), "r"(0), "r"(0), "r"(bar_addr) : "memory");
  }
  __syncthreads();
  asm volatile("{\n.reg .pred done;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
               "@!done bra WAIT;\n}\n" ::"r"(bar_addr));
  out[threadIdx.x] = tile[threadIdx.x];
}
)";

std::vector<LibraryCase> Cases() {
  return {
      {"wmma", kWmma, "sm_90a", CompileStatus::kOk, "wmma16"},
      {"wmma_sm80", kWmma, "sm_80", CompileStatus::kOk, "wmma16"},
      {"cooperative_groups_reduce", kCooperativeGroups, "sm_90a", CompileStatus::kOk, "cg_sum"},
      {"cuda_pipeline", kPipeline, "sm_90a", CompileStatus::kOk, "staged_copy"},
      {"cuda_barrier", kBarrier, "sm_90a", CompileStatus::kOk, "with_barrier"},
      {"fp16_bf16_fp8", kFloatTypes, "sm_90a", CompileStatus::kOk, "convert"},
      {"wgmma_inline_ptx", kWgmma, "sm_90a", CompileStatus::kOk, "wgmma_m64n8k16"},
      // wgmma exists only on sm_90a: the arch reaches ptxas, and its error is the log.
      {"wgmma_needs_sm90a", kWgmma, "sm_90", CompileStatus::kCompileError,
       "not supported on .target 'sm_90'"},
      {"tma_inline_ptx", kTma, "sm_90a", CompileStatus::kOk, "tma_load"},
  };
}

class DeviceLibrariesTest : public ::testing::TestWithParam<LibraryCase> {};

TEST_P(DeviceLibrariesTest, Compiles) {
  const LibraryCase& c = GetParam();
  CompilerOptions options;
  options.use_cache = false;
  const Compiler compiler(options);
  CompileRequest request;
  request.source = c.source;
  request.arch = c.arch;
  const CompileResult r = compiler.Compile(request);
  ASSERT_EQ(r.status, c.expect) << r.message << "\n" << r.log;
  if (c.expect == CompileStatus::kOk) {
    EXPECT_EQ(r.kernels.count(c.kernel), 1u) << ::testing::PrintToString(r.kernels.size());
    EXPECT_GT(r.cubin.size(), 0u);
    EXPECT_TRUE(r.warnings.empty());
  } else {
    EXPECT_NE(r.log.find(c.kernel), std::string::npos) << r.log;
  }
}

INSTANTIATE_TEST_SUITE_P(Table, DeviceLibrariesTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// The program's quoted includes search its own directory first; that must never be the directory
// kforge runs in, or a file there would shadow a CUDA header.
TEST(DeviceLibraries, QuotedIncludesNeverSearchTheWorkingDirectory) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kforge-bait-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  for (const char* name : {"cuda_fp16.h", "math.h", "kernel.cu", "mma.hpp"}) {
    std::ofstream(dir / name) << "#error BAIT_FROM_THE_WORKING_DIRECTORY\n";
  }
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  CompileResult r;
  {
    CompilerOptions options;
    options.use_cache = false;
    const Compiler compiler(options);
    CompileRequest request;
    request.source = std::string("#include \"cuda_fp16.h\"\n#include \"math.h\"\n") + kWmma;
    r = compiler.Compile(request);
  }
  std::filesystem::current_path(cwd);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.status, CompileStatus::kOk) << r.message << "\n" << r.log;
  EXPECT_EQ(r.log.find("BAIT"), std::string::npos) << r.log;
}

}  // namespace
}  // namespace kforge::cuda
