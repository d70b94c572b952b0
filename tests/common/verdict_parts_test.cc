#include "kforge/common/verdict_parts.h"

#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "kforge/common/verdict.h"

namespace kforge::common {
namespace {

using nlohmann::json;

// A verdict as the worker writes it today, every part in full.
const char kFull[] =
    R"({"checks":{"guard_regions":"pass"},"compile":{"arch":"sm_90a","cached":true,)"
    R"("kernels":{"relu":{"registers":10,"shared_bytes":0,"spill_load_bytes":4,"spill_store_bytes":8,)"
    R"("stack_bytes":0}},"log":"","ms":91.2,"warnings":["dropped"]},"device":{"cc":"9.0","index":1,)"
    R"("l2_bytes":52428800,"memory_bytes":150000000000,"name":"NVIDIA H200","sm_count":132},"judge":3,)"
    R"("memory":{"budget_bytes":10,"footprint_bytes":4,"inputs_bytes":1,"outputs_bytes":1,)"
    R"("params_bytes":1,"peak_device_bytes":6,"scratch_bytes":1},"message":"","schema":"kforge.verdict/1",)"
    R"("seed":18446744073709551615,"solution":"s.json","solution_hash":"sha256:ab","status":"mismatch",)"
    R"("task":"demo/relu","timing":{"gpu_ms":40.5,"phases_ms":{"candidate":0.5},)"
    R"("plan_split":{"kernels_ms":1.0,"ops_fraction":0.75,"ops_ms":3.0},"reference_load_ms":0.0,)"
    R"("worker_start_ms":900.0},"toolchain":{"arch":"sm_90a","kforge":"0.1.0"},"trials":[{"distribution":0,)"
    R"("domain":"wide","outputs":[{"first_mismatch":3,"max_abs_err":"inf","max_rel_err":0.5,"mismatches":7,)"
    R"("name":"out0","numel":100,"rel_l2_err":0.25},{"first_mismatch":null,"max_abs_err":0.0,"max_rel_err":0.0,)"
    R"("mismatches":0,"name":"out1","numel":100,"rel_l2_err":0.0}],"runs":3,)"
    R"("seed":12297829382473034410,"trial":0,"variant":"default"}]})";

// Shorter records: a fake worker's, and parts written with fewer keys.
const char kShort[] = R"({"checks":{},"compile":{"cached":false,"kernels":{"k":{"registers":10}},"ms":1.0},)"
                      R"("device":{"cc":"9.0","index":0,"name":"Fake GPU"},"memory":{"budget_bytes":1024},)"
                      R"("schema":"kforge.verdict/1","status":"ok","task":"demo/relu","timing":{},)"
                      R"("trials":[{"seed":7,"trial":0,"variant":"default"}]})";

TEST(VerdictPartsTest, RecordsReadBackKeepTheirBytes) {
  for (const char* line : {kFull, kShort}) {
    auto verdict = Verdict::FromJson(json::parse(line));
    ASSERT_TRUE(verdict.ok()) << verdict.status().message();
    EXPECT_EQ(verdict->ToJson().dump(), line);
  }
}

TEST(VerdictPartsTest, PartsReadTyped) {
  auto v = Verdict::FromJson(json::parse(kFull));
  ASSERT_TRUE(v.ok()) << v.status().message();
  ASSERT_TRUE(v->compile && v->device && v->memory);
  EXPECT_EQ(v->compile->kernels.at("relu").spill_store_bytes, 8);
  EXPECT_EQ(v->compile->warnings, std::vector<std::string>{"dropped"});
  EXPECT_EQ(v->device->memory_bytes, 150000000000u);
  EXPECT_EQ(v->memory->peak_device_bytes, 6);
  ASSERT_EQ(v->trials.size(), 1u);
  const TrialRecord& trial = v->trials[0];
  EXPECT_EQ(trial.seed, 12297829382473034410u);
  EXPECT_EQ(trial.domain, "wide");
  ASSERT_EQ(trial.outputs.size(), 2u);
  EXPECT_EQ(trial.outputs[0].max_abs_err, std::numeric_limits<double>::infinity());
  EXPECT_EQ(trial.outputs[0].first_mismatch, 3);
  EXPECT_FALSE(trial.outputs[1].first_mismatch.has_value());
  EXPECT_EQ(v->timing.worker_start_ms, 900.0);
  EXPECT_EQ(v->timing.plan_split, (PlanSplit{1.0, 3.0, 0.75}));
  EXPECT_EQ(v->toolchain.at("arch"), "sm_90a");
}

TEST(VerdictPartsTest, AbsentKeysAreKnown) {
  auto v = Verdict::FromJson(json::parse(kShort));
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_TRUE(v->memory->Has("budget_bytes"));
  EXPECT_FALSE(v->memory->Has("peak_device_bytes"));
  EXPECT_TRUE(v->device->Has("name"));
  EXPECT_FALSE(v->device->Has("sm_count"));
  EXPECT_FALSE(v->timing.gpu_ms.has_value());
}

TEST(VerdictPartsTest, WrongTypesNameTheirPath) {
  json bad = json::parse(kFull);
  bad["trials"][0]["outputs"][1]["numel"] = "many";
  EXPECT_EQ(Verdict::FromJson(bad, "t.attempts[0].verdict").status().message(),
            "t.attempts[0].verdict.trials[0].outputs[1].numel: expected an integer, got string");
  bad = json::parse(kFull);
  bad["memory"] = 7;
  EXPECT_FALSE(Verdict::FromJson(bad).ok());
}

TEST(VerdictPartsTest, AnUnreadablePlanSplitIsNone) {
  auto timing =
      VerdictTimingFromJson(json({{"gpu_ms", 4.0}, {"plan_split", {{"ops_fraction", 0.75}}}}), "timing");
  ASSERT_TRUE(timing.ok());
  EXPECT_FALSE(timing->plan_split.has_value());
  EXPECT_EQ(timing->gpu_ms, 4.0);
}

TEST(VerdictPartsTest, ABenchDeviceKeepsItsPeak) {
  DeviceRecord device;
  device.name = "NVIDIA H200";
  device.peak = DevicePeak{};
  device.peak->dram_gbps = 4300;
  device.peak->cc_major = 9;
  const json written = DeviceRecordToJson(device);
  EXPECT_TRUE(written["peak"]["fp32_tflops"].is_null()) << "unknown peaks are null";
  auto back = DeviceRecordFromJson(json::parse(written.dump()), "device");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->peak.has_value());
  EXPECT_EQ(back->peak->dram_gbps, 4300);
  EXPECT_EQ(DeviceRecordToJson(*back), written);
  EXPECT_EQ(DeviceRecordToJson(std::optional<DeviceRecord>()), json(nullptr));
}

}  // namespace
}  // namespace kforge::common
