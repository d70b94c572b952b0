// The verify service against the fake worker (tests/fakes/fake_worker_main.cc): ordering, respawns,
// deadlines and the mapping of worker outcomes to verdicts, without a GPU. Solutions are the demo
// relu with a marker comment that tells the fake how to answer; they compile with NVRTC for real.
#include "kforge/verify/service.h"

#include <stdlib.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "fakes/task_root.h"
#include "kforge/common/files.h"
#include "kforge/verify/verifier.h"

namespace kforge::common {
// Statuses print by name in failures.
void PrintTo(VerdictStatus status, std::ostream* out) { *out << VerdictStatusName(status); }
}  // namespace kforge::common

namespace kforge::verify {
namespace {

using namespace std::chrono_literals;
using common::VerdictStatus;

class ServiceTest : public testing::Test {
 protected:
  void SetUp() override {
    log_ = std::filesystem::path(testing::TempDir()) /
           ("fake-worker-" + std::to_string(getpid()) + "-" +
            testing::UnitTest::GetInstance()->current_test_info()->name() + ".log");
    std::filesystem::remove(log_);
    setenv("KFORGE_FAKE_WORKER_LOG", log_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("KFORGE_FAKE_WORKER_LOG");
    unsetenv("KFORGE_FAKE_NO_GPU");
    std::filesystem::remove(log_);
  }

  VerifyOptions Options() const {
    VerifyOptions options;
    options.tasks_root = tasks_.path();
    options.worker_program = KFORGE_FAKE_WORKER;
    options.seed = 7;
    options.trials = 2;
    options.use_cache = false;
    return options;
  }

  /// The demo relu solution, its source marked for the fake worker.
  static common::Solution Relu(const std::string& marker) {
    auto text = common::ReadFile(std::filesystem::path(KFORGE_SOURCE_DIR) / "examples/demo/relu.json");
    EXPECT_TRUE(text.ok());
    auto solution = common::ParseSolutionText(*text, "relu.json");
    EXPECT_TRUE(solution.ok()) << solution.status().message();
    solution->source += "// fake:" + marker + "\n";
    return *solution;
  }

  static SolutionInput Input(const std::string& label, const std::string& marker) {
    return SolutionInput{label, Relu(marker)};
  }

  /// Lines the fake workers logged that start with `what` ("start", "check", ...).
  int Logged(const std::string& what) const {
    std::ifstream in(log_);
    std::string line;
    int count = 0;
    while (std::getline(in, line)) count += line.rfind(what + " ", 0) == 0;
    return count;
  }

  fakes::TaskRoot tasks_{{"demo"}};
  std::filesystem::path log_;
};

TEST_F(ServiceTest, PassingSolutionGetsTheWorkersGpuPart) {
  VerifyService service(Options());
  Judged judged = service.Submit(Input("a", "ok")).get();
  const common::Verdict& v = judged.verdict;
  EXPECT_EQ(v.status, VerdictStatus::kOk) << v.message;
  EXPECT_EQ(v.solution, "a");
  EXPECT_EQ(v.task, "demo/relu");
  EXPECT_EQ(v.seed, 7u);
  EXPECT_EQ(v.trials.size(), 2u);
  EXPECT_EQ(v.trials[1].seed, 7u);
  EXPECT_EQ(v.checks.guard_regions, common::CheckOutcome::kPass);
  ASSERT_TRUE(v.device && v.memory);
  EXPECT_EQ(v.device->name, "Fake GPU");
  EXPECT_EQ(v.memory->peak_device_bytes, 512);
  EXPECT_DOUBLE_EQ(v.timing.gpu_ms.value_or(0), 1.0);
  EXPECT_TRUE(v.timing.worker_start_ms.has_value()) << "the first verdict a worker serves";
  EXPECT_TRUE(v.compile.has_value());
  EXPECT_FALSE(judged.bench.has_value());
  ASSERT_TRUE(service.Hello().has_value());
  EXPECT_EQ(service.Hello()->status, VerdictStatus::kOk);
  EXPECT_EQ(service.Hello()->device->name, "Fake GPU");
}

TEST_F(ServiceTest, LaterSolutionsMayFinishFirst) {
  VerifyOptions options = Options();
  options.devices = {0, 1};  // two fake workers
  VerifyService service(options);
  std::future<Judged> slow = service.Submit(Input("slow", "sleep=3000"));
  std::future<Judged> fast = service.Submit(Input("fast", "ok"));
  Judged judged = fast.get();
  EXPECT_EQ(judged.verdict.status, VerdictStatus::kOk);
  EXPECT_EQ(slow.wait_for(0s), std::future_status::timeout) << "the slow one is still in its worker";
  EXPECT_EQ(slow.get().verdict.status, VerdictStatus::kOk);
}

TEST_F(ServiceTest, VerifierEmitsInInputOrderWhenLaterOnesFinishFirst) {
  std::filesystem::path lines = log_.string() + ".jsonl";
  {
    std::ofstream out(lines);
    for (const char* marker : {"sleep=1200", "ok", "mismatch", "sleep=300", "ok"})
      out << common::SolutionToJson(Relu(marker)).dump() << "\n";
  }
  VerifyOptions options = Options();
  options.devices = {0, 1};
  Verifier verifier(options);
  SolutionReader reader({lines.string()});
  std::vector<std::string> labels;
  std::vector<VerdictStatus> statuses;
  VerifySummary summary =
      verifier.Run(reader, [&](const common::Verdict& v, const std::optional<common::BenchResult>&) {
        labels.push_back(v.solution);
        statuses.push_back(v.status);
      });
  std::filesystem::remove(lines);
  std::string name = lines.string();
  EXPECT_EQ(labels,
            (std::vector<std::string>{name + ":1", name + ":2", name + ":3", name + ":4", name + ":5"}));
  EXPECT_EQ(statuses,
            (std::vector<VerdictStatus>{VerdictStatus::kOk, VerdictStatus::kOk, VerdictStatus::kMismatch,
                                        VerdictStatus::kOk, VerdictStatus::kOk}));
  EXPECT_EQ(summary.total, 5);
  EXPECT_EQ(summary.ok, 4);
  EXPECT_EQ(summary.by_status["mismatch"], 1);
  EXPECT_EQ(Logged("start"), 2);
}

TEST_F(ServiceTest, WorkerThatDiesIsHarnessErrorAndTheNextSolutionGetsAFreshWorker) {
  VerifyService service(Options());
  Judged died = service.Submit(Input("dies", "die")).get();
  EXPECT_EQ(died.verdict.status, VerdictStatus::kHarnessError);
  EXPECT_EQ(died.verdict.message, "worker died: exit code 3");
  Judged next = service.Submit(Input("next", "ok")).get();
  EXPECT_EQ(next.verdict.status, VerdictStatus::kOk) << next.verdict.message;
  EXPECT_EQ(Logged("start"), 2);
  EXPECT_EQ(Logged("check"), 2);
}

TEST_F(ServiceTest, CrashIsAnsweredThenTheWorkerIsReplaced) {
  VerifyService service(Options());
  Judged crashed = service.Submit(Input("crash", "crash")).get();
  EXPECT_EQ(crashed.verdict.status, VerdictStatus::kCrash);
  EXPECT_EQ(crashed.verdict.message, "kernel faulted: cudaErrorIllegalAddress");
  EXPECT_EQ(service.Submit(Input("next", "ok")).get().verdict.status, VerdictStatus::kOk);
  EXPECT_EQ(Logged("start"), 2);
}

TEST_F(ServiceTest, HangIsTimeoutAtTheDeadlineAndTheWorkerIsReplaced) {
  VerifyOptions options = Options();
  options.trials = 1;
  options.kernel_timeout = 50ms;
  options.check_allowance = 0ms;  // deadline: 50 ms x (1 + 8)
  VerifyService service(options);
  auto start = std::chrono::steady_clock::now();
  Judged hung = service.Submit(Input("hang", "hang")).get();
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(hung.verdict.status, VerdictStatus::kTimeout);
  EXPECT_EQ(hung.verdict.message, "worker: no reply within 450 ms; worker killed");
  EXPECT_LT(took, 30s);
  EXPECT_EQ(service.Submit(Input("next", "ok")).get().verdict.status, VerdictStatus::kOk);
  EXPECT_EQ(Logged("start"), 2);
}

TEST_F(ServiceTest, MalformedRepliesAreHarnessErrors) {
  VerifyService service(Options());
  Judged garbage = service.Submit(Input("garbage", "garbage")).get();
  EXPECT_EQ(garbage.verdict.status, VerdictStatus::kHarnessError);
  EXPECT_EQ(garbage.verdict.message, "worker died: worker wrote a malformed reply");
  Judged bad = service.Submit(Input("bad", "bad_reply")).get();
  EXPECT_EQ(bad.verdict.status, VerdictStatus::kHarnessError);
  EXPECT_EQ(bad.verdict.message, "worker: check reply: trials: expected an array, got string");
}

TEST_F(ServiceTest, NoGpuFromHelloMakesEveryVerdictNoGpu) {
  setenv("KFORGE_FAKE_NO_GPU", "1", 1);
  VerifyService service(Options());
  ASSERT_TRUE(service.Hello().has_value());
  EXPECT_EQ(service.Hello()->status, VerdictStatus::kNoGpu);
  EXPECT_EQ(service.Hello()->message, "fake: no CUDA device");
  for (const char* label : {"a", "b"}) {
    Judged judged = service.Submit(Input(label, "ok")).get();
    EXPECT_EQ(judged.verdict.status, VerdictStatus::kNoGpu);
    EXPECT_EQ(judged.verdict.message, "fake: no CUDA device");
    EXPECT_TRUE(judged.verdict.compile.has_value()) << "compiled all the same";
  }
  EXPECT_TRUE(service.no_gpu());
  EXPECT_EQ(Logged("check"), 0) << "no check is sent once hello said no_gpu";
}

TEST_F(ServiceTest, ExceptionInAfterCheckIsThatSolutionsHarnessError) {
  VerifyOptions options = Options();
  options.after_check = [](const AfterCheck& c) -> std::optional<common::BenchResult> {
    if (c.solution.source.find("fake:sleep=1") != std::string::npos) throw std::runtime_error("stage broke");
    EXPECT_FALSE(c.cubin.empty());
    common::BenchResult timed;
    timed.task = c.task.id;
    timed.seed = c.seed;
    timed.device = c.worker.Hello().device;  // the hello the service's worker said
    timed.rounds = c.worker.spawn_count();
    return timed;
  };
  VerifyService service(options);
  std::future<Judged> broken = service.Submit(Input("broken", "sleep=1"));
  std::future<Judged> fine = service.Submit(Input("fine", "ok"));
  std::future<Judged> failed = service.Submit(Input("failed", "mismatch"));
  Judged b = broken.get();
  EXPECT_EQ(b.verdict.status, VerdictStatus::kHarnessError);
  EXPECT_EQ(b.verdict.message, "internal error: stage broke");
  Judged f = fine.get();
  EXPECT_EQ(f.verdict.status, VerdictStatus::kOk);
  ASSERT_TRUE(f.bench.has_value()) << "the stage's record comes back";
  EXPECT_EQ(f.bench->task, "demo/relu");
  EXPECT_EQ(f.bench->seed, 7u);
  ASSERT_TRUE(f.bench->device.has_value());
  EXPECT_EQ(f.bench->device->name, "Fake GPU");
  EXPECT_EQ(f.bench->rounds, 1) << "timed in the worker that checked it";
  Judged m = failed.get();
  EXPECT_EQ(m.verdict.status, VerdictStatus::kMismatch);
  EXPECT_FALSE(m.bench.has_value()) << "the stage runs only for solutions that passed";
  EXPECT_EQ(Logged("hello"), 1) << "the stage asked the session's kept hello";
}

TEST_F(ServiceTest, ManyThreadsSubmittingAtOnceAllGetTheirVerdicts) {
  VerifyService service(Options());
  constexpr int kThreads = 8, kEach = 3;
  std::atomic<int> right{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::pair<std::string, std::future<Judged>>> mine;
      for (int i = 0; i < kEach; ++i) {
        std::string label = "t" + std::to_string(t) + "-" + std::to_string(i);
        mine.emplace_back(label, service.Submit(Input(label, i == 1 ? "mismatch" : "ok")));
      }
      for (size_t i = 0; i < mine.size(); ++i) {
        Judged judged = mine[i].second.get();
        VerdictStatus want = i == 1 ? VerdictStatus::kMismatch : VerdictStatus::kOk;
        right += judged.verdict.solution == mine[i].first && judged.verdict.status == want;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(right, kThreads * kEach);
  EXPECT_EQ(Logged("check"), kThreads * kEach);
  EXPECT_EQ(Logged("start"), 1);
}

TEST_F(ServiceTest, CompileOnlyNeverStartsAWorker) {
  VerifyOptions options = Options();
  options.compile_only = true;
  {
    VerifyService service(options);
    EXPECT_FALSE(service.Hello().has_value());
    Judged judged = service.Submit(Input("a", "ok")).get();
    EXPECT_EQ(judged.verdict.status, VerdictStatus::kOk) << judged.verdict.message;
    EXPECT_TRUE(judged.verdict.compile.has_value());
    EXPECT_FALSE(judged.verdict.device.has_value());
  }
  EXPECT_FALSE(std::filesystem::exists(log_));
}

TEST_F(ServiceTest, BadSolutionsAreJudgedWithoutAWorker) {
  VerifyService service(Options());
  SolutionInput unknown_task = Input("unknown", "ok");
  unknown_task.solution->task = "demo/nope";
  Judged judged = service.Submit(std::move(unknown_task)).get();
  EXPECT_EQ(judged.verdict.status, VerdictStatus::kInvalidSolution);
  EXPECT_NE(judged.verdict.message.find("task demo/nope"), std::string::npos) << judged.verdict.message;

  SolutionInput broken = Input("broken", "ok");
  broken.solution->source += "this is not C++;\n";
  judged = service.Submit(std::move(broken)).get();
  EXPECT_EQ(judged.verdict.status, VerdictStatus::kCompileError);
  EXPECT_EQ(Logged("check"), 0);
}

}  // namespace
}  // namespace kforge::verify
