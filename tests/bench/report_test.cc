// Bench records: assembly from a measurement, flags, JSON keys and the table.
#include "kforge/bench/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "bench/peak_model.h"

namespace kforge::bench {
namespace {

using nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

SubjectSamples Samples(const std::string& name, double ms, int n, int throttled = 0) {
  SubjectSamples s;
  s.name = name;
  for (int i = 0; i < n; ++i) s.ms.push_back(ms * (1 + 0.01 * ((i % 3) - 1)));
  s.throttled = throttled;
  return s;
}

Measurement Measured(double candidate_ms, double reference_ms, bool converged = true, int throttled = 0) {
  Measurement m;
  m.mode = Mode::kHot;
  m.subjects = {Samples("candidate", candidate_ms, 30), Samples("reference", reference_ms, 30, throttled)};
  m.subjects[0].batch = 7;
  m.converged = converged;
  m.rounds = 30 + throttled;
  m.wall_seconds = 0.5;
  m.sm_clock_mhz = 1755;
  m.max_sm_clock_mhz = 1980;
  return m;
}

DevicePeak Peak() {
  DevicePeak p;
  p.device = "NVIDIA H200";
  p.cc_major = 9;
  p.sm_count = 132;
  p.sm_clock_mhz = 1980;
  p.dram_gbps = 4000;
  internal::SetFlopPeaks(p);
  return p;
}

TEST(BenchResultTest, StatisticsSpeedupAndRoofline) {
  const TaskCost cost{0, 2e6, common::DType::kFloat32};  // 2 MB: 0.5 us at 4000 GB/s
  auto r = MakeBenchResult(Measured(0.001, 0.002), 9, cost, Peak());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, common::VerdictStatus::kOk);
  EXPECT_EQ(r->mode, Mode::kHot);
  EXPECT_EQ(r->seed, 9u);
  EXPECT_EQ(r->candidate.stats.count, 30);
  EXPECT_DOUBLE_EQ(r->candidate.stats.median, 0.001);
  EXPECT_EQ(r->candidate.batch, 7);
  EXPECT_EQ(r->candidate.samples_ms.size(), 30u);
  ASSERT_TRUE(r->reference.has_value());
  EXPECT_DOUBLE_EQ(r->reference->stats.median, 0.002);
  EXPECT_DOUBLE_EQ(r->speedup.ratio, 2.0);
  EXPECT_LE(r->speedup.lo, 2.0);
  EXPECT_GE(r->speedup.hi, 2.0);
  ASSERT_TRUE(r->roofline.has_value());
  EXPECT_DOUBLE_EQ(r->roofline->sol_ms, 0.0005);
  EXPECT_DOUBLE_EQ(r->roofline->sol_pct, 50);
  EXPECT_DOUBLE_EQ(r->roofline->reference_sol_pct, 25) << "the reference's own: 0.5 us of its 2 us";
  EXPECT_DOUBLE_EQ(r->roofline->achieved_gbps, 2000);
  EXPECT_TRUE(r->flags.empty());
  EXPECT_EQ(r->speedup.lo, MakeBenchResult(Measured(0.001, 0.002), 9, cost, Peak())->speedup.lo)
      << "the seed fixes the interval";
}

TEST(BenchResultTest, SubjectCount) {
  Measurement none;
  EXPECT_EQ(MakeBenchResult(none, 1, std::nullopt, std::nullopt).status().code(),
            Status::Code::kInvalidArgument);
  Measurement three = Measured(1, 1);
  three.subjects.push_back(three.subjects[0]);
  EXPECT_FALSE(MakeBenchResult(three, 1, std::nullopt, std::nullopt).ok());
  Measurement alone = Measured(1, 1);
  alone.subjects.pop_back();
  auto r = MakeBenchResult(alone, 1, TaskCost{0, 1e6}, std::nullopt);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->reference.has_value());
  EXPECT_TRUE(std::isnan(r->speedup.ratio));
  EXPECT_FALSE(r->roofline.has_value()) << "no peak, no roofline";
}

TEST(BenchFlagsTest, EachFlag) {
  const TaskCost cost{0, 8e6, common::DType::kFloat32};  // speed of light 2 us
  struct Case {
    const char* name;
    Measurement m;
    std::optional<TaskCost> cost;
    std::vector<std::string> flags;
  };
  const Case cases[] = {
      {"plain", Measured(0.01, 0.02), cost, {}},
      {"implausible", Measured(0.01, 0.12), cost, {"implausible_speedup"}},
      {"at the bound", Measured(0.25, 2.5), cost, {}},
      {"faster than light", Measured(0.001, 0.002), cost, {"faster_than_light"}},
      {"unconverged", Measured(0.01, 0.02, false), cost, {"unconverged"}},
      {"throttled", Measured(0.01, 0.02, true, 3), cost, {"throttled"}},
      {"all",
       Measured(0.001, 0.5, false, 1),
       cost,
       {"implausible_speedup", "faster_than_light", "unconverged", "throttled"}},
      {"no cost, no light", Measured(0.001, 0.002), std::nullopt, {}},
  };
  for (const Case& c : cases) {
    auto r = MakeBenchResult(c.m, 1, c.cost, Peak());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->flags, c.flags) << c.name;
    EXPECT_EQ(BenchFlags(*r), c.flags) << c.name;
  }
  auto failed = MakeBenchResult(Measured(0.001, 0.5, false, 1), 1, cost, Peak());
  failed->status = common::VerdictStatus::kMismatch;
  EXPECT_TRUE(BenchFlags(*failed).empty()) << "a failed solution has no timing to flag";
}

