// Bench records to and from JSON.
#include "kforge/common/bench_record.h"

#include <cmath>
#include <limits>
#include <utility>

#include "kforge/common/json_fields.h"
#include "kforge/common/library_ops.h"

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

/// Reads the fields of one object of a record. A missing key is noted in `absent` as a JSON pointer
/// and leaves its field as it was; the first field of the wrong type sets `status`.
class Fields {
 public:
  Fields(const json& object, std::string path, std::string pointer, std::vector<std::string>& absent,
         Status& status)
      : object_(object),
        path_(std::move(path)),
        pointer_(std::move(pointer)),
        absent_(absent),
        status_(status) {}

  /// A number; null reads as `if_null` (NaN for what the writer writes as null when unknown).
  void Number(std::string_view key, double& out, double if_null = kNaN) {
    const json* v = Find(key);
    if (!v) return;
    if (v->is_null()) {
      out = if_null;
    } else if (v->is_number()) {
      out = v->get<double>();
    } else {
      Fail(key, "expected a number or null");
    }
  }
  template <typename Int>
  void Integer(std::string_view key, Int& out) {
    const json* v = Find(key);
    if (!v) return;
    if (!v->is_number_integer()) return Fail(key, "expected an integer");
    out = v->get<Int>();
  }
  void Bool(std::string_view key, bool& out) {
    const json* v = Find(key);
    if (!v) return;
    if (!v->is_boolean()) return Fail(key, "expected a boolean");
    out = v->get<bool>();
  }
  void String(std::string_view key, std::string& out) {
    const json* v = Find(key);
    if (!v) return;
    if (!v->is_string()) return Fail(key, "expected a string");
    out = v->get<std::string>();
  }
  void Strings(std::string_view key, std::vector<std::string>& out) {
    const json* v = Find(key);
    if (!v) return;
    if (!v->is_array()) return Fail(key, "expected an array of strings");
    for (const json& item : *v) {
      if (!item.is_string()) return Fail(key, "expected an array of strings");
      out.push_back(item.get<std::string>());
    }
  }
  /// [lo, hi], each a number or null.
  void Interval(std::string_view key, double& lo, double& hi) {
    const json* v = Find(key);
    if (!v) return;
    if (!v->is_array() || v->size() != 2 || !((*v)[0].is_number() || (*v)[0].is_null()) ||
        !((*v)[1].is_number() || (*v)[1].is_null()))
      return Fail(key, "expected [low, high]");
    lo = (*v)[0].is_null() ? kNaN : (*v)[0].get<double>();
    hi = (*v)[1].is_null() ? kNaN : (*v)[1].get<double>();
  }
  void Raw(std::string_view key, json& out) {
    if (const json* v = Find(key)) out = *v;
  }
  /// The object under `key`: nullopt when it is null or absent.
  std::optional<Fields> Object(std::string_view key) {
    const json* v = Find(key);
    if (!v || v->is_null()) return std::nullopt;
    if (!v->is_object()) {
      Fail(key, "expected an object or null");
      return std::nullopt;
    }
    return Fields(*v, Path(key), pointer_ + "/" + std::string(key), absent_, status_);
  }
  void Fail(std::string_view key, const std::string& what) {
    if (status_.ok()) status_ = Status::InvalidArgument(Path(key) + ": " + what);
  }
  const json* Find(std::string_view key) {
    auto it = object_.find(key);
    if (it != object_.end()) return &*it;
    absent_.push_back(pointer_ + "/" + std::string(key));
    return nullptr;
  }

 private:
  std::string Path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  const json& object_;
  std::string path_;
  std::string pointer_;
  std::vector<std::string>& absent_;
  Status& status_;
};

