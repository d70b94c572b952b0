// The sampling loop's decisions (clock probe arithmetic, throttling, stopping, batch sizing), its
// option checks, and the probe's PTX, all without a GPU.
#include "bench/sampling.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "bench/clock_probe.h"
#include "kforge/bench/measure.h"

namespace kforge::bench::internal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(BenchSamplingTest, ProbeClock) {
  EXPECT_DOUBLE_EQ(ProbeClockMhz(39'600, 20'000), 1980);
  EXPECT_DOUBLE_EQ(ProbeClockMhz(20'000, 20'000), 1000);
  EXPECT_TRUE(std::isnan(ProbeClockMhz(1000, 0)));
}

TEST(BenchSamplingTest, ThrottleClassifier) {
  struct Case {
    double mhz, max_mhz, threshold;
    bool throttled;
  };
  const Case cases[] = {
      {1400, 1980, 0.75, true},   // below 1485
      {1485, 1980, 0.75, false},  // exactly at the threshold
      {1500, 1980, 0.75, false}, {1980, 1980, 0.75, false},
      {1900, 1980, 0.99, true},  {100, 0, 0.75, false},  // maximum unknown
      {100, 1980, 0, false},                             // detection off
      {kNaN, 1980, 0.75, false},                         // no reading
  };
  for (const Case& c : cases) {
    EXPECT_EQ(IsThrottled(c.mhz, c.max_mhz, c.threshold), c.throttled)
        << c.mhz << " MHz of " << c.max_mhz << " at " << c.threshold;
  }
}

TEST(BenchSamplingTest, RelativeHalfWidth) {
  SampleStats s;
  s.median = 2;
  s.median_lo = 1.9;
  s.median_hi = 2.3;
  EXPECT_DOUBLE_EQ(RelativeHalfWidth(s), 0.1);
  s.median_lo = kNaN;
  EXPECT_TRUE(std::isinf(RelativeHalfWidth(s)));
}

SubjectSamples Samples(int n, double ms, double spread) {
  SubjectSamples s;
  for (int i = 0; i < n; ++i) s.ms.push_back(ms * (1 + spread * ((i % 5) - 2) / 2));
  for (const double v : s.ms) s.gpu_seconds += v / 1000;
  return s;
}

TEST(BenchSamplingTest, StopRule) {
  MeasureOptions o;  // max_noise 0.005, min_samples 10, max_samples 2000, min_seconds 0.05, max_seconds 10
  const SubjectSamples precise = Samples(100, 1.0, 0.001);  // 0.1 s of GPU time
  const SubjectSamples noisy = Samples(100, 1.0, 0.2);
  struct Case {
    const char* name;
    std::vector<SubjectSamples> subjects;
    int rounds;
    double wall;
    StopDecision want;
  };
  const Case cases[] = {
      {"precise after the minimums", {precise, precise}, 100, 1, StopDecision::kConverged},
      {"one subject noisy", {precise, noisy}, 100, 1, StopDecision::kContinue},
      {"too few samples", {Samples(8, 1.0, 0), precise}, 100, 1, StopDecision::kContinue},
      {"too little GPU time", {Samples(20, 0.001, 0.001)}, 20, 1, StopDecision::kContinue},
      {"GPU time summed over subjects",
       {Samples(30, 1.0, 0.001), Samples(30, 1.0, 0.001)},
       30,
       1,
       StopDecision::kConverged},
      {"max_samples, noisy", {precise, noisy}, 2000, 1, StopDecision::kUnconverged},
      {"max_seconds, noisy", {precise, noisy}, 100, 10, StopDecision::kUnconverged},
      {"max_samples, precise but short", {Samples(20, 0.001, 0.001)}, 2000, 1, StopDecision::kConverged},
      {"everything dropped", {SubjectSamples{}}, 2000, 1, StopDecision::kUnconverged},
  };
  for (const Case& c : cases) EXPECT_EQ(DecideStop(o, c.subjects, c.rounds, c.wall), c.want) << c.name;
}

