// Measurement <-> JSON (the worker's bench reply) and MeasureOptions <-> JSON (its request).
#include "kforge/bench/wire.h"

#include <cstdlib>
#include <string>

namespace kforge::bench {
namespace {

Status Bad(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("bench reply: " + path + ": " + what);
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

}  // namespace kforge::bench
