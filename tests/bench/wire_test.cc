#include "kforge/bench/wire.h"

#include <gtest/gtest.h>

#include "kforge/verify/worker_protocol.h"

namespace kforge::bench {
namespace {

TEST(BenchWireTest, MeasurementRoundTrip) {
  Measurement m;
  m.mode = Mode::kHot;
  m.subjects.push_back({"candidate", {0.25, 0.5}, 3, 8, 0.004});
  m.subjects.push_back({"reference", {1.0}, 0, 2, 0.002});
  m.converged = true;
  m.rounds = 5;
  m.wall_seconds = 1.5;
  m.sm_clock_mhz = 1980;
  m.max_sm_clock_mhz = 1980;
  m.l2_flush_bytes = 0;
  auto back = MeasurementFromJson(MeasurementToJson(m));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->mode, Mode::kHot);
  ASSERT_EQ(back->subjects.size(), 2u);
  EXPECT_EQ(back->subjects[0].ms, (std::vector<double>{0.25, 0.5}));
  EXPECT_EQ(back->subjects[0].throttled, 3);
  EXPECT_EQ(back->subjects[0].batch, 8);
  EXPECT_EQ(back->subjects[1].name, "reference");
  EXPECT_TRUE(back->converged);
  EXPECT_EQ(back->rounds, 5);
  EXPECT_DOUBLE_EQ(back->sm_clock_mhz, 1980);
}

TEST(BenchWireTest, BadMeasurementNamesTheField) {
  nlohmann::json j = MeasurementToJson(Measurement{});
  j["mode"] = "warm";
  auto bad = MeasurementFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("measurement.mode"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(MeasurementFromJson(nlohmann::json::array()).ok());
  j = MeasurementToJson(Measurement{});
  j.erase("rounds");
  EXPECT_FALSE(MeasurementFromJson(j).ok());
}

TEST(BenchWireTest, OptionsRoundTripAndValidation) {
  MeasureOptions o;
  o.mode = Mode::kHot;
  o.max_noise = 0.01;
  o.min_samples = 20;
  auto back = MeasureOptionsFromJson(MeasureOptionsToJson(o));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->mode, Mode::kHot);
  EXPECT_DOUBLE_EQ(back->max_noise, 0.01);
  EXPECT_EQ(back->min_samples, 20);
  EXPECT_TRUE(MeasureOptionsFromJson(nlohmann::json::object()).ok()) << "defaults";
  EXPECT_FALSE(MeasureOptionsFromJson({{"min_samples", 0}}).ok());
  EXPECT_FALSE(MeasureOptionsFromJson({{"mode", "lukewarm"}}).ok());
  EXPECT_FALSE(MeasureOptionsFromJson({{"max_noise", "small"}}).ok());
}

TEST(BenchWireTest, PeakRoundTrip) {
  DevicePeak p;
  p.device = "NVIDIA H200";
  p.uuid = "GPU-0";
  p.driver_version = 13000;
  p.cc_major = 9;
  p.sm_count = 132;
  p.sm_clock_mhz = 1980;
  p.dram_gbps = 4300;
  p.copy_bytes = 1 << 30;
  p.fp32_tflops = 66.9;
  auto back = common::DevicePeakFromJson(p.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->cc_major, 9);
  EXPECT_EQ(back->cc_minor, 0);
  EXPECT_DOUBLE_EQ(back->dram_gbps, 4300);
  EXPECT_DOUBLE_EQ(back->fp32_tflops, 66.9);
  EXPECT_DOUBLE_EQ(back->bf16_tflops, 0) << "null reads as unknown";
  EXPECT_FALSE(common::DevicePeakFromJson(nlohmann::json(nullptr)).ok());
}

BenchReply TimedReply() {
  BenchReply reply;
  Measurement m;
  m.subjects.push_back({"candidate", {0.5}, 0, 1, 0.001});
  m.subjects.push_back({"reference", {1.0}, 0, 1, 0.001});
  reply.measurement = m;
  reply.checked_runs = 1;
  reply.placements = 4;
  reply.memory = *common::MemoryRecordFromJson({{"budget_bytes", 10}}, "memory");
  reply.device = *common::DeviceRecordFromJson({{"name", "H200"}}, "device");
  return reply;
}

TEST(BenchWireTest, ReplyRoundTripsWithThePlanSplitOnlyWhenThereIsOne) {
  BenchReply reply = TimedReply();
  nlohmann::json wire = reply.ToJson();
  EXPECT_FALSE(wire.contains("plan_split")) << "no library ops, no key";
  auto back = BenchReply::FromJson(nlohmann::json::parse(wire.dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_FALSE(back->plan_split);
  EXPECT_EQ(back->ToJson(), wire);

  reply.plan_split = common::PlanSplit{0.1, 0.9, 0.9};
  wire = reply.ToJson();
  EXPECT_EQ(wire["plan_split"],
            nlohmann::json({{"kernels_ms", 0.1}, {"ops_ms", 0.9}, {"ops_fraction", 0.9}}));
  back = BenchReply::FromJson(nlohmann::json::parse(wire.dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->plan_split, reply.plan_split);
  EXPECT_EQ(back->placements, 4);
  EXPECT_EQ(back->ToJson(), wire);

  wire["plan_split"] = nullptr;
  back = BenchReply::FromJson(wire);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_FALSE(back->plan_split) << "null reads as none";
}

TEST(BenchWireTest, MalformedPlanSplitNamesTheField) {
  nlohmann::json wire = TimedReply().ToJson();
  wire["plan_split"] = {{"kernels_ms", 0.1}, {"ops_ms", 0.9}, {"ops_fraction", "most"}};
  EXPECT_EQ(BenchReply::FromJson(wire).status().message(),
            "bench reply: plan_split.ops_fraction: expected a number");
  wire["plan_split"].erase("kernels_ms");
  EXPECT_EQ(BenchReply::FromJson(wire).status().message(),
            "bench reply: plan_split.kernels_ms: expected a number");
  wire["plan_split"] = nlohmann::json::array();
  EXPECT_EQ(BenchReply::FromJson(wire).status().message(),
            "bench reply: plan_split: expected an object or null");
}

TEST(BenchWireTest, AFailureReplyHasNoPlanSplit) {
  BenchReply reply;
  reply.status = common::VerdictStatus::kMismatch;
  reply.message = "timed run: out0 differs";
  reply.plan_split = common::PlanSplit{0.1, 0.9, 0.9};
  EXPECT_EQ(reply.ToJson(),
            nlohmann::json({{"status", "mismatch"}, {"message", reply.message}, {"exiting", false}}));
}

TEST(BenchWireTest, AFieldOfTheWrongTypeIsNamedNotThrown) {
  nlohmann::json wire = TimedReply().ToJson();
  wire["measurement"]["rounds"] = "5";
  EXPECT_EQ(BenchReply::FromJson(wire).status().message(),
            "bench reply: measurement.rounds: expected an integer, got string");
  wire = TimedReply().ToJson();
  wire["measurement"]["subjects"][0]["ms"] = {1.0, "slow"};
  EXPECT_EQ(BenchReply::FromJson(wire).status().message(),
            "bench reply: measurement.subjects[0].ms[1]: expected a number, found string");
  wire = TimedReply().ToJson();
  wire["exiting"] = 1;
  EXPECT_EQ(BenchReply::FromJson(wire).status().message(),
            "bench reply: exiting: expected true or false, found integer");
  wire = TimedReply().ToJson();
  wire["checked_runs"] = int64_t{1} << 40;
  EXPECT_EQ(BenchReply::FromJson(wire).status().message(), "bench reply: checked_runs: integer out of range");
  EXPECT_EQ(MeasureOptionsFromJson({{"max_noise", "small"}}).status().message(),
            "measure options: max_noise: expected a number, got string");
}

TEST(BenchWireTest, RequestIsTheWorkersBenchOpAndRoundTrips) {
  BenchRequest request;
  request.task_dir = "tasks/demo/relu";
  request.seed = 4;
  nlohmann::json wire = request.ToJson();
  EXPECT_EQ(wire["op"], "bench");
  EXPECT_EQ(verify::RequestOp(wire), verify::WorkerOp::kBench);
  auto back = BenchRequest::FromJson(nlohmann::json::parse(wire.dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->task_dir, request.task_dir);
  EXPECT_EQ(back->seed, 4u);
  EXPECT_FALSE(back->solution.has_value());
  EXPECT_EQ(back->ToJson().dump(), wire.dump());
}

}  // namespace
}  // namespace kforge::bench
