// The bench record (schema kforge.bench/1, docs/bench.md) as a type: what timing a candidate against
// its reference found. bench makes it; generate keeps it in a trajectory's attempts; export, report and
// skills read it there. This file is its one writer and its one reader.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/names.h"
#include "kforge/common/plan_split.h"
#include "kforge/common/status.h"
#include "kforge/common/verdict.h"
#include "kforge/common/verdict_parts.h"

namespace kforge::common {

inline constexpr std::string_view kBenchSchema = "kforge.bench/1";

/// How samples are taken.
enum class TimingMode {
  kCold,  ///< the L2 cache is flushed before each sample; one run per sample
  kHot,   ///< one sample is a batch of back-to-back runs, timed as one
};
inline constexpr NameTable<TimingMode, 2> kTimingModeNames = {
    {{TimingMode::kCold, "cold"}, {TimingMode::kHot, "hot"}}};
static_assert(kTimingModeNames.MatchesEnum());

/// Summary of one subject's samples, in the samples' unit (milliseconds throughout kforge).
/// Quantities that the samples do not determine are NaN.
struct SampleStats {
  int count = 0;
  double median = 0;
  double p10 = 0;  ///< Percentiles interpolate linearly between order statistics (numpy's default).
  double p90 = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
  /// Relative standard deviation: sample standard deviation (n - 1) / mean, as nvbench reports it.
  /// NaN below two samples.
  double noise = 0;
  /// Distribution-free 95% confidence interval of the median: the order statistics x(j) and
  /// x(n + 1 - j) for the largest j whose binomial coverage is at least 95%. NaN below six samples,
  /// where no such pair exists.
  double median_lo = 0;
  double median_hi = 0;
};

/// The speedup of a candidate over a reference, with a percentile bootstrap interval.
struct SpeedupEstimate {
  double ratio = 0;  ///< median(reference) / median(candidate); NaN when either set is empty.
  double lo = 0;     ///< Bootstrap interval at `confidence`; NaN when it cannot be computed.
  double hi = 0;
  double confidence = 0;
  int iterations = 0;
};

/// A kernel's timing against the device's peaks. Figures that cannot be computed (no cost formula,
/// unknown peak) are 0.
struct Roofline {
  double flops = 0;
  double bytes = 0;
  double peak_gbps = 0;    ///< The device's achievable DRAM bandwidth.
  double peak_tflops = 0;  ///< The FLOP peak for the cost's dtype.
  /// Speed of light: the longer of bytes / peak bandwidth and flops / peak FLOP rate, in ms.
  double sol_ms = 0;
  double achieved_gbps = 0;
  double achieved_tflops = 0;
  double bandwidth_pct = 0;  ///< achieved_gbps / peak_gbps x 100.
  double flops_pct = 0;      ///< achieved_tflops / peak_tflops x 100.
  double sol_pct = 0;        ///< sol_ms / the kernel's time x 100 (above 100: faster than light).
  /// sol_ms / the reference's time x 100, when the reference was timed with it: how much room the
  /// reference left (a speedup over one at 95% is not one over one at 5%).
  double reference_sol_pct = 0;
};

/// One subject's part of a record.
struct SubjectResult {
  SampleStats stats;               ///< Over the kept samples, in ms.
  std::vector<double> samples_ms;  ///< Kept samples in the order taken.
  int throttled = 0;               ///< Samples dropped for a throttled SM clock.
  int batch = 1;                   ///< Runs per sample (hot mode batches).
};

/// The task's reference program compiled with torch.compile and timed in Python (bench::
/// TorchCompileBaselines), beside the same program run eagerly there: what a kernel is compared with
/// when it is compared with the compiler people already have.
struct TorchCompileBaseline {
  double median_ms = 0;        ///< The compiled program, cold, median.
  double eager_median_ms = 0;  ///< The same program without torch.compile, in the same harness.
  double compile_seconds = 0;  ///< The compiled program's first call (tracing, code generation, a run).
  double took_seconds = 0;     ///< The whole measurement, Python's start included.
  int samples = 0;
  std::string mode;   ///< torch.compile's mode ("default", "max-autotune", ...).
  std::string torch;  ///< torch.__version__.
  std::string gpu;    ///< The device's name; empty on the CPU.
};

struct BenchResult {
  std::string task;
  std::string solution_hash;
  /// kOk when measured, else the verdict status that stopped it, and no timing.
  VerdictStatus status = VerdictStatus::kOk;
  std::string message;  ///< One line; empty when ok.
  TimingMode mode = TimingMode::kCold;
  SubjectResult candidate;
  std::optional<SubjectResult> reference;  ///< Absent when only the candidate was timed.
  SpeedupEstimate speedup;                 ///< reference / candidate; NaN without a reference.
  std::optional<Roofline> roofline;        ///< Of the candidate; absent without a task cost or peak.
  /// bench::BenchFlags of the other fields.
  std::vector<std::string> flags;
  bool converged = false;
  int rounds = 0;
  double wall_seconds = 0;
  double sm_clock_mhz = 0;      ///< Median probe reading.
  double max_sm_clock_mhz = 0;  ///< The device's maximum.
  uint64_t seed = 0;            ///< Seeds the bootstrap (and, for the caller, the inputs).
  std::optional<DeviceRecord> device;  ///< The device and its peaks; null if none.
  /// Of a candidate whose plan has library ops; absent otherwise.
  std::optional<PlanSplit> plan_split;
  /// Distinct input draws the candidate's timed runs rotated over, each run checked against its own
  /// draw's expected outputs (fewer when they do not fit in device memory); 0 when unknown (the
  /// reference alone, or a record written before the field), and then not written.
  int input_draws = 0;
  /// The speedup of a second measurement of an implausible speedup (fresh input draws, the other timing
  /// mode: bench's re-timing); none when it was not timed again.
  std::optional<double> recheck_speedup;
  /// The torch.compile baseline of the task, when it was measured (bench --torch-compile).
  std::optional<TorchCompileBaseline> torch_compile;
  /// The keys, as JSON pointers ("/roofline/flops"), of the record BenchResultFromJson read that it did
  /// not hold (a record written before a key existed, or a shortened one): BenchResultToJson leaves them
  /// out again, so a record read back and written keeps its bytes. Empty for a record made now.
  std::vector<std::string> absent_keys;
};

/// The bench flags under which a record's speedup is not believed: `faster_than_light` (the candidate's
/// median is below the task's speed-of-light time) and `timing_unconfirmed` (an implausible speedup
/// that a second measurement, on fresh draws and with the other timing mode, did not confirm). Nothing counts the
/// speedup of such a record: not generate's target, not report's fast_p, geomean or %SOL, not export.
inline constexpr std::string_view kSuspectTimingFlags[] = {"faster_than_light", "timing_unconfirmed"};

/// The first of kSuspectTimingFlags that `result` carries; empty when its timing is believed.
std::string_view SuspectTiming(const BenchResult& result);

/// Whether a record keeps each subject's samples. A trajectory keeps only their statistics.
enum class Samples { kKept, kLeftOut };

/// The record: schema, task, solution_hash, status, message, mode, seed, converged, rounds,
/// wall_seconds, sm_clock_mhz, max_sm_clock_mhz, candidate, reference, speedup, roofline, flags,
/// device, input_draws when known, recheck_speedup when timed again, torch_compile (with
/// speedup_vs_torch_compile when the candidate was timed) when measured, and plan_split with library_ops when the candidate's plan has
/// library ops (absent otherwise). Times are in ms; what is unknown or absent is null.
nlohmann::json BenchResultToJson(const BenchResult& result, Samples samples = Samples::kKept);

/// The inverse of BenchResultToJson. Every key may be absent (see absent_keys), keys it does not know
/// are passed over; a key of the wrong type is an error naming `path` ("attempts[1].bench.rounds").
StatusOr<BenchResult> BenchResultFromJson(const nlohmann::json& json, const std::string& path);

}  // namespace kforge::common
