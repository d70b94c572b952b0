// The verdict's parts to and from JSON.
#include "kforge/common/verdict_parts.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "kforge/common/record_reader.h"

namespace kforge::common {
namespace {

using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();

/// An error the worker could not bound is written "inf".
json ErrorJson(double value) { return std::isfinite(value) ? json(value) : json("inf"); }
json KnownOrNull(double value) { return value > 0 ? json(value) : json(nullptr); }

void ReadError(RecordReader& f, const char* key, double& out) {
  const json* value = f.Find(key);
  if (!value) return;
  if (value->is_string() && value->get<std::string>() == "inf") {
    out = kInf;
  } else if (value->is_number()) {
    out = value->get<double>();
  } else {
    f.Fail(key, "expected a number or \"inf\"");
  }
}

/// A non-negative integer, however the JSON holds it (seeds can exceed int64).
void ReadUnsigned(RecordReader& f, const char* key, uint64_t& out) {
  const json* value = f.Find(key);
  if (!value) return;
  if (value->is_number_unsigned() || (value->is_number_integer() && value->get<int64_t>() >= 0)) {
    out = value->get<uint64_t>();
  } else {
    f.Fail(key, "expected a non-negative integer");
  }
}

KernelStats ReadKernel(RecordReader& f) {
  KernelStats k;
  f.Get("registers", k.registers);
  f.Get("spill_store_bytes", k.spill_store_bytes);
  f.Get("spill_load_bytes", k.spill_load_bytes);
  f.Get("stack_bytes", k.stack_bytes);
  f.Get("shared_bytes", k.shared_bytes);
  return k;
}

OutputComparison ReadOutput(RecordReader& f) {
  OutputComparison o;
  f.Get("name", o.name);
  ReadError(f, "max_abs_err", o.max_abs_err);
  ReadError(f, "max_rel_err", o.max_rel_err);
  ReadError(f, "rel_l2_err", o.rel_l2_err);
  f.Get("mismatches", o.mismatches);
  f.Get("numel", o.numel);
  f.Get("first_mismatch", o.first_mismatch);
  return o;
}

json OutputJson(const OutputComparison& o) {
  return {{"name", o.name},
          {"max_abs_err", ErrorJson(o.max_abs_err)},
          {"max_rel_err", ErrorJson(o.max_rel_err)},
          {"rel_l2_err", ErrorJson(o.rel_l2_err)},
          {"mismatches", o.mismatches},
          {"numel", o.numel},
          {"first_mismatch", o.first_mismatch ? json(*o.first_mismatch) : json(nullptr)}};
}

void ReadPeak(RecordReader& f, DevicePeak& peak) {
  f.Get("device", peak.device);
  f.Get("uuid", peak.uuid);
  double driver = 0, sm_count = 0, copy_bytes = 0;
  f.Number("driver_version", driver, 0);
  f.Number("sm_count", sm_count, 0);
  f.Number("copy_bytes", copy_bytes, 0);
  peak.driver_version = static_cast<int>(driver);
  peak.sm_count = static_cast<int>(sm_count);
  peak.copy_bytes = static_cast<uint64_t>(copy_bytes);
  std::string cc;
  f.Get("cc", cc);
  if (size_t dot = cc.find('.'); dot != std::string::npos) {
    peak.cc_major = std::atoi(cc.substr(0, dot).c_str());
    peak.cc_minor = std::atoi(cc.substr(dot + 1).c_str());
  }
  for (auto [key, out] :
       {std::pair{"sm_clock_mhz", &peak.sm_clock_mhz}, std::pair{"dram_gbps", &peak.dram_gbps},
        std::pair{"fp32_tflops", &peak.fp32_tflops}, std::pair{"fp16_tflops", &peak.fp16_tflops},
        std::pair{"bf16_tflops", &peak.bf16_tflops}, std::pair{"tf32_tflops", &peak.tf32_tflops}})
    f.Number(key, *out, 0);
}

void ReadDevice(RecordReader& f, DeviceRecord& d) {
  f.Get("index", d.index);
  f.Get("name", d.name);
  f.Get("cc", d.cc);
  f.Get("sm_count", d.sm_count);
  ReadUnsigned(f, "memory_bytes", d.memory_bytes);
  f.Get("l2_bytes", d.l2_bytes);
  if (std::optional<RecordReader> peak = f.Object("peak")) ReadPeak(*peak, d.peak.emplace());
}

}  // namespace

bool HasKey(const std::vector<std::string>& pointers, std::string_view key) {
  for (const std::string& pointer : pointers)
    if (pointer.size() == key.size() + 1 && pointer[0] == '/' &&
        pointer.compare(1, std::string::npos, key) == 0)
      return false;
  return true;
}

void EraseAbsentKeys(json& j, const std::vector<std::string>& pointers) {
  for (const std::string& pointer : pointers) {
    const json::json_pointer key(pointer);
    const json::json_pointer parent = key.parent_pointer();
    if (j.contains(key) && j.at(parent).is_object()) j.at(parent).erase(key.back());
  }
}

json KernelStatsToJson(const std::map<std::string, KernelStats>& kernels) {
  json out = json::object();
  for (const auto& [name, k] : kernels) {
    out[name] = {{"registers", k.registers},
                 {"spill_store_bytes", k.spill_store_bytes},
                 {"spill_load_bytes", k.spill_load_bytes},
                 {"stack_bytes", k.stack_bytes},
                 {"shared_bytes", k.shared_bytes}};
  }
  return out;
}

json CompileFactsToJson(const CompileFacts& c) {
  json out = {{"ms", c.ms},
              {"cached", c.cached},
              {"log", c.log},
              {"arch", c.arch},
              {"kernels", KernelStatsToJson(c.kernels)},
              {"warnings", c.warnings}};
  EraseAbsentKeys(out, c.absent_keys);
  return out;
}

StatusOr<CompileFacts> CompileFactsFromJson(const json& json, const std::string& path) {
  CompileFacts c;
  Status status;
  RecordReader f(json, path, status, &c.absent_keys);
  f.Get("ms", c.ms);
  f.Get("cached", c.cached);
  f.Get("log", c.log);
  f.Get("arch", c.arch);
  if (std::optional<RecordReader> kernels = f.Object("kernels")) {
    for (const auto& [name, value] : json.at("kernels").items()) {
      std::optional<RecordReader> kernel = kernels->Object(name);
      if (kernel) c.kernels[name] = ReadKernel(*kernel);
    }
  }
  f.Get("warnings", c.warnings);
  if (!status.ok()) return status;
  return c;
}

json TrialRecordToJson(const TrialRecord& t) {
  json out = {{"variant", t.variant}, {"trial", t.trial}, {"distribution", t.distribution},
              {"seed", t.seed},       {"runs", t.runs},   {"outputs", json::array()}};
  if (t.domain) out["domain"] = *t.domain;
  for (const OutputComparison& o : t.outputs) out["outputs"].push_back(OutputJson(o));
  EraseAbsentKeys(out, t.absent_keys);
  return out;
}

StatusOr<TrialRecord> TrialRecordFromJson(const json& json, const std::string& path) {
  TrialRecord t;
  Status status;
  RecordReader f(json, path, status, &t.absent_keys);
  f.Get("variant", t.variant);
  f.Get("trial", t.trial);
  f.Get("distribution", t.distribution);
  f.Get("domain", t.domain);
  ReadUnsigned(f, "seed", t.seed);
  f.Get("runs", t.runs);
  if (const nlohmann::json* outputs = f.Array("outputs")) {
    for (size_t i = 0; i < outputs->size(); ++i) {
      RecordReader o((*outputs)[i], path + ".outputs[" + std::to_string(i) + "]", status, &t.absent_keys,
                     "/outputs/" + std::to_string(i));
      t.outputs.push_back(ReadOutput(o));
    }
  }
  if (!status.ok()) return status;
  return t;
}

json TrialRecordsToJson(const std::vector<TrialRecord>& trials) {
  json out = json::array();
  for (const TrialRecord& t : trials) out.push_back(TrialRecordToJson(t));
  return out;
}

StatusOr<std::vector<TrialRecord>> TrialRecordsFromJson(const json& json, const std::string& path) {
  std::vector<TrialRecord> trials;
  if (json.is_null()) return trials;
  if (!json.is_array()) return Status::InvalidArgument(path + ": expected an array");
  for (size_t i = 0; i < json.size(); ++i) {
    KFORGE_ASSIGN_OR_RETURN(TrialRecord t,
                            TrialRecordFromJson(json[i], path + "[" + std::to_string(i) + "]"));
    trials.push_back(std::move(t));
  }
  return trials;
}

json DevicePeak::ToJson() const {
  return {{"device", device},
          {"uuid", uuid},
          {"driver_version", driver_version},
          {"cc", std::to_string(cc_major) + "." + std::to_string(cc_minor)},
          {"sm_count", sm_count},
          {"sm_clock_mhz", sm_clock_mhz},
          {"dram_gbps", KnownOrNull(dram_gbps)},
          {"copy_bytes", copy_bytes},
          {"fp32_tflops", KnownOrNull(fp32_tflops)},
          {"fp16_tflops", KnownOrNull(fp16_tflops)},
          {"bf16_tflops", KnownOrNull(bf16_tflops)},
          {"tf32_tflops", KnownOrNull(tf32_tflops)}};
}

StatusOr<DevicePeak> DevicePeakFromJson(const json& json) {
  if (!json.is_object()) return Status::InvalidArgument("peak: expected an object");
  DevicePeak peak;
  Status status;
  RecordReader f(json, "peak", status);
  ReadPeak(f, peak);
  if (!status.ok()) return status;
  if (!(peak.dram_gbps > 0)) return Status::InvalidArgument("peak.dram_gbps: expected a positive number");
  return peak;
}

json DeviceRecordToJson(const DeviceRecord& d) {
  json out = {{"index", d.index},
              {"name", d.name},
              {"cc", d.cc},
              {"sm_count", d.sm_count},
              {"memory_bytes", d.memory_bytes},
              {"l2_bytes", d.l2_bytes}};
  if (d.peak) out["peak"] = d.peak->ToJson();
  EraseAbsentKeys(out, d.absent_keys);
  return out;
}

json DeviceRecordToJson(const std::optional<DeviceRecord>& device) {
  return device ? DeviceRecordToJson(*device) : json(nullptr);
}

StatusOr<DeviceRecord> DeviceRecordFromJson(const json& json, const std::string& path) {
  DeviceRecord d;
  Status status;
  RecordReader f(json, path, status, &d.absent_keys);
  ReadDevice(f, d);
  // A device without peaks lacks the key by design: it is not noted as absent.
  std::erase(d.absent_keys, std::string("/peak"));
  if (!status.ok()) return status;
  return d;
}

bool DeviceRecord::Has(std::string_view key) const { return HasKey(absent_keys, key); }

StatusOr<std::optional<DeviceRecord>> OptionalDeviceRecordFromJson(const json& json,
                                                                   const std::string& path) {
  if (json.is_null()) return std::optional<DeviceRecord>();
  KFORGE_ASSIGN_OR_RETURN(DeviceRecord d, DeviceRecordFromJson(json, path));
  return std::optional<DeviceRecord>(std::move(d));
}

bool MemoryRecord::Has(std::string_view key) const { return HasKey(absent_keys, key); }

json MemoryRecordToJson(const MemoryRecord& m) {
  json out = {{"inputs_bytes", m.inputs_bytes},          {"params_bytes", m.params_bytes},
              {"outputs_bytes", m.outputs_bytes},        {"scratch_bytes", m.scratch_bytes},
              {"footprint_bytes", m.footprint_bytes},    {"budget_bytes", m.budget_bytes},
              {"peak_device_bytes", m.peak_device_bytes}};
  EraseAbsentKeys(out, m.absent_keys);
  return out;
}

StatusOr<MemoryRecord> MemoryRecordFromJson(const json& json, const std::string& path) {
  MemoryRecord m;
  Status status;
  RecordReader f(json, path, status, &m.absent_keys);
  for (auto [key, out] :
       {std::pair{"inputs_bytes", &m.inputs_bytes}, std::pair{"params_bytes", &m.params_bytes},
        std::pair{"outputs_bytes", &m.outputs_bytes}, std::pair{"scratch_bytes", &m.scratch_bytes},
        std::pair{"footprint_bytes", &m.footprint_bytes}, std::pair{"budget_bytes", &m.budget_bytes},
        std::pair{"peak_device_bytes", &m.peak_device_bytes}})
    f.Get(key, *out);
  if (!status.ok()) return status;
  return m;
}

json VerdictTimingToJson(const VerdictTiming& t) {
  json out = json::object();
  if (t.gpu_ms) out["gpu_ms"] = *t.gpu_ms;
  if (t.reference_load_ms) out["reference_load_ms"] = *t.reference_load_ms;
  if (t.worker_start_ms) out["worker_start_ms"] = *t.worker_start_ms;
  if (t.phases_ms) out["phases_ms"] = *t.phases_ms;
  if (t.plan_split) out[kPlanSplitKey] = PlanSplitToJson(*t.plan_split);
  return out;
}

StatusOr<VerdictTiming> VerdictTimingFromJson(const json& json, const std::string& path) {
  VerdictTiming t;
  if (json.is_null()) return t;
  Status status;
  RecordReader f(json, path, status);
  f.Get("gpu_ms", t.gpu_ms);
  f.Get("reference_load_ms", t.reference_load_ms);
  f.Get("worker_start_ms", t.worker_start_ms);
  if (std::optional<RecordReader> phases = f.Object("phases_ms")) {
    t.phases_ms.emplace();
    for (const auto& [name, value] : json.at("phases_ms").items()) phases->Get(name, (*t.phases_ms)[name]);
  }
  if (const nlohmann::json* split = f.Find(kPlanSplitKey)) {  // an unreadable split is none
    StatusOr<std::optional<PlanSplit>> read = PlanSplitFromJson(*split, f.Path(kPlanSplitKey));
    if (read.ok()) t.plan_split = *read;
  }
  if (!status.ok()) return status;
  return t;
}

namespace {

/// The keys of Checks, in one list for the writer and the reader.
constexpr std::string_view kCheckKeys[] = {"poisoned_outputs",
                                           "guard_regions",
                                           "inputs_unchanged",
                                           "repeat_runs",
                                           "library_ops",
                                           "shape_general",
                                           "shape_general_detail",
                                           "bitwise_deterministic",
                                           "degenerate_reference",
                                           "elements_only",
                                           "rerun",
                                           "golden",
                                           "sanitizer",
                                           "gpu_check"};

void ReadOutcome(RecordReader& f, const char* key, std::optional<CheckOutcome>& out) {
  if (f.Find(key) == nullptr) return;
  CheckOutcome outcome = CheckOutcome::kPass;
  f.Name(key, kCheckOutcomeNames, outcome);
  if (f.status().ok()) out = outcome;
}

/// The checks a record gave as null (an older record, or none run).
Checks NullChecks() {
  Checks c;
  c.read_as_null = true;
  return c;
}

void WriteOutcome(json& out, const char* key, const std::optional<CheckOutcome>& outcome) {
  if (outcome) out[key] = std::string(kCheckOutcomeNames.Name(*outcome));
}

}  // namespace

json ChecksToJson(const Checks& c) {
  if (c.read_as_null && c == NullChecks()) return json(nullptr);
  json out = json::object();
  for (const auto& [key, value] : c.other) out[key] = value;
  WriteOutcome(out, "poisoned_outputs", c.poisoned_outputs);
  WriteOutcome(out, "guard_regions", c.guard_regions);
  WriteOutcome(out, "inputs_unchanged", c.inputs_unchanged);
  if (c.repeat_runs) out["repeat_runs"] = c.repeat_runs->failed ? json("fail") : json(c.repeat_runs->count);
  if (c.library_ops) out["library_ops"] = *c.library_ops;
  WriteOutcome(out, "shape_general", c.shape_general);
  if (c.shape_general_detail) out["shape_general_detail"] = *c.shape_general_detail;
  if (c.bitwise_deterministic) out["bitwise_deterministic"] = *c.bitwise_deterministic;
  if (c.degenerate_reference) out["degenerate_reference"] = *c.degenerate_reference;
  if (c.elements_only) out["elements_only"] = *c.elements_only;
  WriteOutcome(out, "rerun", c.rerun);
  WriteOutcome(out, "golden", c.golden);
  WriteOutcome(out, "sanitizer", c.sanitizer);
  WriteOutcome(out, "gpu_check", c.gpu_check);
  return out;
}

StatusOr<Checks> ChecksFromJson(const json& json, const std::string& path) {
  Checks c;
  if (json.is_null()) return NullChecks();
  Status status;
  RecordReader f(json, path, status);
  if (!status.ok()) return status;
  for (const auto& [key, value] : json.items()) {
    bool known = false;
    for (std::string_view k : kCheckKeys) known = known || k == key;
    if (!known || value.is_null()) c.other[key] = value;
  }
  ReadOutcome(f, "poisoned_outputs", c.poisoned_outputs);
  ReadOutcome(f, "guard_regions", c.guard_regions);
  ReadOutcome(f, "inputs_unchanged", c.inputs_unchanged);
  if (const nlohmann::json* repeats = f.Find("repeat_runs")) {
    if (repeats->is_string() && repeats->get<std::string>() == "fail") {
      c.repeat_runs = RepeatRuns{.failed = true};
    } else if (repeats->is_number_integer()) {
      int count = 0;
      f.Get("repeat_runs", count);
      if (f.status().ok()) c.repeat_runs = RepeatRuns{.count = count};
    } else {
      f.Fail("repeat_runs", "expected a count or \"fail\"");
    }
  }
  f.Get("library_ops", c.library_ops);
  ReadOutcome(f, "shape_general", c.shape_general);
  f.Get("shape_general_detail", c.shape_general_detail);
  f.Get("bitwise_deterministic", c.bitwise_deterministic);
  f.Get("degenerate_reference", c.degenerate_reference);
  f.Get("elements_only", c.elements_only);
  ReadOutcome(f, "rerun", c.rerun);
  ReadOutcome(f, "golden", c.golden);
  ReadOutcome(f, "sanitizer", c.sanitizer);
  ReadOutcome(f, "gpu_check", c.gpu_check);
  if (!status.ok()) return status;
  return c;
}

}  // namespace kforge::common
