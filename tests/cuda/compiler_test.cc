// Compiler tests against the real NVRTC (no GPU needed): results, logs, cache, timeout, pool.
#include "kforge/cuda/compiler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cuda/compile_log.h"
#include "kforge/cuda/compile_pool.h"

namespace kforge::cuda {
namespace {

const char* kScale = R"(
extern "C" __global__ void scale(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
)";

class CompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (std::filesystem::temp_directory_path() / "kforge-cache-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    cache_dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(cache_dir_); }

  CompilerOptions Options(bool use_cache = true) const {
    CompilerOptions o;
    o.cache_dir = cache_dir_;
    o.use_cache = use_cache;
    return o;
  }

  std::filesystem::path cache_dir_;
};

TEST_F(CompilerTest, CompilesKernelAndReportsResources) {
  const Compiler compiler(Options(false));
  CompileRequest req;
  req.source = std::string("#include <cuda_fp16.h>\n") + kScale;
  const CompileResult r = compiler.Compile(req);
  ASSERT_EQ(r.status, CompileStatus::kOk) << r.message << "\n" << r.log;
  EXPECT_EQ(r.message, "");
  EXPECT_FALSE(r.cached);
  ASSERT_GT(r.cubin.size(), 4u);
  EXPECT_EQ(r.cubin.substr(0, 4),
            "\x7f"
            "ELF");
  ASSERT_EQ(r.kernels.count("scale"), 1u);
  EXPECT_GT(r.kernels.at("scale").registers, 0);
  EXPECT_EQ(r.kernels.at("scale").spill_store_bytes, 0);
  EXPECT_EQ(r.log.find("ptxas info"), std::string::npos) << r.log;
  EXPECT_GT(r.wall_ms, 0);
}

TEST_F(CompilerTest, ReportsSharedMemoryAndSeveralKernels) {
  const Compiler compiler(Options(false));
  CompileRequest req;
  req.source = R"(
extern "C" __global__ void with_smem(float* x) {
  __shared__ float tile[256];
  tile[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = tile[255 - threadIdx.x];
}
__global__ void mangled(int* p) { p[0] = 1; }
)";
  const CompileResult r = compiler.Compile(req);
  ASSERT_EQ(r.status, CompileStatus::kOk) << r.log;
  ASSERT_EQ(r.kernels.count("with_smem"), 1u);
  EXPECT_EQ(r.kernels.at("with_smem").shared_bytes, 1024);
  EXPECT_EQ(r.kernels.count("_Z7mangledPi"), 1u);
}

TEST_F(CompilerTest, CompileErrorCarriesLog) {
  const Compiler compiler(Options(false));
  CompileRequest req;
  req.name = "bad.cu";
  req.source = "extern \"C\" __global__ void k(float* x) {\n  x[0] = undefined_name;\n}\n";
  const CompileResult r = compiler.Compile(req);
  EXPECT_EQ(r.status, CompileStatus::kCompileError);
  EXPECT_NE(r.log.find("bad.cu(2): error"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("undefined_name"), std::string::npos);
  EXPECT_NE(r.message.find("bad.cu(2): error"), std::string::npos) << r.message;
  EXPECT_TRUE(r.cubin.empty());
}

TEST_F(CompilerTest, LogShortensIncludePaths) {
  const Compiler compiler(Options(false));
  CompileRequest req;
  req.source =
      "#include <cuda/std/cstdint>\nextern \"C\" __global__ void k() { cuda::std::no_such_thing x; }\n";
  const CompileResult r = compiler.Compile(req);
  ASSERT_EQ(r.status, CompileStatus::kCompileError);
  EXPECT_EQ(r.log.find(compiler.options().cccl_include_dir.string()), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("/usr/"), std::string::npos) << r.log;
}

TEST_F(CompilerTest, RejectsPolicyOptionsAndArch) {
  const Compiler compiler(Options(false));
  CompileRequest bad_source;
  bad_source.source = std::string("#include </etc/passwd>\n") + kScale;
  CompileResult r = compiler.Compile(bad_source);
  EXPECT_EQ(r.status, CompileStatus::kInvalidSolution);
  EXPECT_NE(r.message.find("/etc/passwd"), std::string::npos);
  EXPECT_TRUE(r.log.empty());

  CompileRequest bad_options;
  bad_options.source = kScale;
  bad_options.options = {"-I/etc"};
  r = compiler.Compile(bad_options);
  EXPECT_EQ(r.status, CompileStatus::kInvalidSolution);
  EXPECT_EQ(r.message, "options[0]: \"-I/etc\" is not an allowed NVRTC option");

  CompileRequest bad_arch;
  bad_arch.source = kScale;
  bad_arch.arch = "sm_90 -I/etc";
  EXPECT_EQ(compiler.Compile(bad_arch).status, CompileStatus::kInvalidSolution);
}

TEST_F(CompilerTest, UserOptionsReachNvrtc) {
  const Compiler compiler(Options(false));
  CompileRequest req;
  req.source = "#if !defined(BLOCK) || BLOCK != 128\n#error BLOCK not passed\n#endif\n" + std::string(kScale);
  req.options = {"-DBLOCK=128", "--use_fast_math", "--std=c++20"};
  const CompileResult r = compiler.Compile(req);
  EXPECT_EQ(r.status, CompileStatus::kOk) << r.log;
}

TEST_F(CompilerTest, CacheHitReturnsSameCubin) {
  const Compiler compiler(Options());
  CompileRequest req;
  req.source = kScale;
  const CompileResult first = compiler.Compile(req);
  ASSERT_EQ(first.status, CompileStatus::kOk);
  EXPECT_FALSE(first.cached);
  const CompileResult second = compiler.Compile(req);
  ASSERT_EQ(second.status, CompileStatus::kOk);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.kernels.at("scale").registers, first.kernels.at("scale").registers);
  EXPECT_EQ(second.log, first.log);

  CompileRequest other = req;
  other.options = {"--use_fast_math"};
  EXPECT_FALSE(compiler.Compile(other).cached);
}

TEST_F(CompilerTest, CompileErrorsAreCached) {
  const Compiler compiler(Options());
  CompileRequest req;
  req.source = "extern \"C\" __global__ void k() { nope; }\n";
  const CompileResult first = compiler.Compile(req);
  const CompileResult second = compiler.Compile(req);
  EXPECT_EQ(second.status, CompileStatus::kCompileError);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.log, first.log);
  EXPECT_EQ(second.message, first.message);
}

void Overwrite(const std::filesystem::path& p, const std::string& data) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << data;
}