TEST(BenchSamplingTest, HotBatch) {
  EXPECT_EQ(HotBatch(0.001), 500);
  EXPECT_EQ(HotBatch(0.3), 2);
  EXPECT_EQ(HotBatch(0.5), 1);
  EXPECT_EQ(HotBatch(20), 1);
  EXPECT_EQ(HotBatch(1e-6), kMaxHotBatch);
  EXPECT_EQ(HotBatch(0), kMaxHotBatch);
}

TEST(BenchSamplingTest, LeadIn) {
  EXPECT_EQ(LeadInNs(0, 1), kMinLeadInNs);
  EXPECT_EQ(LeadInNs(5e-6, 100), 645'000u);
  EXPECT_EQ(LeadInNs(1.0, 10), kMaxLeadInNs);
}

TEST(BenchSamplingTest, OptionChecks) {
  EXPECT_TRUE(ValidateMeasureOptions(MeasureOptions{}).ok());
  const auto bad = [](auto change) {
    MeasureOptions o;
    change(o);
    return ValidateMeasureOptions(o).code() == Status::Code::kInvalidArgument;
  };
  EXPECT_TRUE(bad([](MeasureOptions& o) { o.min_samples = 0; }));
  EXPECT_TRUE(bad([](MeasureOptions& o) { o.max_samples = 5; }));
  EXPECT_TRUE(bad([](MeasureOptions& o) { o.max_noise = -1; }));
  EXPECT_TRUE(bad([](MeasureOptions& o) { o.min_seconds = kNaN; }));
  EXPECT_TRUE(bad([](MeasureOptions& o) { o.max_seconds = 0; }));
  EXPECT_TRUE(bad([](MeasureOptions& o) { o.warmup_runs = -1; }));
  EXPECT_TRUE(bad([](MeasureOptions& o) { o.warmup_seconds = -0.5; }));
  EXPECT_TRUE(bad([](MeasureOptions& o) { o.throttle_threshold = 1.5; }));
}

// Bad arguments are refused before any CUDA call, so this runs without a GPU.
TEST(BenchSamplingTest, MeasureRefusesBadArguments) {
  std::vector<Subject> none;
  auto empty = Measure(none, MeasureOptions{}, nullptr);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), Status::Code::kInvalidArgument);
  std::vector<Subject> no_run = {Subject{"candidate", nullptr, nullptr, nullptr}};
  auto missing = Measure(no_run, MeasureOptions{}, nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("(\"candidate\") has no run function"), std::string::npos)
      << missing.status().ToString();
}

TEST(BenchSamplingTest, ModeNames) {
  EXPECT_EQ(common::kTimingModeNames.Name(Mode::kCold), "cold");
  EXPECT_EQ(common::kTimingModeNames.Name(Mode::kHot), "hot");
  EXPECT_EQ(common::kTimingModeNames.Parse("hot"), Mode::kHot);
  EXPECT_EQ(common::kTimingModeNames.Parse("cold"), Mode::kCold);
  EXPECT_EQ(common::kTimingModeNames.Parse("warm"), std::nullopt);
}

// The probe's PTX must assemble; ptxas from the CUDA toolkit checks it without a GPU.
TEST(BenchClockProbeTest, PtxAssembles) {
  namespace fs = std::filesystem;
  const fs::path include = KFORGE_CUDA_INCLUDE_DIR;
  fs::path ptxas;
  for (const fs::path& candidate :
       {include / ".." / "bin" / "ptxas", include / ".." / ".." / ".." / "bin" / "ptxas"}) {
    if (fs::exists(candidate)) ptxas = candidate;
  }
  if (ptxas.empty()) GTEST_SKIP() << "no ptxas next to " << include;
  const fs::path dir = fs::temp_directory_path() / ("kforge_probe_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "probe.ptx") << ClockProbePtx();
  for (const char* arch : {"sm_90a", "sm_80"}) {
    const std::string command = ptxas.string() + " -arch=" + arch + " " + (dir / "probe.ptx").string() +
                                " -o " + (dir / "probe.cubin").string() + " > " + (dir / "log").string() +
                                " 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << arch << ": " << std::ifstream(dir / "log").rdbuf();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kforge::bench::internal