std::vector<std::string> Keys(const json& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

TEST(BenchJsonTest, Keys) {
  auto r = MakeBenchResult(Measured(0.0123456789, 0.025, false), 5, TaskCost{0, 2e6}, Peak());
  ASSERT_TRUE(r.ok());
  r->task = "kernelbench/level1/19_ReLU";
  r->solution_hash = "abc";
  r->device = common::DeviceRecord{};
  r->device->name = "NVIDIA H200";
  const json j = BenchResultToJson(*r);
  EXPECT_EQ(Keys(j), (std::vector<std::string>{"candidate", "converged", "device", "flags",
                                               "max_sm_clock_mhz", "message", "mode", "reference", "roofline",
                                               "rounds", "schema", "seed", "sm_clock_mhz", "solution_hash",
                                               "speedup", "status", "task", "wall_seconds"}));
  EXPECT_EQ(j["schema"], "kforge.bench/1");
  EXPECT_EQ(j["mode"], "hot");
  EXPECT_EQ(j["seed"], 5);
  EXPECT_EQ(j["converged"], false);
  EXPECT_EQ(j["flags"], json::array({"unconverged"}));
  EXPECT_EQ(j["device"]["name"], "NVIDIA H200");
  EXPECT_EQ(Keys(j["candidate"]),
            (std::vector<std::string>{"batch", "count", "max_ms", "mean_ms", "median_ci_ms", "median_ms",
                                      "min_ms", "noise", "p10_ms", "p90_ms", "samples_ms", "throttled"}));
  EXPECT_DOUBLE_EQ(j["candidate"]["median_ms"].get<double>(), 0.0123456789);
  EXPECT_EQ(j["candidate"]["samples_ms"][1], 0.012346) << "samples are written in 1 ns steps";
  EXPECT_EQ(j["candidate"]["samples_ms"].size(), 30u);
  EXPECT_EQ(j["candidate"]["median_ci_ms"].size(), 2u);
  EXPECT_EQ(j["candidate"]["batch"], 7);
  EXPECT_EQ(Keys(j["speedup"]), (std::vector<std::string>{"ci", "confidence", "iterations", "ratio"}));
  EXPECT_EQ(Keys(j["roofline"]),
            (std::vector<std::string>{"achieved_gbps", "achieved_tflops", "bandwidth_pct", "bytes", "flops",
                                      "flops_pct", "peak_gbps", "peak_tflops", "reference_sol_pct", "sol_ms",
                                      "sol_pct"}));
  EXPECT_TRUE(j["roofline"]["flops"].is_null()) << "no FLOP formula";
  EXPECT_TRUE(j["roofline"]["achieved_tflops"].is_null());
  EXPECT_DOUBLE_EQ(j["roofline"]["sol_ms"].get<double>(), 0.0005);
}

TEST(BenchJsonTest, PlanSplitAndLibraryOpsOnlyForPlansWithLibraryOps) {
  auto r = MakeBenchResult(Measured(0.01, 0.02), 1, std::nullopt, std::nullopt);
  ASSERT_TRUE(r.ok());
  json j = BenchResultToJson(*r);
  EXPECT_FALSE(j.contains("plan_split")) << "absent, not null, without library ops";
  EXPECT_FALSE(j.contains("library_ops"));

  r->plan_split = common::PlanSplit{0.004, 0.006, 0.6};
  r->flags = BenchFlags(*r);
  j = BenchResultToJson(*r);
  EXPECT_EQ(j["plan_split"], json({{"kernels_ms", 0.004}, {"ops_ms", 0.006}, {"ops_fraction", 0.6}}));
  EXPECT_EQ(j["library_ops"], "some_time");
  EXPECT_EQ(j["flags"], json::array());

  r->plan_split = common::PlanSplit{0.0005, 0.0095, 0.95};
  r->flags = BenchFlags(*r);
  j = BenchResultToJson(*r);
  EXPECT_EQ(j["library_ops"], "most_time");
  EXPECT_EQ(j["flags"], json::array({"mostly_library_ops"}));

  r->status = common::VerdictStatus::kMismatch;
  EXPECT_FALSE(BenchResultToJson(*r).contains("plan_split")) << "no timing, no split";
}

TEST(BenchJsonTest, AbsentPartsAreNull) {
  BenchResult failed;
  failed.task = "t";
  failed.status = common::VerdictStatus::kCompileError;
  failed.message = "kernel.cu(3): error";
  const json j = BenchResultToJson(failed);
  EXPECT_EQ(j["status"], "compile_error");
  EXPECT_TRUE(j["candidate"].is_null());
  EXPECT_TRUE(j["reference"].is_null());
  EXPECT_TRUE(j["speedup"].is_null());
  EXPECT_TRUE(j["roofline"].is_null());
  EXPECT_EQ(j["flags"], json::array());

  Measurement alone = Measured(1, 1);
  alone.subjects.pop_back();
  alone.subjects[0].ms = {2.0};
  const json one = BenchResultToJson(*MakeBenchResult(alone, 1, std::nullopt, std::nullopt));
  EXPECT_TRUE(one["reference"].is_null());
  EXPECT_TRUE(one["speedup"].is_null());
  EXPECT_TRUE(one["candidate"]["noise"].is_null()) << "one sample has no spread";
  EXPECT_TRUE(one["candidate"]["median_ci_ms"][0].is_null());
  EXPECT_EQ(one["candidate"]["median_ms"], 2.0);
}

TEST(BenchTableTest, AlignedRows) {
  BenchResult fast;
  fast.task = "level1/19_ReLU";
  fast.candidate.stats.count = 40;
  fast.candidate.stats.median = 0.012345;
  fast.candidate.stats.noise = 0.004;
  fast.reference = SubjectResult{};
  fast.reference->stats.median = 0.025;
  fast.speedup = {2.031, 1.981, 2.072, 0.95, 2000};
  fast.roofline = Roofline{};
  fast.roofline->achieved_gbps = 3012.14;
  fast.roofline->sol_pct = 72.34;
  BenchResult failed;
  failed.task = "level2/5_Conv";
  failed.status = common::VerdictStatus::kCompileError;
  failed.message = "kernel.cu(3): error: expected a \";\"";
  BenchResult lone;
  lone.task = "x";
  lone.candidate.stats.count = 1;
  lone.candidate.stats.median = 1.5;
  lone.candidate.stats.noise = kNaN;
  lone.speedup.ratio = kNaN;
  lone.flags = {"unconverged", "throttled"};
  std::ostringstream out;
  PrintTable(out, {fast, failed, lone});
  EXPECT_EQ(
      out.str(),
      "task            status                 candidate  reference             speedup    GB/s  %SOL  flags\n"
      "level1/19_ReLU  ok             12.345 us \u00b1 0.40%  25.000 us  2.03x [1.98, 2.07]  3012.1  72.3  "
      "-\n"
      "level2/5_Conv   compile_error                  -          -                   -       -     -  "
      "kernel.cu(3): error: expected a \";\"\n"
      "x               ok                      1.500 ms          -                   -       -     -  "
      "unconverged,throttled\n");
}

// `kforge bench --reference`: one subject named "reference" fills the reference slot.
TEST(BenchReportTest, ReferenceAlone) {
  Measurement m;
  m.subjects.push_back({std::string(kReferenceSubject), {0.5, 0.5, 0.5}, 0, 1, 0.0015});
  m.converged = true;
  DevicePeak peak;
  peak.dram_gbps = 1000;
  TaskCost cost{0, 250e6, common::DType::kFloat32};  // 250 MB at 1 TB/s: 0.25 ms
  auto r = MakeBenchResult(m, 1, cost, peak);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->candidate.stats.count, 0);
  ASSERT_TRUE(r->reference.has_value());
  EXPECT_DOUBLE_EQ(r->reference->stats.median, 0.5);
  ASSERT_TRUE(r->roofline.has_value());
  EXPECT_DOUBLE_EQ(r->roofline->sol_pct, 50.0);
  EXPECT_DOUBLE_EQ(r->roofline->reference_sol_pct, 50.0);
  EXPECT_TRUE(r->flags.empty()) << "a reference alone is never faster than light or implausible";
  const json j = BenchResultToJson(*r);
  EXPECT_TRUE(j["candidate"].is_null());
  EXPECT_TRUE(j["speedup"].is_null());
  EXPECT_EQ(j["reference"]["median_ms"], 0.5);
  std::ostringstream out;
  PrintTable(out, {*r});
  EXPECT_NE(out.str().find("500.000 us"), std::string::npos) << out.str();
}

TEST(BenchTableTest, DurationUnits) {
  const std::pair<double, const char*> cases[] = {
      {0.0000456, "45.6 ns"}, {0.25, "250.000 us"}, {12.5, "12.500 ms"}, {2500, "2.500 s"}};
  for (const auto& [ms, text] : cases) {
    BenchResult r;
    r.task = "t";
    r.candidate.stats.count = 1;
    r.candidate.stats.median = ms;
    r.candidate.stats.noise = kNaN;
    r.speedup.ratio = kNaN;
    std::ostringstream out;
    PrintTable(out, {r});
    EXPECT_NE(out.str().find(text), std::string::npos) << out.str();
  }
}

}  // namespace
}  // namespace kforge::bench