TEST_F(CompilerTest, CorruptCacheEntriesAreRecompiledAndRewritten) {
  const Compiler compiler(Options());
  CompileRequest req;
  req.source = kScale;
  const CompileResult first = compiler.Compile(req);
  ASSERT_EQ(first.status, CompileStatus::kOk);

  std::vector<std::filesystem::path> jsons, cubins;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache_dir_)) {
    if (e.path().extension() == ".json") jsons.push_back(e.path());
    if (e.path().extension() == ".cubin") cubins.push_back(e.path());
  }
  ASSERT_EQ(jsons.size(), 1u);
  ASSERT_EQ(cubins.size(), 1u);

  Overwrite(cubins[0], "garbage");
  CompileResult r = compiler.Compile(req);
  EXPECT_FALSE(r.cached);
  EXPECT_EQ(r.cubin, first.cubin);
  EXPECT_TRUE(compiler.Compile(req).cached);  // rewritten

  Overwrite(jsons[0], "{not json");
  r = compiler.Compile(req);
  EXPECT_FALSE(r.cached);
  EXPECT_EQ(r.cubin, first.cubin);
  EXPECT_TRUE(compiler.Compile(req).cached);
}

TEST_F(CompilerTest, RunawayUnrollIsCancelled) {
  const Compiler compiler(Options());
  CompileRequest req;
  // A huge full unroll, and a deadline no compile can meet (NVRTC may cap the unroll and finish
  // quickly, so the deadline, not the source, is what makes this a timeout on any machine).
  req.source = R"(
extern "C" __global__ void k(float* x) {
  float acc = 0;
#pragma unroll
  for (int i = 0; i < 200000; ++i) acc = acc * x[i % 7] + 1.0f;
  x[0] = acc;
}
)";
  req.timeout = std::chrono::milliseconds(1);
  const CompileResult r = compiler.Compile(req);
  EXPECT_EQ(r.status, CompileStatus::kTimeout) << r.message << r.log;
  EXPECT_EQ(r.message, "compile exceeded the 1 ms deadline");
  EXPECT_TRUE(r.cubin.empty());
  EXPECT_TRUE(r.log.empty());
  EXPECT_FALSE(compiler.Compile(req).cached);  // timeouts are not cached
}

TEST_F(CompilerTest, RunawayFrontEndIsStoppedAtDeadline) {
  CompileResult r;
  {
    const Compiler compiler(Options());
    CompileRequest req;
    // Exponential template instantiation: the front end, which NVRTC cannot interrupt, runs for
    // about a second; Compile returns at the deadline, and the compile's process is killed.
    req.source = R"(
template <int N, int M> struct Fib {
  static constexpr long long value = Fib<N - 1, M * 2>::value + Fib<N - 2, M * 2 + 1>::value;
};
template <int M> struct Fib<0, M> { static constexpr long long value = 0; };
template <int M> struct Fib<1, M> { static constexpr long long value = 1; };
template <int M> struct Fib<-1, M> { static constexpr long long value = 0; };
extern "C" __global__ void k(long long* out) { out[0] = Fib<18, 1>::value; }
)";
    req.timeout = std::chrono::milliseconds(50);
    r = compiler.Compile(req);
  }
  EXPECT_EQ(r.status, CompileStatus::kTimeout) << r.message << r.log;
  EXPECT_EQ(r.message, "compile exceeded the 50 ms deadline");
}

