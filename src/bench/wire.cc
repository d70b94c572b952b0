// Measurement <-> JSON (the worker's bench reply) and MeasureOptions <-> JSON (its request).
#include "kforge/bench/wire.h"

#include <cstdlib>
#include <string>

#include "kforge/common/base64.h"
#include "kforge/common/json_fields.h"

namespace kforge::bench {
namespace {

Status Bad(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("bench reply: " + path + ": " + what);
}

Status BadRequest(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("bench request: " + path + ": " + what);
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
  return {{"mode", ModeName(m.mode)},
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
  Measurement m;
  try {
    auto mode = ParseMode(json.at("mode").get<std::string>());
    if (!mode) return Bad("measurement.mode", "expected \"cold\" or \"hot\"");
    m.mode = *mode;
    const nlohmann::json& subjects = json.at("subjects");
    if (!subjects.is_array()) return Bad("measurement.subjects", "expected an array");
    for (const nlohmann::json& s : subjects) {
      SubjectSamples samples;
      samples.name = s.at("name").get<std::string>();
      samples.ms = s.at("ms").get<std::vector<double>>();
      samples.throttled = s.at("throttled").get<int>();
      samples.batch = s.at("batch").get<int>();
      samples.gpu_seconds = s.at("gpu_seconds").get<double>();
      m.subjects.push_back(std::move(samples));
    }
    m.converged = json.at("converged").get<bool>();
    m.rounds = json.at("rounds").get<int>();
    m.wall_seconds = json.at("wall_seconds").get<double>();
    m.sm_clock_mhz = json.at("sm_clock_mhz").get<double>();
    m.max_sm_clock_mhz = json.at("max_sm_clock_mhz").get<double>();
    m.l2_flush_bytes = json.at("l2_flush_bytes").get<size_t>();
  } catch (const nlohmann::json::exception& e) {
    return Bad("measurement", e.what());
  }
  return m;
}

StatusOr<DevicePeak> DevicePeakFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Bad("peak", "expected an object");
  auto number = [&json](const char* key) {
    return json.contains(key) && json[key].is_number() ? json[key].get<double>() : 0.0;
  };
  DevicePeak peak;
  peak.device = json.value("device", "");
  peak.uuid = json.value("uuid", "");
  peak.driver_version = static_cast<int>(number("driver_version"));
  std::string cc = json.value("cc", "");
  if (size_t dot = cc.find('.'); dot != std::string::npos) {
    peak.cc_major = std::atoi(cc.substr(0, dot).c_str());
    peak.cc_minor = std::atoi(cc.substr(dot + 1).c_str());
  }
  peak.sm_count = static_cast<int>(number("sm_count"));
  peak.sm_clock_mhz = number("sm_clock_mhz");
  peak.dram_gbps = number("dram_gbps");
  peak.copy_bytes = static_cast<uint64_t>(number("copy_bytes"));
  peak.fp32_tflops = number("fp32_tflops");
  peak.fp16_tflops = number("fp16_tflops");
  peak.bf16_tflops = number("bf16_tflops");
  peak.tf32_tflops = number("tf32_tflops");
  if (!(peak.dram_gbps > 0)) return Bad("peak.dram_gbps", "expected a positive number");
  return peak;
}

nlohmann::json MeasureOptionsToJson(const MeasureOptions& o) {
  return {{"mode", ModeName(o.mode)},
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
  try {
    if (json.contains("mode")) {
      auto mode = ParseMode(json.at("mode").get<std::string>());
      if (!mode) return Status::InvalidArgument("measure options: mode: expected \"cold\" or \"hot\"");
      o.mode = *mode;
    }
    o.max_noise = json.value("max_noise", o.max_noise);
    o.min_samples = json.value("min_samples", o.min_samples);
    o.max_samples = json.value("max_samples", o.max_samples);
    o.min_seconds = json.value("min_seconds", o.min_seconds);
    o.max_seconds = json.value("max_seconds", o.max_seconds);
    o.warmup_runs = json.value("warmup_runs", o.warmup_runs);
    o.warmup_seconds = json.value("warmup_seconds", o.warmup_seconds);
    o.throttle_threshold = json.value("throttle_threshold", o.throttle_threshold);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("measure options: ") + e.what());
  }
  KFORGE_RETURN_IF_ERROR(ValidateMeasureOptions(o));
  return o;
}

nlohmann::json BenchRequest::ToJson() const {
  nlohmann::json out = {{"op", "bench"},
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
      {"memory", memory},
      {"device", device},
      {"peak", peak ? peak->ToJson() : nlohmann::json(nullptr)},
      {"exiting", exiting}};
  if (plan_split) out[common::kPlanSplitKey] = common::PlanSplitToJson(*plan_split);
  return out;
}

StatusOr<BenchReply> BenchReply::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Bad("top level", "expected an object");
  BenchReply reply;
  try {
    auto status = common::ParseVerdictStatus(json.at("status").get<std::string>());
    if (!status.ok()) return Bad("status", status.status().message());
    reply.status = *status;
    reply.message = json.value("message", "");
    if (json.contains("measurement") && !json["measurement"].is_null()) {
      KFORGE_ASSIGN_OR_RETURN(reply.measurement, MeasurementFromJson(json["measurement"]));
    }
    reply.checked_runs = json.value("checked_runs", 0);
    reply.placements = json.value("placements", 0);
    reply.memory = json.value("memory", nlohmann::json());
    reply.device = json.value("device", nlohmann::json());
    reply.exiting = json.value("exiting", false);
  } catch (const nlohmann::json::exception& e) {
    return Bad("top level", e.what());
  }
  if (auto it = json.find(common::kPlanSplitKey); it != json.end()) {
    auto split = common::PlanSplitFromJson(*it, std::string(common::kPlanSplitKey));
    if (!split.ok()) return Status::InvalidArgument("bench reply: " + split.status().message());
    reply.plan_split = *split;
  }
  // A peak that cannot be read is an unknown peak, as the worker sends when it could not measure.
  if (auto peak = DevicePeakFromJson(json.value("peak", nlohmann::json())); peak.ok()) reply.peak = *peak;
  if (reply.status == common::VerdictStatus::kOk && !reply.measurement) return Bad("measurement", "missing");
  return reply;
}

}  // namespace kforge::bench
