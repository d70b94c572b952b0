// Compiles run in helper processes: a compile that outlives its deadline is killed with its
// process (the C++ front end and the preprocessor never check for cancellation), a runaway one is
// stopped by the memory limit, nothing outlives the Compiler, and helpers are reused. Real NVRTC.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kforge/cuda/compiler.h"

namespace kforge::cuda {
namespace {

using Clock = std::chrono::steady_clock;

// Processes whose parent is this one.
std::vector<int> Children() {
  std::vector<int> pids;
  const std::string self = std::to_string(getpid());
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    // comm is in parentheses and may hold spaces; the fields after its ')' are state and ppid.
    std::string line, state, ppid;
    if (!std::getline(stat, line)) continue;
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    rest >> state >> ppid;
    if (ppid == self) pids.push_back(std::stoi(entry.path().filename().string()));
  }
  return pids;
}

// About 60 lines of nested #defines: 2^60 tokens, all in the preprocessor.
std::string ExpansionBomb() {
  std::string s = "#define A0 x x\n";
  for (int i = 1; i <= 60; ++i)
    s += "#define A" + std::to_string(i) + " A" + std::to_string(i - 1) + " A" + std::to_string(i - 1) + "\n";
  return s + "extern \"C\" __global__ void k(float* p) { int x = 0; A60; }\n";
}

// 2^22 distinct class instantiations: the front end's memory grows until something stops it.
const char* kInstantiationHog = R"(
template <int N, int M> struct G { static constexpr long long v = G<N - 1, M * 2>::v + G<N - 1, M * 2 + 1>::v; };
template <int M> struct G<0, M> { static constexpr long long v = M; };
extern "C" __global__ void k(long long* out) { out[0] = G<22, 1>::v; }
)";

TEST(CompileProcess, ExpansionBombIsKilledAtTheDeadlineAndNothingOutlivesTheCompiler) {
  ASSERT_TRUE(Children().empty());
  CompilerOptions options;
  options.use_cache = false;
  options.timeout = std::chrono::milliseconds(1500);
  auto compiler = std::make_unique<Compiler>(options);
  CompileRequest request;
  request.source = ExpansionBomb();
  const auto start = Clock::now();
  const CompileResult r = compiler->Compile(request);
  // The bomb alone compiles for minutes; the margin is for a loaded machine (tests run in parallel).
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(1500 + 3500))
      << "Compile returns at the deadline";
  EXPECT_EQ(r.status, CompileStatus::kTimeout) << r.message;
  EXPECT_EQ(r.message, "compile exceeded the 1500 ms deadline");
  EXPECT_TRUE(Children().empty()) << "the stuck compile's process is killed, not abandoned";

  const auto destroying = Clock::now();
  compiler.reset();
  EXPECT_LT(Clock::now() - destroying, std::chrono::seconds(3));
  EXPECT_TRUE(Children().empty());
}

TEST(CompileProcess, MemoryLimitStopsARunawayCompile) {
  CompilerOptions options;
  options.use_cache = false;
  options.memory_limit_bytes = size_t{384} << 20;
  options.timeout = std::chrono::seconds(120);
  const Compiler compiler(options);
  CompileRequest request;
  request.source = kInstantiationHog;
  const CompileResult r = compiler.Compile(request);
  ASSERT_EQ(r.status, CompileStatus::kCompileError) << r.message;
  // NVRTC says "out of memory" itself, or dies trying (which kforge attributes to the limit).
  const std::string said = r.message + "\n" + r.log;
  EXPECT_TRUE(said.find("out of memory") != std::string::npos ||
              said.find("perhaps at its memory limit of 384 MiB") != std::string::npos)
      << said;
  rusage children{};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &children), 0);
  // ru_maxrss is in KiB; it counts reaped helpers only, and the data limit bounds them.
  EXPECT_LT(children.ru_maxrss, (384 + 256) * 1024L);
}

TEST(CompileProcess, HelpersAreReusedAndAKilledOneIsReplaced) {
  CompilerOptions options;
  options.use_cache = false;
  const Compiler compiler(options);
  for (int i = 0; i < 3; ++i) {
    CompileRequest request;
    request.source = "extern \"C\" __global__ void k" + std::to_string(i) + "(float* x) { x[0] = 1.f; }\n";
    ASSERT_EQ(compiler.Compile(request).status, CompileStatus::kOk);
  }
  EXPECT_EQ(compiler.processes_started(), 1);
  EXPECT_EQ(Children().size(), 1u);

  CompileRequest bomb;
  bomb.source = ExpansionBomb();
  bomb.timeout = std::chrono::milliseconds(300);
  ASSERT_EQ(compiler.Compile(bomb).status, CompileStatus::kTimeout);
  EXPECT_TRUE(Children().empty());

  CompileRequest next;
  next.source = "extern \"C\" __global__ void after(float* x) { x[0] = 2.f; }\n";
  const CompileResult r = compiler.Compile(next);
  EXPECT_EQ(r.status, CompileStatus::kOk) << r.message;
  EXPECT_EQ(compiler.processes_started(), 2);
}

TEST(CompileProcess, AMissingHelperIsABrokenEnvironment) {
  CompilerOptions options;
  options.use_cache = false;
  options.helper_program = "/nonexistent/kforge-nvrtc";
  const Compiler compiler(options);
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k(float* x) { x[0] = 1.f; }\n";
  EXPECT_THROW(compiler.Compile(request), std::runtime_error);
}

}  // namespace
}  // namespace kforge::cuda