// A failed compile whose source holds an absolute path (in a string literal, a static_assert
// message, an #error) is a compile error with its log: only files the compile read may make it
// invalid_solution. The same holds for a warning quoting such a line in a successful compile.
TEST_F(CompilerTest, AbsolutePathsInTheSourceAreNotFileReads) {
  struct Row {
    const char* name;
    std::string source;
    CompileStatus status;
    const char* log_part;
  };
  const Row rows[] = {
      {"string_literal",
       "extern \"C\" __global__ void k(float* x) {\n  const char* p = \"/etc/passwd\"; x[0] = "
       "undefined_name;\n}\n",
       CompileStatus::kCompileError, "identifier \"undefined_name\" is undefined"},
      {"literal_on_the_error_line",
       "extern \"C\" __global__ void k(float* x) {\n  x[0] = sizeof(\"/home/user/.ssh/id_rsa\") + nope;\n}\n",
       CompileStatus::kCompileError, "/home/user/.ssh/id_rsa"},
      {"static_assert_message",
       "static_assert(sizeof(int) == 3, \"/etc/shadow(1): error: fake\");\nextern \"C\" __global__ void k() "
       "{}\n",
       CompileStatus::kCompileError, "static assertion failed"},
      {"error_directive", "#error see /usr/local/secret/config.h\n", CompileStatus::kCompileError,
       "/usr/local/secret/config.h"},
      {"warning_quoting_a_path",
       "extern \"C\" __global__ void k(float* x) {\n  const char* unused = \"/etc/passwd\";\n  x[0] = "
       "1.f;\n}\n",
       CompileStatus::kOk, "\"/etc/passwd\""},
  };
  const Compiler compiler(Options(false));
  for (const Row& row : rows) {
    CompileRequest req;
    req.source = row.source;
    const CompileResult r = compiler.Compile(req);
    EXPECT_EQ(r.status, row.status) << row.name << ": " << r.message << "\n" << r.log;
    EXPECT_NE(r.log.find(row.log_part), std::string::npos) << row.name << ":\n" << r.log;
    if (row.status == CompileStatus::kCompileError) {
      EXPECT_NE(r.message.find("kernel.cu("), std::string::npos) << row.name << ": " << r.message;
    }
  }
}

TEST_F(CompilerTest, PoolCompilesConcurrently) {
  const Compiler compiler(Options(false));
  CompilePool pool(compiler, 3);
  EXPECT_EQ(pool.size(), 3u);
  std::vector<std::future<CompileResult>> futures;
  constexpr int kN = 6;
  for (int i = 0; i < kN; ++i) {
    CompileRequest req;
    if (i % 3 == 2) {
      req.source = "extern \"C\" __global__ void broken_" + std::to_string(i) + "() { nope; }\n";
    } else {
      req.source = "extern \"C\" __global__ void k" + std::to_string(i) +
                   "(float* x) { x[0] = " + std::to_string(i) + ".f; }\n";
    }
    futures.push_back(pool.Submit(std::move(req)));
  }
  for (int i = 0; i < kN; ++i) {
    const CompileResult r = futures[i].get();
    if (i % 3 == 2) {
      EXPECT_EQ(r.status, CompileStatus::kCompileError) << i;
    } else {
      ASSERT_EQ(r.status, CompileStatus::kOk) << i << r.log;
      EXPECT_EQ(r.kernels.size(), 1u);
      EXPECT_EQ(r.kernels.count("k" + std::to_string(i)), 1u) << i;
    }
  }
}

TEST(CompileStatusName, Spellings) {
  EXPECT_EQ(CompileStatusName(CompileStatus::kOk), "ok");
  EXPECT_EQ(CompileStatusName(CompileStatus::kCompileError), "compile_error");
  EXPECT_EQ(CompileStatusName(CompileStatus::kInvalidSolution), "invalid_solution");
  EXPECT_EQ(CompileStatusName(CompileStatus::kTimeout), "timeout");
}

TEST(DefaultCacheDir, FollowsEnvironment) {
  ::setenv("KFORGE_CACHE_DIR", "/x/root", 1);
  EXPECT_EQ(DefaultCacheDir(), std::filesystem::path("/x/root/cubin"));
  ::unsetenv("KFORGE_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/x/xdg", 1);
  EXPECT_EQ(DefaultCacheDir(), std::filesystem::path("/x/xdg/kforge/cubin"));
  ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace kforge::cuda
