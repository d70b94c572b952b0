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

// Each row: a checks record, read and written back byte for byte, and what it reads as.
TEST(VerdictPartsTest, ChecksRoundTrip) {
  Checks all;
  all.poisoned_outputs = CheckOutcome::kPass;
  all.guard_regions = CheckOutcome::kFail;
  all.inputs_unchanged = CheckOutcome::kPass;
  all.repeat_runs = RepeatRuns{.count = 3};
  all.library_ops = "most_time";
  all.shape_general = CheckOutcome::kNotRun;
  all.shape_general_detail = "harness_error: out of memory (variant large)";
  all.bitwise_deterministic = false;
  all.degenerate_reference = "out0 is near-constant; norm check applied";
  all.elements_only = "out0 is zero; judged by elements alone";
  all.rerun = CheckOutcome::kPass;
  all.golden = CheckOutcome::kFail;
  all.sanitizer = CheckOutcome::kPass;
  all.gpu_check = CheckOutcome::kSkipped;
  Checks failed_repeats;
  failed_repeats.repeat_runs = RepeatRuns{.failed = true};
  failed_repeats.shape_general = CheckOutcome::kFail;
  Checks unknown;
  unknown.guard_regions = CheckOutcome::kPass;
  unknown.other["a_newer_check"] = json{{"runs", 2}};
  unknown.other["zz_older"] = "pass";
  unknown.other["rerun"] = nullptr;  // a known key holding null is kept as it was
  const struct {
    const char* record;
    Checks want;
  } rows[] = {
      {"{}", Checks{}},
      {R"({"bitwise_deterministic":false,"degenerate_reference":"out0 is near-constant; norm check applied",)"
       R"("elements_only":"out0 is zero; judged by elements alone","golden":"fail","gpu_check":"skipped",)"
       R"("guard_regions":"fail","inputs_unchanged":"pass","library_ops":"most_time","poisoned_outputs":"pass",)"
       R"("repeat_runs":3,"rerun":"pass","sanitizer":"pass","shape_general":"not_run",)"
       R"x("shape_general_detail":"harness_error: out of memory (variant large)"})x",
       all},
      {R"({"repeat_runs":"fail","shape_general":"fail"})", failed_repeats},
      {R"({"a_newer_check":{"runs":2},"guard_regions":"pass","rerun":null,"zz_older":"pass"})", unknown},
  };
  for (const auto& row : rows) {
    StatusOr<Checks> read = ChecksFromJson(json::parse(row.record), "checks");
    ASSERT_TRUE(read.ok()) << row.record << ": " << read.status().message();
    EXPECT_TRUE(*read == row.want) << row.record;
    EXPECT_EQ(ChecksToJson(*read).dump(), row.record);
    EXPECT_EQ(ChecksToJson(row.want).dump(), row.record);
  }
  StatusOr<Checks> none = ChecksFromJson(json(nullptr), "checks");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(*none == Checks{.read_as_null = true});
  EXPECT_TRUE(ChecksToJson(*none).is_null()) << "a record's null checks keep their bytes";
  none->sanitizer = CheckOutcome::kPass;  // a check set since: an object
  EXPECT_EQ(ChecksToJson(*none).dump(), R"({"sanitizer":"pass"})");
}

TEST(VerdictPartsTest, ChecksOfAWrongTypeNameTheirPath) {
  const struct {
    const char* record;
    const char* error;
  } rows[] = {
      {R"({"guard_regions":true})", "t.checks.guard_regions: expected a string, got boolean"},
      {R"({"guard_regions":"maybe"})",
       "t.checks.guard_regions: \"maybe\", expected pass, fail, not_run or skipped"},
      {R"({"repeat_runs":"pass"})", "t.checks.repeat_runs: expected a count or \"fail\""},
      {R"({"repeat_runs":2.5})", "t.checks.repeat_runs: expected a count or \"fail\""},
      {R"({"bitwise_deterministic":"yes"})",
       "t.checks.bitwise_deterministic: expected a boolean, got string"},
      {R"({"shape_general_detail":3})", "t.checks.shape_general_detail: expected a string, got integer"},
      {R"([])", "t.checks: expected an object"},
  };
  for (const auto& row : rows) {
    StatusOr<Checks> read = ChecksFromJson(json::parse(row.record), "t.checks");
    ASSERT_FALSE(read.ok()) << row.record;
    EXPECT_EQ(read.status().message(), row.error) << row.record;
  }
  // A verdict names the same path.
  json verdict = json::parse(kFull);
  verdict["checks"]["poisoned_outputs"] = 1;
  EXPECT_EQ(Verdict::FromJson(verdict, "a").status().message(),
            "a.checks.poisoned_outputs: expected a string, got integer");
}

}  // namespace
}  // namespace kforge::common