SubjectResult ReadSubject(Fields& f) {
  SubjectResult r;
  SampleStats& s = r.stats;
  f.Integer("count", s.count);
  f.Number("median_ms", s.median);
  f.Number("p10_ms", s.p10);
  f.Number("p90_ms", s.p90);
  f.Number("mean_ms", s.mean);
  f.Number("min_ms", s.min);
  f.Number("max_ms", s.max);
  f.Number("noise", s.noise);
  f.Interval("median_ci_ms", s.median_lo, s.median_hi);
  f.Integer("throttled", r.throttled);
  f.Integer("batch", r.batch);
  const json* samples = f.Find("samples_ms");
  if (!samples) return r;
  if (!samples->is_array()) {
    f.Fail("samples_ms", "expected an array of numbers");
    return r;
  }
  for (const json& ms : *samples) r.samples_ms.push_back(ms.is_number() ? ms.get<double>() : kNaN);
  return r;
}

Roofline ReadRoofline(Fields& f) {
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
  j["device"] = r.device;
  if (ok && r.plan_split) {
    j[kPlanSplitKey] = PlanSplitToJson(*r.plan_split);
    j["library_ops"] = LibraryOpsShare(r.plan_split->ops_fraction);
  }
  for (const std::string& pointer : r.absent_keys) {
    const json::json_pointer key(pointer);
    const json::json_pointer parent = key.parent_pointer();
    if (j.contains(key) && j.at(parent).is_object()) j.at(parent).erase(key.back());
  }
  return j;
}

StatusOr<BenchResult> BenchResultFromJson(const json& json, const std::string& path) {
  if (!json.is_object()) return Status::InvalidArgument(path + ": expected an object");
  BenchResult r;
  Status status;
  Fields f(json, path, "", r.absent_keys, status);
  std::string schema(kBenchSchema);
  f.String("schema", schema);
  if (status.ok() && schema != kBenchSchema)
    f.Fail("schema", "expected \"" + std::string(kBenchSchema) + "\"");
  f.String("task", r.task);
  f.String("solution_hash", r.solution_hash);
  std::string name(VerdictStatusName(r.status));
  f.String("status", name);
  if (StatusOr<VerdictStatus> parsed = ParseVerdictStatus(name); parsed.ok()) {
    r.status = *parsed;
  } else {
    f.Fail("status", parsed.status().message());
  }
  f.String("message", r.message);
  name = kTimingModeNames.Name(r.mode);
  f.String("mode", name);
  if (std::optional<TimingMode> mode = kTimingModeNames.Parse(name)) {
    r.mode = *mode;
  } else {
    f.Fail("mode", "expected " + kTimingModeNames.Spellings());
  }
  f.Integer("seed", r.seed);
  f.Bool("converged", r.converged);
  f.Integer("rounds", r.rounds);
  f.Number("wall_seconds", r.wall_seconds);
  f.Number("sm_clock_mhz", r.sm_clock_mhz, 0);
  f.Number("max_sm_clock_mhz", r.max_sm_clock_mhz, 0);
  r.speedup.ratio = kNaN;
  if (std::optional<Fields> candidate = f.Object("candidate")) r.candidate = ReadSubject(*candidate);
  if (std::optional<Fields> reference = f.Object("reference")) r.reference = ReadSubject(*reference);
  if (std::optional<Fields> speedup = f.Object("speedup")) {
    speedup->Number("ratio", r.speedup.ratio);
    speedup->Interval("ci", r.speedup.lo, r.speedup.hi);
    speedup->Number("confidence", r.speedup.confidence);
    speedup->Integer("iterations", r.speedup.iterations);
  }
  if (std::optional<Fields> roofline = f.Object("roofline")) r.roofline = ReadRoofline(*roofline);
  f.Strings("flags", r.flags);
  f.Raw("device", r.device);
  if (const nlohmann::json* split = f.Find(kPlanSplitKey); split && status.ok()) {
    StatusOr<std::optional<PlanSplit>> read =
        PlanSplitFromJson(*split, path + "." + std::string(kPlanSplitKey));
    if (read.ok()) {
      r.plan_split = *read;
    } else {
      status = read.status();
    }
  }
  f.Find("library_ops");  // derived from plan_split; only its absence is kept
  if (!status.ok()) return status;
  return r;
}

}  // namespace kforge::common
