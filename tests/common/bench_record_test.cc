#include "kforge/common/bench_record.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kforge::common {
namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

SubjectResult Subject(double median, std::vector<double> samples) {
  SubjectResult s;
  s.stats = {static_cast<int>(samples.size()),
             median,
             median * 0.9,
             median * 1.1,
             median,
             median * 0.8,
             median * 1.2,
             0.013,
             median * 0.95,
             median * 1.05};
  s.samples_ms = std::move(samples);
  s.batch = 4;
  return s;
}

/// A record as bench makes it: every part set, a few figures unknown.
BenchResult Full() {
  BenchResult r;
  r.task = "kernelbench/level1/19_ReLU";
  r.solution_hash = "sha256:ab";
  r.mode = TimingMode::kHot;
  r.candidate = Subject(0.25, {0.25, 0.2500004, 0.26});
  r.reference = Subject(0.5, {0.5, 0.51});
  r.reference->stats.median_lo = kNaN;  // written as null
  r.speedup = {2.0, 1.9, kNaN, 0.95, 2000};
  r.roofline = Roofline{1e9, 8e6, 4000, 50, 0.02, 3000.5, 0, 75.0125, 0, 8.0, 4.0};
  r.flags = {"unconverged"};
  r.rounds = 12;
  r.wall_seconds = 1.25;
  r.sm_clock_mhz = 1980;
  r.max_sm_clock_mhz = 0;  // unknown: null
  r.seed = 18446744073709551615u;
  r.device = DeviceRecord{};
  r.device->name = "NVIDIA H200";
  r.plan_split = PlanSplit{0.75, 0.25, 0.25};
  return r;
}

TEST(BenchRecordTest, ARecordMadeNowRoundTripsByteForByte) {
  for (Samples samples : {Samples::kKept, Samples::kLeftOut}) {
    const std::string line = BenchResultToJson(Full(), samples).dump();
    auto back = BenchResultFromJson(json::parse(line), "bench");
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(BenchResultToJson(*back, samples).dump(), line);
    EXPECT_EQ(back->mode, TimingMode::kHot);
    EXPECT_EQ(back->seed, 18446744073709551615u);
    EXPECT_DOUBLE_EQ(back->speedup.lo, 1.9);
    EXPECT_TRUE(std::isnan(back->speedup.hi)) << "null reads as unknown";
    EXPECT_TRUE(std::isnan(back->reference->stats.median_lo));
    EXPECT_EQ(back->roofline->achieved_tflops, 0) << "a roofline figure written as null reads as 0, unknown";
    EXPECT_EQ(back->plan_split, (PlanSplit{0.75, 0.25, 0.25}));
    EXPECT_EQ(back->device->name, "NVIDIA H200");
  }
  const json kept = BenchResultToJson(Full(), Samples::kKept);
  EXPECT_EQ(kept["candidate"]["samples_ms"], json({0.25, 0.25, 0.26})) << "kept samples in 1 ns steps";
  EXPECT_EQ(kept["library_ops"], "some_time");
  EXPECT_FALSE(BenchResultToJson(Full(), Samples::kLeftOut)["candidate"].contains("samples_ms"));
}

// The torch.compile baseline travels with the record, and the speedup over it is derived, never read:
// none where the candidate's timing is suspect.
TEST(BenchRecordTest, TheTorchCompileBaselineRoundTripsAndGivesASpeedup) {
  BenchResult r = Full();
  r.torch_compile = TorchCompileBaseline{0.4, 0.5, 21.5, 30.25, 10, "default", "2.11.0", "NVIDIA H100"};
  const json written = BenchResultToJson(r);
  EXPECT_EQ(written["torch_compile"]["median_ms"], 0.4);
  EXPECT_EQ(written["torch_compile"]["compile_s"], 21.5);
  EXPECT_EQ(written["torch_compile"]["gpu"], "NVIDIA H100");
  EXPECT_DOUBLE_EQ(written["speedup_vs_torch_compile"].get<double>(), 0.4 / 0.25);
  auto back = BenchResultFromJson(written, "bench");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->torch_compile.has_value());
  EXPECT_EQ(back->torch_compile->took_seconds, 30.25);
  EXPECT_EQ(BenchResultToJson(*back).dump(), written.dump());

  r.flags.push_back("faster_than_light");
  EXPECT_FALSE(BenchResultToJson(r).contains("speedup_vs_torch_compile"));
  r.torch_compile->gpu = "";
  EXPECT_TRUE(BenchResultToJson(r)["torch_compile"]["gpu"].is_null()) << "measured on the CPU";
  EXPECT_FALSE(BenchResultToJson(Full()).contains("torch_compile"));
}

TEST(BenchRecordTest, AShortenedRecordIsWrittenBackWithItsKeysOnly) {
  for (
      const char* line :
      {R"({"roofline":{"sol_pct":null},"schema":"kforge.bench/1","status":"ok"})",
       R"({"flags":[],"library_ops":"some_time","plan_split":{"kernels_ms":0.75,"ops_fraction":0.25,"ops_ms":0.25},"roofline":{"sol_pct":42.5},"schema":"kforge.bench/1","status":"ok"})",
       R"({"speedup":{"ci":[1.2,null],"ratio":1.5}})", "{}"}) {
    auto read = BenchResultFromJson(json::parse(line), "bench");
    ASSERT_TRUE(read.ok()) << line << ": " << read.status().message();
    EXPECT_EQ(BenchResultToJson(*read).dump(), line);
  }
  auto read = BenchResultFromJson(json::parse(R"({"speedup":{"ci":[1.2,null],"ratio":1.5}})"), "bench");
  EXPECT_DOUBLE_EQ(read->speedup.ratio, 1.5);
  EXPECT_DOUBLE_EQ(read->speedup.lo, 1.2);
  EXPECT_EQ(read->status, VerdictStatus::kOk);
  read->absent_keys.clear();
  EXPECT_TRUE(BenchResultToJson(*read).contains("seed")) << "cleared: every key is written";
}

TEST(BenchRecordTest, UnknownKeysArePassedOverAndWrongTypesNamed) {
  EXPECT_TRUE(BenchResultFromJson({{"status", "ok"}, {"from_a_newer_kforge", 1}}, "b").ok());
  const std::pair<json, std::string> bad[] = {
      {{{"rounds", "many"}}, "t.attempts[1].bench.rounds: expected an integer, got string"},
      {{{"schema", "kforge.bench/2"}}, "t.attempts[1].bench.schema: expected \"kforge.bench/1\""},
      {{{"mode", "warm"}}, "t.attempts[1].bench.mode: \"warm\", expected cold or hot"},
      {{{"candidate", {{"median_ms", "fast"}}}},
       "t.attempts[1].bench.candidate.median_ms: expected a number or null"},
      {{{"speedup", {{"ci", {1.0}}}}}, "t.attempts[1].bench.speedup.ci: expected [low, high]"},
      {{{"roofline", 3}}, "t.attempts[1].bench.roofline: expected an object or null"},
      {{{"plan_split", {{"ops_ms", 1.0}}}}, "t.attempts[1].bench.plan_split.kernels_ms: expected a number"},
      {json::array(), "t.attempts[1].bench: expected an object"},
  };
  for (const auto& [record, message] : bad) {
    auto read = BenchResultFromJson(record, "t.attempts[1].bench");
    ASSERT_FALSE(read.ok()) << record.dump();
    EXPECT_EQ(read.status().message(), message);
  }
  EXPECT_NE(BenchResultFromJson({{"status", "great"}}, "b").status().message().find("b.status: "),
            std::string::npos);
}

}  // namespace
}  // namespace kforge::common
