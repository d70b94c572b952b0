// Bench records to and from JSON.
#include "kforge/common/bench_record.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "kforge/common/library_ops.h"
#include "kforge/common/record_reader.h"

namespace kforge::common {
namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

json Num(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }
json Positive(double value) { return std::isfinite(value) && value > 0 ? json(value) : json(nullptr); }

json SubjectJson(const SubjectResult& r, Samples samples) {
  const SampleStats& s = r.stats;
  json out = {{"count", s.count},
              {"median_ms", Num(s.median)},
              {"p10_ms", Num(s.p10)},
              {"p90_ms", Num(s.p90)},
              {"mean_ms", Num(s.mean)},
              {"min_ms", Num(s.min)},
              {"max_ms", Num(s.max)},
              {"noise", Num(s.noise)},
              {"median_ci_ms", {Num(s.median_lo), Num(s.median_hi)}},
              {"throttled", r.throttled},
              {"batch", r.batch}};
  if (samples == Samples::kKept) {
    json kept = json::array();
    for (const double ms : r.samples_ms) kept.push_back(Num(std::round(ms * 1e6) / 1e6));  // 1 ns steps
    out["samples_ms"] = std::move(kept);
  }
  return out;
}

json RooflineJson(const Roofline& r) {
  return {{"flops", Positive(r.flops)},
          {"bytes", Positive(r.bytes)},
          {"peak_gbps", Positive(r.peak_gbps)},
          {"peak_tflops", Positive(r.peak_tflops)},
          {"sol_ms", Positive(r.sol_ms)},
          {"achieved_gbps", Positive(r.achieved_gbps)},
          {"achieved_tflops", Positive(r.achieved_tflops)},
          {"bandwidth_pct", Positive(r.bandwidth_pct)},
          {"flops_pct", Positive(r.flops_pct)},
          {"sol_pct", Positive(r.sol_pct)},
          {"reference_sol_pct", Positive(r.reference_sol_pct)}};
}

SubjectResult ReadSubject(RecordReader& f) {
  SubjectResult r;
  SampleStats& s = r.stats;
  f.Get("count", s.count);
  for (auto [key, out] :
       {std::pair{"median_ms", &s.median}, std::pair{"p10_ms", &s.p10}, std::pair{"p90_ms", &s.p90},
        std::pair{"mean_ms", &s.mean}, std::pair{"min_ms", &s.min}, std::pair{"max_ms", &s.max},
        std::pair{"noise", &s.noise}})
    f.Number(key, *out, kNaN);
  f.Interval("median_ci_ms", s.median_lo, s.median_hi, kNaN);
  f.Get("throttled", r.throttled);
  f.Get("batch", r.batch);
  if (const json* samples = f.Array("samples_ms"))
    for (const json& ms : *samples) r.samples_ms.push_back(ms.is_number() ? ms.get<double>() : kNaN);
  return r;
}

Roofline ReadRoofline(RecordReader& f) {
  Roofline r;
  const std::pair<const char*, double*> fields[] = {{"flops", &r.flops},
                                                    {"bytes", &r.bytes},
                                                    {"peak_gbps", &r.peak_gbps},
                                                    {"peak_tflops", &r.peak_tflops},
                                                    {"sol_ms", &r.sol_ms},
                                                    {"achieved_gbps", &r.achieved_gbps},
                                                    {"achieved_tflops", &r.achieved_tflops},
                                                    {"bandwidth_pct", &r.bandwidth_pct},
                                                    {"flops_pct", &r.flops_pct},
                                                    {"sol_pct", &r.sol_pct},
                                                    {"reference_sol_pct", &r.reference_sol_pct}};
  for (auto [key, out] : fields) f.Number(key, *out, 0);  // the writer writes 0 (unknown) as null
  return r;
}

}  // namespace

