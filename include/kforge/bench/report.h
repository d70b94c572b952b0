// Bench records (schema kforge.bench/1, docs/bench.md; the type and its JSON in common/bench_record.h):
// one per solution, built from a Measurement, printed as rows of a readable table.
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
#include "kforge/common/bench_record.h"
#include "kforge/common/plan_split.h"
#include "kforge/common/verdict.h"
#include "kforge/common/status.h"

namespace kforge::bench {

using common::BenchResult;
using common::BenchResultToJson;
using common::kBenchSchema;
using common::SubjectResult;

/// The subject name that marks a measurement of the reference alone (`kforge bench --reference`).
inline constexpr std::string_view kReferenceSubject = "reference";
/// A speedup above this is flagged implausible_speedup, and timed again before it is believed.
inline constexpr double kImplausibleSpeedup = 10.0;
/// The re-timing of an implausible speedup confirms it when it finds at least this share of it.
inline constexpr double kRecheckAgreement = 0.5;

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
/// "faster_than_light" (candidate median below the speed-of-light time), "timing_unconfirmed" (timed
/// again, `recheck_speedup` is below kRecheckAgreement of the speedup, or not a number), "unconverged", "throttled"
/// (any sample dropped), "mostly_library_ops" (library ops took more than common::kMostlyLibraryOps
/// of the candidate's GPU time). None for other statuses.
std::vector<std::string> BenchFlags(const BenchResult& result);

/// An aligned table, one row per result: task, status, candidate median ± noise, reference median,
/// speedup [CI], GB/s, %SOL (of the candidate), flags (or the message of a failed result).
void PrintTable(std::ostream& out, const std::vector<BenchResult>& results);

}  // namespace kforge::bench
