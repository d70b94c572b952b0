// Bench records (schema kforge.bench/1, docs/bench.md): one per solution, built from a
// Measurement, written as JSON or as rows of a readable table.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/bench/measure.h"
#include "kforge/bench/peak.h"
#include "kforge/bench/stats.h"
#include "kforge/common/plan_split.h"
#include "kforge/common/verdict.h"
#include "kforge/common/status.h"

namespace kforge::bench {

inline constexpr std::string_view kBenchSchema = "kforge.bench/1";
/// The subject name that marks a measurement of the reference alone (`kforge bench --reference`).
inline constexpr std::string_view kReferenceSubject = "reference";
/// A speedup above this is flagged implausible_speedup.
inline constexpr double kImplausibleSpeedup = 10.0;

/// One subject's part of a record.
struct SubjectResult {
  SampleStats stats;               ///< Over the kept samples, in ms.
  std::vector<double> samples_ms;  ///< Kept samples in the order taken.
  int throttled = 0;               ///< Samples dropped for a throttled SM clock.
  int batch = 1;                   ///< Runs per sample (hot mode batches).
};

struct BenchResult {
  std::string task;
  std::string solution_hash;
  /// kOk when measured, else the verdict status that stopped it, and no timing.
  common::VerdictStatus status = common::VerdictStatus::kOk;
  std::string message;  ///< One line; empty when ok.
  Mode mode = Mode::kCold;
  SubjectResult candidate;
  std::optional<SubjectResult> reference;  ///< Absent when only the candidate was timed.
  SpeedupEstimate speedup;                 ///< reference / candidate; NaN without a reference.
  std::optional<Roofline> roofline;        ///< Of the candidate; absent without a task cost or peak.
  /// BenchFlags of the other fields (MakeBenchResult sets it).
  std::vector<std::string> flags;
  bool converged = false;
  int rounds = 0;
  double wall_seconds = 0;
  double sm_clock_mhz = 0;      ///< Median probe reading.
  double max_sm_clock_mhz = 0;  ///< The device's maximum.
  uint64_t seed = 0;            ///< Seeds the bootstrap (and, for the caller, the inputs).
  nlohmann::json device;        ///< The device and its peaks, as the caller describes them; null if none.
  /// Of a candidate whose plan has library ops (the worker's BenchReply::plan_split); absent otherwise.
  std::optional<common::PlanSplit> plan_split;
};

/// A record with status "ok" from a measurement whose subjects are the candidate and, optionally,
/// the reference, in that order, or the reference alone (one subject named kReferenceSubject: then
/// the record has no candidate or speedup, and the roofline is the reference's): their statistics, the
/// bootstrap speedup seeded by `seed`, the candidate's roofline when both `cost` and `peak` are given, and
/// the flags. The caller fills in task, solution_hash and device. InvalidArgument unless there are one or two
/// subjects.
StatusOr<BenchResult> MakeBenchResult(const Measurement& measurement, uint64_t seed,
                                      const std::optional<TaskCost>& cost,
                                      const std::optional<DevicePeak>& peak);

/// For an "ok" record, in this order: "implausible_speedup" (speedup above kImplausibleSpeedup),
/// "faster_than_light" (candidate median below the speed-of-light time), "unconverged", "throttled"
/// (any sample dropped), "mostly_library_ops" (library ops took more than common::kMostlyLibraryOps
/// of the candidate's GPU time). None for other statuses.
std::vector<std::string> BenchFlags(const BenchResult& result);

/// The record: schema, task, solution_hash, status, message, mode, seed, converged, rounds,
/// wall_seconds, sm_clock_mhz, max_sm_clock_mhz, candidate, reference, speedup, roofline, flags,
/// device, and plan_split with library_ops when the candidate's plan has library ops (absent
/// otherwise). Times are in ms; what is unknown or absent is null.
nlohmann::json BenchResultToJson(const BenchResult& result);

/// An aligned table, one row per result: task, status, candidate median ± noise, reference median,
/// speedup [CI], GB/s, %SOL (of the candidate), flags (or the message of a failed result).
void PrintTable(std::ostream& out, const std::vector<BenchResult>& results);

}  // namespace kforge::bench
