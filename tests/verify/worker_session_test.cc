// WorkerSession against the fake worker (tests/fakes/fake_worker_main.cc), kforge's own worker on a
// machine without a GPU, and programs that die: the hello said once, typed replies, and how each way a
// call fails reads (its status and message), with a fresh worker after one died or was killed.
#include "kforge/verify/worker_session.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "fakes/task_root.h"
#include "kforge/common/files.h"

namespace kforge::verify {
namespace {

using namespace std::chrono_literals;
using common::VerdictStatus;

class WorkerSessionTest : public testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::filesystem::path(testing::TempDir()) /
               ("worker-session-" + std::to_string(getpid()) + "-" +
                testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(scratch_);
    setenv("KFORGE_FAKE_WORKER_LOG", (scratch_ / "fake.log").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("KFORGE_FAKE_WORKER_LOG");
    unsetenv("KFORGE_FAKE_NO_GPU");
    std::filesystem::remove_all(scratch_);
  }

  static WorkerSessionOptions Fake() {
    return WorkerSessionOptions{.program = KFORGE_FAKE_WORKER, .device = 1};
  }

  /// A check of the demo relu whose source carries `marker` for the fake worker.
  static CheckRequest Check(const std::string& marker) {
    auto text = common::ReadFile(std::filesystem::path(KFORGE_SOURCE_DIR) / "examples/demo/relu.json");
    EXPECT_TRUE(text.ok());
    auto solution = common::ParseSolutionText(*text, "relu.json");
    EXPECT_TRUE(solution.ok()) << solution.status().message();
    CheckRequest request;
    request.task_dir = "/nonexistent/demo/relu";
    request.solution = *solution;
    request.solution.source += "// fake:" + marker + "\n";
    request.cubin = "not a cubin";
    request.trials = 2;
    request.seed = 9;
    return request;
  }

  /// An executable shell script that reads one request, then runs `body`.
  std::filesystem::path Script(const std::string& body) const {
    std::filesystem::path path = scratch_ / "worker.sh";
    std::ofstream(path) << "#!/bin/sh\nread line\n" << body << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }

  /// Lines the fake workers logged that start with `what` ("start", "hello", "check", ...).
  int Logged(const std::string& what) const {
    std::ifstream in(scratch_ / "fake.log");
    std::string line;
    int count = 0;
    while (std::getline(in, line)) count += line.rfind(what + " ", 0) == 0;
    return count;
  }

  std::filesystem::path scratch_;
};

TEST_F(WorkerSessionTest, HelloIsSaidOnceAndKept) {
  WorkerSessionOptions options = Fake();
  options.peak = true;
  WorkerSession session(options);
  EXPECT_FALSE(session.hello_ms().has_value());
  EXPECT_EQ(session.spawn_count(), 0) << "nothing starts before the first request";
  const HelloReply& hello = session.Hello();
  EXPECT_EQ(hello.status, VerdictStatus::kOk) << hello.message;
  ASSERT_TRUE(hello.device.has_value());
  EXPECT_EQ(hello.device->name, "Fake GPU");
  EXPECT_EQ(hello.device->index, 1) << "the worker was started on the session's device";
  ASSERT_TRUE(hello.peak.has_value());
  EXPECT_DOUBLE_EQ(hello.peak->dram_gbps, 1000);
  EXPECT_TRUE(session.hello_ms().has_value());
  EXPECT_EQ(&session.Hello(), &hello);
  EXPECT_EQ(Logged("hello"), 1);
  EXPECT_EQ(Logged("start"), 1);
}

TEST_F(WorkerSessionTest, CheckGetsTheTypedReply) {
  WorkerSession session(Fake());
  CheckReply reply = session.Check(Check("mismatch"), 10s);
  EXPECT_EQ(reply.status, VerdictStatus::kMismatch);
  EXPECT_EQ(reply.message, "out0: 7 of 100 elements differ");
  EXPECT_EQ(reply.trials.size(), 2u);
  EXPECT_EQ(reply.checks.poisoned_outputs, common::CheckOutcome::kFail);
  EXPECT_FALSE(session.last_failure().has_value());
  EXPECT_EQ(Logged("hello"), 0) << "a request does not need the hello first";
}

TEST_F(WorkerSessionTest, NoGpuHelloIsKeptAsTheWorkerSaidIt) {
  setenv("KFORGE_FAKE_NO_GPU", "1", 1);
  WorkerSession session(Fake());
  EXPECT_EQ(session.Hello().status, VerdictStatus::kNoGpu);
  EXPECT_EQ(session.Hello().message, "fake: no CUDA device");
  EXPECT_FALSE(session.Hello().device.has_value());
}

TEST_F(WorkerSessionTest, KforgesOwnWorkerWithoutAGpuAnswersNoGpu) {
  if (fakes::HasCudaDevice()) GTEST_SKIP() << "this machine has a GPU";
  WorkerSession session(WorkerSessionOptions{.program = KFORGE_BINARY});
  const HelloReply& hello = session.Hello();
  EXPECT_EQ(hello.status, VerdictStatus::kNoGpu) << hello.message;
  EXPECT_NE(hello.message.find("no CUDA device 0"), std::string::npos) << hello.message;
  TaskCheckReply task = session.TaskCheck(TaskCheckRequest{.task_dir = "/nonexistent"}, 30s);
  EXPECT_EQ(task.status, TaskCheckStatus::kNoGpu) << task.message;
}

TEST_F(WorkerSessionTest, MissingProgramIsHarnessErrorForEveryCall) {
  WorkerSession session(WorkerSessionOptions{.program = "/nonexistent/kforge"});
  const HelloReply& hello = session.Hello();
  EXPECT_EQ(hello.status, VerdictStatus::kHarnessError);
  EXPECT_EQ(hello.message.rfind("worker: ", 0), 0u) << hello.message;
  CheckReply check = session.Check(Check("ok"), 10s);
  EXPECT_EQ(check.status, VerdictStatus::kHarnessError);
  EXPECT_EQ(check.message.rfind("worker died: ", 0), 0u) << check.message;
  ASSERT_TRUE(session.last_failure().has_value());
  EXPECT_EQ(session.last_failure()->kind, WorkerFailure::Kind::kDied);
  TaskAuditReply audit = session.TaskAudit(TaskAuditRequest{.task_dir = "/nonexistent"}, 10s);
  EXPECT_EQ(audit.status, TaskAuditStatus::kHarnessError);
  EXPECT_EQ(audit.message.rfind("worker: ", 0), 0u) << audit.message;
}

TEST_F(WorkerSessionTest, WorkerKilledMidCallIsHarnessErrorThenAFreshOneStarts) {
  WorkerSession killed(WorkerSessionOptions{.program = Script("kill -KILL $$")});
  TaskCheckReply task = killed.TaskCheck(TaskCheckRequest{.task_dir = "/nonexistent"}, 10s);
  EXPECT_EQ(task.status, TaskCheckStatus::kHarnessError);
  EXPECT_EQ(task.message, "worker: killed by SIGKILL");
  CheckReply check = killed.Check(Check("ok"), 10s);
  EXPECT_EQ(check.status, VerdictStatus::kHarnessError);
  EXPECT_EQ(check.message, "worker died: killed by SIGKILL");
  EXPECT_EQ(killed.spawn_count(), 2) << "each call after a death starts a worker";
}

TEST_F(WorkerSessionTest, DeathTimeoutAndUnreadableRepliesAreMappedThenTheWorkerRestarts) {
  WorkerSession session(Fake());
  CheckReply died = session.Check(Check("die"), 10s);
  EXPECT_EQ(died.status, VerdictStatus::kHarnessError);
  EXPECT_EQ(died.message, "worker died: exit code 3");
  CheckReply hung = session.Check(Check("hang"), 300ms);
  EXPECT_EQ(hung.status, VerdictStatus::kTimeout);
  EXPECT_EQ(hung.message, "worker: no reply within 300 ms; worker killed");
  CheckReply garbage = session.Check(Check("garbage"), 10s);
  EXPECT_EQ(garbage.status, VerdictStatus::kHarnessError);
  EXPECT_EQ(garbage.message, "worker died: worker wrote a malformed reply");
  CheckReply bad = session.Check(Check("bad_reply"), 10s);
  EXPECT_EQ(bad.status, VerdictStatus::kHarnessError);
  EXPECT_EQ(bad.message, "worker: check reply: trials: expected an array, got string");
  ASSERT_TRUE(session.last_failure().has_value());
  EXPECT_EQ(session.last_failure()->kind, WorkerFailure::Kind::kUnreadable)
      << "the worker answered, unreadably";
  CheckReply ok = session.Check(Check("ok"), 10s);
  EXPECT_EQ(ok.status, VerdictStatus::kOk) << ok.message;
  EXPECT_EQ(session.spawn_count(), 4) << "one worker to start, and one after each of three deaths";
  EXPECT_EQ(Logged("start"), 4);
}

TEST_F(WorkerSessionTest, AWorkerThatSaysItIsExitingIsReplaced) {
  WorkerSession session(Fake());
  CheckReply crashed = session.Check(Check("crash"), 10s);
  EXPECT_EQ(crashed.status, VerdictStatus::kCrash);
  EXPECT_TRUE(crashed.exiting);
  EXPECT_EQ(session.Check(Check("ok"), 10s).status, VerdictStatus::kOk);
  EXPECT_EQ(session.spawn_count(), 2);
}

TEST_F(WorkerSessionTest, TypedCallOfAnotherModulesMessageMapsFailuresAsCheckDoes) {
  WorkerSession session(WorkerSessionOptions{.program = Script("exit 5")});
  CheckReply reply = session.Call<CheckReply>(Check("ok"), 10s);
  EXPECT_EQ(reply.status, VerdictStatus::kHarnessError);
  EXPECT_EQ(reply.message, "worker died: exit code 5");
}

}  // namespace
}  // namespace kforge::verify
