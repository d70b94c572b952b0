#include "kforge/verify/worker_protocol.h"

#include <gtest/gtest.h>

namespace kforge::verify {
namespace {

using common::VerdictStatus;
using nlohmann::json;

common::Solution SmallSolution() {
  auto solution = common::SolutionFromJson(
      {{"task", "demo/relu"},
       {"source", "extern \"C\" __global__ void k(float* y) {}"},
       {"launches", {{{"kernel", "k"}, {"grid", {1}}, {"block", {32}}, {"args", {"out0"}}}}}},
      "test");
  EXPECT_TRUE(solution.ok()) << solution.status().message();
  return *solution;
}

TEST(WorkerProtocolTest, CheckRequestRoundTripsWithTheDocumentedKeys) {
  CheckRequest request;
  request.task_dir = "/tasks/demo/relu";
  request.solution = SmallSolution();
  request.cubin = std::string(
      "\x7f"
      "ELF\0\x01",
      6);
  request.trials = 3;
  request.seed = 18446744073709551615ull;
  request.kernel_timeout = std::chrono::milliseconds(250);
  json wire = request.ToJson();
  EXPECT_EQ(wire["op"], "check");
  EXPECT_EQ(wire["cubin_b64"], "f0VMRgAB");
  EXPECT_EQ(wire["kernel_timeout_ms"], 250);
  EXPECT_EQ(RequestOp(wire), WorkerOp::kCheck);
  auto back = CheckRequest::FromJson(json::parse(wire.dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->task_dir, request.task_dir);
  EXPECT_EQ(common::SolutionHash(back->solution), common::SolutionHash(request.solution));
  EXPECT_EQ(back->cubin, request.cubin);
  EXPECT_EQ(back->trials, 3);
  EXPECT_EQ(back->seed, request.seed);
  EXPECT_EQ(back->kernel_timeout.count(), 250);
  EXPECT_EQ(back->ToJson(), wire);
}

TEST(WorkerProtocolTest, CheckRequestDefaultsAreTheDocumentedOnes) {
  json wire = CheckRequest{.task_dir = "t", .solution = SmallSolution()}.ToJson();
  wire.erase("trials");
  wire.erase("seed");
  wire.erase("kernel_timeout_ms");
  auto request = CheckRequest::FromJson(wire);
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ(request->trials, kDefaultTrials);
  EXPECT_EQ(request->seed, 0u);
  EXPECT_EQ(request->kernel_timeout, kDefaultKernelTimeout);
}

TEST(WorkerProtocolTest, MalformedCheckRequestsNameTheField) {
  const json good = CheckRequest{.task_dir = "t", .solution = SmallSolution()}.ToJson();
  struct Case {
    const char* key;
    json value;  // null: the key is removed
    const char* error;
  };
  const Case cases[] = {
      {"task_dir", nullptr, "check request: task_dir: missing"},
      {"task_dir", 3, "check request: task_dir: expected a string, got integer"},
      {"solution", nullptr, "check request: solution: missing"},
      {"solution", "x", "check request: solution: expected an object, got string"},
      {"cubin_b64", nullptr, "check request: cubin_b64: missing"},
      {"cubin_b64", "abc", "check request: cubin_b64: base64: length is not a multiple of 4"},
      {"cubin_b64", "ab=c", "check request: cubin_b64: base64: bad character at 2"},
      {"trials", "5", "check request: trials: expected an integer, got string"},
      {"trials", 1.5, "check request: trials: expected an integer, got number"},
      {"trials", 1e12, "check request: trials: expected an integer, got number"},
      {"trials", int64_t{1} << 40, "check request: trials: integer out of range"},
      {"trials", -1, "check request: trials: must not be negative"},
      {"seed", -1, "check request: seed: expected an unsigned integer, got integer"},
      {"kernel_timeout_ms", 0, "check request: kernel_timeout_ms: must be positive"},
  };
  for (const Case& c : cases) {
    json wire = good;
    if (c.value.is_null()) {
      wire.erase(c.key);
    } else {
      wire[c.key] = c.value;
    }
    auto request = CheckRequest::FromJson(wire);
    ASSERT_FALSE(request.ok()) << c.key << " " << c.value.dump();
    EXPECT_EQ(request.status().message(), c.error);
  }
  EXPECT_EQ(CheckRequest::FromJson(json::array()).status().message(),
            "check request: expected an object, got array");
  json bad_solution = good;
  bad_solution["solution"]["launches"] = 7;
  auto request = CheckRequest::FromJson(bad_solution);
  ASSERT_FALSE(request.ok());
  EXPECT_EQ(request.status().message().rfind("check request: solution", 0), 0u) << request.status().message();
}

TEST(WorkerProtocolTest, CheckReplyRoundTrips) {
  CheckReply reply;
  reply.status = VerdictStatus::kMismatch;
  reply.message = "out0: 3 of 10 elements differ";
  reply.trials = {*common::TrialRecordFromJson({{"trial", 0}}, "trial")};
  reply.checks.guard_regions = common::CheckOutcome::kPass;
  reply.device = *common::DeviceRecordFromJson({{"name", "H200"}}, "device");
  reply.timing = CheckTiming{12.5, 3.0, {{"candidate", 1.0}}};
  reply.memory = *common::MemoryRecordFromJson({{"budget_bytes", 10}}, "memory");
  reply.exiting = true;
  json wire = reply.ToJson();
  for (const char* key : {"status", "message", "trials", "checks", "device", "timing", "memory", "exiting"})
    EXPECT_TRUE(wire.contains(key)) << key;
  EXPECT_EQ(wire["status"], "mismatch");
  EXPECT_EQ(wire["timing"]["gpu_ms"], 12.5);
  EXPECT_FALSE(wire["timing"].contains("plan_split")) << "no library ops, no key";
  auto back = CheckReply::FromJson(json::parse(wire.dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->ToJson(), wire);

  reply.timing->plan_split = common::PlanSplit{0.5, 1.5, 0.75};
  reply.checks.library_ops = "some_time";
  wire = reply.ToJson();
  EXPECT_EQ(wire["timing"]["plan_split"]["ops_fraction"], 0.75);
  back = CheckReply::FromJson(json::parse(wire.dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->timing->plan_split, reply.timing->plan_split);
  EXPECT_EQ(back->ToJson(), wire);
}

TEST(WorkerProtocolTest, FailureRepliesReadAsEveryReplyType) {
  json failure = FailureReplyJson(VerdictStatus::kNoGpu, "no CUDA device 0 (found 0)");
  EXPECT_EQ(failure, json({{"status", "no_gpu"}, {"message", "no CUDA device 0 (found 0)"}}));
  auto check = CheckReply::FromJson(failure);
  ASSERT_TRUE(check.ok()) << check.status().message();
  EXPECT_EQ(check->status, VerdictStatus::kNoGpu);
  EXPECT_EQ(check->message, "no CUDA device 0 (found 0)");
  EXPECT_TRUE(check->trials.empty());
  EXPECT_FALSE(check->timing.has_value());
  EXPECT_FALSE(check->exiting);
  auto hello = HelloReply::FromJson(failure);
  ASSERT_TRUE(hello.ok());
  EXPECT_EQ(hello->status, VerdictStatus::kNoGpu);
  EXPECT_EQ(hello->ToJson(), failure);
  auto task_check = TaskCheckReply::FromJson(failure);
  ASSERT_TRUE(task_check.ok());
  EXPECT_EQ(task_check->status, TaskCheckStatus::kNoGpu);
}

TEST(WorkerProtocolTest, MalformedRepliesAreErrors) {
  EXPECT_EQ(CheckReply::FromJson(json::object()).status().message(), "check reply: status: missing");
  EXPECT_EQ(CheckReply::FromJson({{"status", "fine"}}).status().message(),
            "check reply: status: unknown status \"fine\"");
  EXPECT_EQ(CheckReply::FromJson({{"status", "ok"}, {"checks", json::array()}}).status().message(),
            "check reply: checks: expected an object, got array");
  EXPECT_EQ(CheckReply::FromJson({{"status", "ok"}, {"timing", {{"gpu_ms", "slow"}}}}).status().message(),
            "check reply: timing.gpu_ms: expected a number, got string");
  EXPECT_EQ(CheckReply::FromJson({{"status", "ok"}, {"exiting", 1}}).status().message(),
            "check reply: exiting: expected a boolean, got integer");
  EXPECT_EQ(TaskCheckReply::FromJson({{"status", "ok"}, {"variants", {{{"load_ms", 1}}}}}).status().message(),
            "task_check reply: variants[0].variant: missing");
  EXPECT_EQ(TaskCheckReply::FromJson({{"status", "great"}}).status().message(),
            "task_check reply: status: unknown status \"great\"");
}

TEST(WorkerProtocolTest, HelloCarriesPeakOnlyWhenAsked) {
  EXPECT_EQ(HelloRequest{}.ToJson(), json({{"op", "hello"}, {"peak", false}}));
  auto asked = HelloRequest::FromJson({{"op", "hello"}, {"peak", true}});
  ASSERT_TRUE(asked.ok());
  EXPECT_TRUE(asked->peak);
  EXPECT_FALSE(HelloRequest::FromJson({{"op", "hello"}, {"peak", "yes"}}).ok());
  EXPECT_FALSE(HelloRequest::FromJson({{"op", "hello"}}).value().peak) << "peak defaults to false";

  HelloReply reply;
  reply.device = *common::DeviceRecordFromJson({{"name", "H200"}}, "device");
  EXPECT_EQ(reply.ToJson(), json({{"status", "ok"}, {"device", {{"name", "H200"}}}}));
  reply.peak_asked = true;  // asked for, not measured
  json wire = reply.ToJson();
  EXPECT_TRUE(wire.contains("peak"));
  EXPECT_TRUE(wire["peak"].is_null());
  auto back = HelloReply::FromJson(wire);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->peak_asked);
  EXPECT_FALSE(back->peak.has_value());
  EXPECT_EQ(back->ToJson(), wire);
}

TEST(WorkerProtocolTest, TaskCheckRoundTrips) {
  TaskCheckRequest request{"/tasks/core/gelu", 42};
  json wire = request.ToJson();
  EXPECT_EQ(wire, json({{"op", "task_check"}, {"task_dir", "/tasks/core/gelu"}, {"seed", 42}}));
  auto back = TaskCheckRequest::FromJson(wire);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->seed, 42u);
  wire.erase("seed");
  EXPECT_EQ(TaskCheckRequest::FromJson(wire)->seed, 1u) << "the documented default";

  TaskCheckReply reply;
  reply.status = TaskCheckStatus::kFail;
  reply.message = "the reference disagrees with itself";
  TaskCheckVariant variant;
  variant.variant = "default";
  variant.load_ms = 5;
  variant.first_run_ms = 2;
  variant.reference_ms = 1;
  variant.checks.rerun = common::CheckOutcome::kFail;
  variant.memory = *common::MemoryRecordFromJson({{"footprint_bytes", 100}, {"peak_device_bytes", 90}}, "memory");
  reply.variants = {variant};
  json out = reply.ToJson();
  EXPECT_EQ(out["variants"][0]["memory"]["peak_device_bytes"], 90);
  auto parsed = TaskCheckReply::FromJson(json::parse(out.dump()));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->ToJson(), out);
}

TEST(WorkerProtocolTest, RequestOpOfAnythingElseIsNone) {
  EXPECT_EQ(RequestOpText(json::array()), "");
  EXPECT_EQ(RequestOpText({{"op", 3}}), "");
  EXPECT_EQ(RequestOpText({{"peak", true}}), "");
  EXPECT_EQ(RequestOpText({{"op", "train"}}), "train");
  EXPECT_EQ(RequestOp(json::array()), std::nullopt);
  EXPECT_EQ(RequestOp({{"op", 3}}), std::nullopt);
  EXPECT_EQ(RequestOp({{"op", "train"}}), std::nullopt);
  EXPECT_EQ(RequestOp({{"op", "bench"}}), WorkerOp::kBench);
}

// The ops' names are the wire's: each request is written byte for byte as before the enum.
TEST(WorkerProtocolTest, RequestsWriteTheirOpByName) {
  EXPECT_EQ(HelloRequest{.peak = true}.ToJson().dump(), R"({"op":"hello","peak":true})");
  EXPECT_EQ((TaskCheckRequest{.task_dir = "t", .seed = 2}.ToJson().dump()),
            R"({"op":"task_check","seed":2,"task_dir":"t"})");
  EXPECT_EQ((TaskAuditRequest{.task_dir = "t", .seed = 2, .trials = 3}.ToJson().dump()),
            R"({"op":"task_audit","seed":2,"task_dir":"t","trials":3})");
  EXPECT_EQ((TaskAuditRequest{.task_dir = "t", .seed = 2, .trials = 3, .timing = true}.ToJson().dump()),
            R"({"op":"task_audit","seed":2,"task_dir":"t","timing":true,"trials":3})");
  for (WorkerOp op :
       {WorkerOp::kHello, WorkerOp::kCheck, WorkerOp::kBench, WorkerOp::kTaskCheck, WorkerOp::kTaskAudit})
    EXPECT_EQ(RequestOp({{"op", WorkerOpName(op)}}), op) << WorkerOpName(op);
  EXPECT_EQ(kWorkerOpNames.Spellings(), "hello, check, bench, task_check or task_audit");
}

// A timing audit's request and figures survive the pipe; a no-work candidate has none.
TEST(WorkerProtocolTest, TimingAuditRoundTrips) {
  auto request = TaskAuditRequest::FromJson(TaskAuditRequest{.task_dir = "t", .timing = true}.ToJson());
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_TRUE(request->timing);
  EXPECT_FALSE(TaskAuditRequest::FromJson(TaskAuditRequest{.task_dir = "t"}.ToJson())->timing);

  TaskAuditReply reply;
  reply.candidates.push_back({"zeros", false, "out0 differs"});
  reply.candidates.push_back({"memo", false, "no shortcut on any of 9 checked timed runs",
                              AuditedTiming{.checked_runs = 9, .shortcuts = 0, .median_ms = 1.25,
                                            .honest_ms = 1.2, .draws = 4, .control = false}});
  reply.candidates.push_back({"control:memo_unrestored", true, "",
                              AuditedTiming{.checked_runs = 9, .shortcuts = 8, .median_ms = 0.01,
                                            .honest_ms = 1.2, .draws = 1, .control = true}});
  auto back = TaskAuditReply::FromJson(reply.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->candidates.size(), 3u);
  EXPECT_FALSE(back->candidates[0].timing);
  ASSERT_TRUE(back->candidates[1].timing);
  EXPECT_EQ(back->candidates[1].timing->checked_runs, 9);
  EXPECT_EQ(back->candidates[1].timing->draws, 4);
  EXPECT_DOUBLE_EQ(back->candidates[1].timing->median_ms, 1.25);
  EXPECT_DOUBLE_EQ(back->candidates[1].timing->honest_ms, 1.2);
  EXPECT_TRUE(back->candidates[2].timing->control);
  EXPECT_EQ(back->candidates[2].timing->shortcuts, 8);
  EXPECT_EQ(back->ToJson(), reply.ToJson());

  nlohmann::json bad = reply.ToJson();
  bad["candidates"][1]["timing"]["shortcuts"] = "many";
  auto refused = TaskAuditReply::FromJson(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("candidates[1].timing"), std::string::npos) << refused.status().message();
}

}  // namespace
}  // namespace kforge::verify
