// Measurement <-> JSON (the worker's bench reply) and MeasureOptions <-> JSON (its request).
#include "kforge/bench/wire.h"

#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "kforge/common/base64.h"
#include "kforge/common/json_fields.h"
#include "kforge/verify/worker_protocol.h"

namespace kforge::bench {
namespace {

Status Bad(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("bench reply: " + path + ": " + what);
}

Status BadRequest(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("bench request: " + path + ": " + what);
}

/// A field's error as the bench reply's.
Status Reply(Status status) { return status.ok() ? status : status.WithContext("bench reply"); }
template <typename T>
StatusOr<T> Reply(StatusOr<T> value) {
  if (!value.ok()) return value.status().WithContext("bench reply");
  return value;
}

/// An integer field that fits an int.
StatusOr<int> Int(const common::JsonFields& f, std::string_view key) {
  KFORGE_ASSIGN_OR_RETURN(int64_t value, f.Int(key));
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
    return f.Error(key, "integer out of range");
  return static_cast<int>(value);
}

}  // namespace

nlohmann::json MeasurementToJson(const Measurement& m) {
  nlohmann::json subjects = nlohmann::json::array();
  for (const SubjectSamples& s : m.subjects) {
    subjects.push_back({{"name", s.name},
                        {"ms", s.ms},
                        {"throttled", s.throttled},
                        {"batch", s.batch},
                        {"gpu_seconds", s.gpu_seconds}});
  }
  return {{"mode", common::kTimingModeNames.Name(m.mode)},
          {"subjects", subjects},
          {"converged", m.converged},
          {"rounds", m.rounds},
          {"wall_seconds", m.wall_seconds},
          {"sm_clock_mhz", m.sm_clock_mhz},
          {"max_sm_clock_mhz", m.max_sm_clock_mhz},
          {"l2_flush_bytes", m.l2_flush_bytes}};
}

StatusOr<Measurement> MeasurementFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Bad("measurement", "expected an object");
  common::JsonFields f(json, "measurement");
  Measurement m;
  KFORGE_ASSIGN_OR_RETURN(std::string mode, Reply(f.String("mode")));
  std::optional<Mode> parsed = common::kTimingModeNames.Parse(mode);
  if (!parsed) return Bad("measurement.mode", "expected \"cold\" or \"hot\"");
  m.mode = *parsed;
  KFORGE_RETURN_IF_ERROR(Reply(f.Expect("subjects", common::JsonKind::kArray)));
  const nlohmann::json& subjects = json["subjects"];
  for (size_t i = 0; i < subjects.size(); ++i) {
    const std::string path = f.Child("subjects") + "[" + std::to_string(i) + "]";
    if (!subjects[i].is_object()) return Bad(path, "expected an object");
    common::JsonFields s(subjects[i], path);
    SubjectSamples samples;
    KFORGE_ASSIGN_OR_RETURN(samples.name, Reply(s.String("name")));
    KFORGE_RETURN_IF_ERROR(Reply(s.ExpectElements("ms", common::JsonKind::kNumber)));
    samples.ms = subjects[i]["ms"].get<std::vector<double>>();
    KFORGE_ASSIGN_OR_RETURN(samples.throttled, Reply(Int(s, "throttled")));
    KFORGE_ASSIGN_OR_RETURN(samples.batch, Reply(Int(s, "batch")));
    KFORGE_ASSIGN_OR_RETURN(samples.gpu_seconds, Reply(s.Number("gpu_seconds")));
    m.subjects.push_back(std::move(samples));
  }
  KFORGE_RETURN_IF_ERROR(Reply(f.Expect("converged", common::JsonKind::kBool)));
  m.converged = json["converged"].get<bool>();
  KFORGE_ASSIGN_OR_RETURN(m.rounds, Reply(Int(f, "rounds")));
  KFORGE_ASSIGN_OR_RETURN(m.wall_seconds, Reply(f.Number("wall_seconds")));
  KFORGE_ASSIGN_OR_RETURN(m.sm_clock_mhz, Reply(f.Number("sm_clock_mhz")));
  KFORGE_ASSIGN_OR_RETURN(m.max_sm_clock_mhz, Reply(f.Number("max_sm_clock_mhz")));
  KFORGE_ASSIGN_OR_RETURN(int64_t flush, Reply(f.Int("l2_flush_bytes")));
  if (flush < 0) return Bad("measurement.l2_flush_bytes", "must not be negative");
  m.l2_flush_bytes = static_cast<size_t>(flush);
  return m;
}