json BenchResultToJson(const BenchResult& r, Samples samples) {
  const bool ok = r.status == VerdictStatus::kOk;
  json j = json::object();
  j["schema"] = kBenchSchema;
  j["task"] = r.task;
  j["solution_hash"] = r.solution_hash;
  j["status"] = VerdictStatusName(r.status);
  j["message"] = r.message;
  j["mode"] = kTimingModeNames.Name(r.mode);
  j["seed"] = r.seed;
  j["converged"] = r.converged;
  j["rounds"] = r.rounds;
  j["wall_seconds"] = Num(r.wall_seconds);
  j["sm_clock_mhz"] = Positive(r.sm_clock_mhz);
  j["max_sm_clock_mhz"] = Positive(r.max_sm_clock_mhz);
  j["candidate"] = ok && r.candidate.stats.count > 0 ? SubjectJson(r.candidate, samples) : json(nullptr);
  j["reference"] = ok && r.reference ? SubjectJson(*r.reference, samples) : json(nullptr);
  j["speedup"] = ok && std::isfinite(r.speedup.ratio) ? json{{"ratio", r.speedup.ratio},
                                                             {"ci", {Num(r.speedup.lo), Num(r.speedup.hi)}},
                                                             {"confidence", r.speedup.confidence},
                                                             {"iterations", r.speedup.iterations}}
                                                      : json(nullptr);
  j["roofline"] = ok && r.roofline ? RooflineJson(*r.roofline) : json(nullptr);
  j["flags"] = r.flags;
  j["device"] = DeviceRecordToJson(r.device);
  if (ok && r.input_draws > 0) j["input_draws"] = r.input_draws;
  if (ok && r.recheck_speedup) j["recheck_speedup"] = Num(*r.recheck_speedup);
  if (r.torch_compile) {
    const TorchCompileBaseline& t = *r.torch_compile;
    j["torch_compile"] = {{"median_ms", Num(t.median_ms)},         {"eager_median_ms", Num(t.eager_median_ms)},
                          {"compile_s", Num(t.compile_seconds)},   {"took_s", Num(t.took_seconds)},
                          {"samples", t.samples},                  {"mode", t.mode},
                          {"torch", t.torch},                      {"gpu", t.gpu.empty() ? json(nullptr) : json(t.gpu)}};
    const double candidate_ms = r.candidate.stats.median;
    if (ok && r.candidate.stats.count > 0 && candidate_ms > 0 && SuspectTiming(r).empty())
      j["speedup_vs_torch_compile"] = Num(t.median_ms / candidate_ms);
  }
  if (ok && r.plan_split) {
    j[kPlanSplitKey] = PlanSplitToJson(*r.plan_split);
    j["library_ops"] = LibraryOpsShare(r.plan_split->ops_fraction);
  }
  EraseAbsentKeys(j, r.absent_keys);
  return j;
}

StatusOr<BenchResult> BenchResultFromJson(const json& json, const std::string& path) {
  BenchResult r;
  Status status;
  RecordReader f(json, path, status, &r.absent_keys);
  std::string schema(kBenchSchema);
  f.Get("schema", schema);
  if (schema != kBenchSchema) f.Fail("schema", "expected \"" + std::string(kBenchSchema) + "\"");
  f.Get("task", r.task);
  f.Get("solution_hash", r.solution_hash);
  f.Name("status", kVerdictStatusNames, r.status);
  f.Get("message", r.message);
  f.Name("mode", kTimingModeNames, r.mode);
  f.Get("seed", r.seed);
  f.Get("converged", r.converged);
  f.Get("rounds", r.rounds);
  f.Number("wall_seconds", r.wall_seconds, kNaN);
  f.Number("sm_clock_mhz", r.sm_clock_mhz, 0);  // the writer writes 0 (unknown) as null
  f.Number("max_sm_clock_mhz", r.max_sm_clock_mhz, 0);
  r.speedup.ratio = kNaN;
  if (std::optional<RecordReader> candidate = f.Object("candidate")) r.candidate = ReadSubject(*candidate);
  if (std::optional<RecordReader> reference = f.Object("reference")) r.reference = ReadSubject(*reference);
  if (std::optional<RecordReader> speedup = f.Object("speedup")) {
    speedup->Number("ratio", r.speedup.ratio, kNaN);
    speedup->Interval("ci", r.speedup.lo, r.speedup.hi, kNaN);
    speedup->Get("confidence", r.speedup.confidence);
    speedup->Get("iterations", r.speedup.iterations);
  }
  if (std::optional<RecordReader> roofline = f.Object("roofline")) r.roofline = ReadRoofline(*roofline);
  f.Get("flags", r.flags);
  if (const nlohmann::json* device = f.Find("device")) {
    StatusOr<DeviceRecord> read = DeviceRecordFromJson(*device, f.Path("device"));
    if (read.ok()) {
      r.device = std::move(*read);
    } else if (status.ok()) {
      status = read.status();
    }
  }
  f.Get("input_draws", r.input_draws);
  if (f.Find("recheck_speedup")) {
    double recheck = kNaN;
    f.Number("recheck_speedup", recheck, kNaN);
    r.recheck_speedup = recheck;
  }
  if (std::optional<RecordReader> compiled = f.Object("torch_compile")) {
    TorchCompileBaseline& t = r.torch_compile.emplace();
    compiled->Number("median_ms", t.median_ms, kNaN);
    compiled->Number("eager_median_ms", t.eager_median_ms, kNaN);
    compiled->Number("compile_s", t.compile_seconds, kNaN);
    compiled->Number("took_s", t.took_seconds, kNaN);
    compiled->Get("samples", t.samples);
    compiled->Get("mode", t.mode);
    compiled->Get("torch", t.torch);
    compiled->Get("gpu", t.gpu);
  }
  f.Find("speedup_vs_torch_compile");  // derived from torch_compile and the candidate
  if (const nlohmann::json* split = f.Find(kPlanSplitKey)) {
    StatusOr<std::optional<PlanSplit>> read = PlanSplitFromJson(*split, f.Path(kPlanSplitKey));
    if (read.ok()) {
      r.plan_split = *read;
    } else if (status.ok()) {
      status = read.status();
    }
  }
  f.Find("library_ops");  // derived from plan_split; only its absence is kept
  if (!status.ok()) return status;
  return r;
}

std::string_view SuspectTiming(const BenchResult& result) {
  for (std::string_view flag : kSuspectTimingFlags)
    if (std::find(result.flags.begin(), result.flags.end(), flag) != result.flags.end()) return flag;
  return {};
}

}  // namespace kforge::common