nlohmann::json MeasureOptionsToJson(const MeasureOptions& o) {
  return {{"mode", common::kTimingModeNames.Name(o.mode)},
          {"max_noise", o.max_noise},
          {"min_samples", o.min_samples},
          {"max_samples", o.max_samples},
          {"min_seconds", o.min_seconds},
          {"max_seconds", o.max_seconds},
          {"warmup_runs", o.warmup_runs},
          {"warmup_seconds", o.warmup_seconds},
          {"throttle_threshold", o.throttle_threshold}};
}

StatusOr<MeasureOptions> MeasureOptionsFromJson(const nlohmann::json& json) {
  MeasureOptions o;
  if (!json.is_object()) return Status::InvalidArgument("measure options: expected an object");
  common::JsonFields f(json, "");
  auto context = [](Status status) { return status.WithContext("measure options"); };
  if (f.Has("mode")) {
    StatusOr<std::string> mode = f.String("mode");
    if (!mode.ok()) return context(mode.status());
    std::optional<Mode> parsed = common::kTimingModeNames.Parse(*mode);
    if (!parsed) return Status::InvalidArgument("measure options: mode: expected \"cold\" or \"hot\"");
    o.mode = *parsed;
  }
  for (auto [key, out] :
       {std::pair{"max_noise", &o.max_noise}, std::pair{"min_seconds", &o.min_seconds},
        std::pair{"max_seconds", &o.max_seconds}, std::pair{"warmup_seconds", &o.warmup_seconds},
        std::pair{"throttle_threshold", &o.throttle_threshold}}) {
    if (!f.Has(key)) continue;
    StatusOr<double> value = f.Number(key);
    if (!value.ok()) return context(value.status());
    *out = *value;
  }
  for (auto [key, out] : {std::pair{"min_samples", &o.min_samples}, std::pair{"max_samples", &o.max_samples},
                          std::pair{"warmup_runs", &o.warmup_runs}}) {
    if (!f.Has(key)) continue;
    StatusOr<int> value = Int(f, key);
    if (!value.ok()) return context(value.status());
    *out = *value;
  }
  KFORGE_RETURN_IF_ERROR(ValidateMeasureOptions(o));
  return o;
}

nlohmann::json BenchRequest::ToJson() const {
  nlohmann::json out = {{"op", verify::WorkerOpName(verify::WorkerOp::kBench)},
                        {"task_dir", task_dir.string()},
                        {"seed", seed},
                        {"measure", MeasureOptionsToJson(measure)}};
  if (solution) {
    out["solution"] = common::SolutionToJson(*solution);
    out["cubin_b64"] = common::Base64Encode(cubin);
  }
  return out;
}

StatusOr<BenchRequest> BenchRequest::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Status::InvalidArgument("bench request: expected an object");
  common::JsonFields fields(json, "");
  BenchRequest request;
  auto task_dir = fields.String("task_dir");
  if (!task_dir.ok()) return task_dir.status().WithContext("bench request");
  request.task_dir = *task_dir;
  if (json.contains("seed")) {
    if (!json["seed"].is_number_unsigned()) return BadRequest("seed", "expected an unsigned integer");
    request.seed = json["seed"].get<uint64_t>();
  }
  auto measure = MeasureOptionsFromJson(json.value("measure", nlohmann::json::object()));
  if (!measure.ok()) return measure.status().WithContext("bench request");
  request.measure = *measure;
  if (json.contains("solution")) {
    auto solution = common::SolutionFromJson(json["solution"], "bench request: solution");
    if (!solution.ok()) return solution.status();
    request.solution = std::move(*solution);
    auto cubin_b64 = fields.String("cubin_b64");
    if (!cubin_b64.ok()) return cubin_b64.status().WithContext("bench request");
    auto cubin = common::Base64Decode(*cubin_b64);
    if (!cubin.ok()) return BadRequest("cubin_b64", cubin.status().message());
    request.cubin = std::move(*cubin);
  }
  return request;
}

nlohmann::json BenchReply::ToJson() const {
  if (status != common::VerdictStatus::kOk)
    return {{"status", common::VerdictStatusName(status)}, {"message", message}, {"exiting", exiting}};
  nlohmann::json out = {
      {"status", common::VerdictStatusName(status)},
      {"message", message},
      {"measurement", measurement ? MeasurementToJson(*measurement) : nlohmann::json(nullptr)},
      {"checked_runs", checked_runs},
      {"placements", placements},
      {"memory", memory ? common::MemoryRecordToJson(*memory) : nlohmann::json(nullptr)},
      {"device", common::DeviceRecordToJson(device)},
      {"peak", peak ? peak->ToJson() : nlohmann::json(nullptr)},
      {"exiting", exiting}};
  if (plan_split) out[common::kPlanSplitKey] = common::PlanSplitToJson(*plan_split);
  return out;
}

StatusOr<BenchReply> BenchReply::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Bad("top level", "expected an object");
  common::JsonFields f(json, "");
  BenchReply reply;
  KFORGE_ASSIGN_OR_RETURN(std::string status, Reply(f.String("status")));
  StatusOr<common::VerdictStatus> parsed = common::ParseVerdictStatus(status);
  if (!parsed.ok()) return Bad("status", parsed.status().message());
  reply.status = *parsed;
  KFORGE_ASSIGN_OR_RETURN(reply.message, Reply(f.StringOr("message", "")));
  if (json.contains("measurement") && !json["measurement"].is_null()) {
    KFORGE_ASSIGN_OR_RETURN(reply.measurement, MeasurementFromJson(json["measurement"]));
  }
  for (auto [key, out] :
       {std::pair{"checked_runs", &reply.checked_runs}, std::pair{"placements", &reply.placements}}) {
    if (!f.Has(key)) continue;
    KFORGE_ASSIGN_OR_RETURN(*out, Reply(Int(f, key)));
  }
  if (const nlohmann::json memory = json.value("memory", nlohmann::json()); !memory.is_null()) {
    KFORGE_ASSIGN_OR_RETURN(reply.memory, Reply(common::MemoryRecordFromJson(memory, "memory")));
  }
  KFORGE_ASSIGN_OR_RETURN(reply.device,
                          Reply(common::OptionalDeviceRecordFromJson(json.value("device", nlohmann::json()), "device")));
  if (f.Has("exiting")) {
    KFORGE_RETURN_IF_ERROR(Reply(f.Expect("exiting", common::JsonKind::kBool)));
    reply.exiting = json["exiting"].get<bool>();
  }
  if (auto it = json.find(common::kPlanSplitKey); it != json.end()) {
    auto split = common::PlanSplitFromJson(*it, std::string(common::kPlanSplitKey));
    if (!split.ok()) return Status::InvalidArgument("bench reply: " + split.status().message());
    reply.plan_split = *split;
  }
  // A peak that cannot be read is an unknown peak, as the worker sends when it could not measure.
  if (auto peak = common::DevicePeakFromJson(json.value("peak", nlohmann::json())); peak.ok()) reply.peak = *peak;
  if (reply.status == common::VerdictStatus::kOk && !reply.measurement) return Bad("measurement", "missing");
  return reply;
}

}  // namespace kforge::bench
