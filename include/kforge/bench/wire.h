// Measurements and measure options as JSON, and the worker protocol's bench request and reply
// (kforge.worker/1, docs/worker.md; its other messages are in verify/worker_protocol.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/bench/measure.h"
#include "kforge/bench/peak.h"
#include "kforge/common/plan_split.h"
#include "kforge/common/solution.h"
#include "kforge/common/status.h"
#include "kforge/common/verdict.h"
#include "kforge/common/verdict_parts.h"

namespace kforge::bench {

nlohmann::json MeasurementToJson(const Measurement& measurement);
/// Errors name the JSON path of the first bad field.
StatusOr<Measurement> MeasurementFromJson(const nlohmann::json& json);

nlohmann::json MeasureOptionsToJson(const MeasureOptions& options);
/// Fields left out keep their defaults; the result passes ValidateMeasureOptions.
StatusOr<MeasureOptions> MeasureOptionsFromJson(const nlohmann::json& json);

/// {"op": "bench", ...}: time a candidate against its task's reference on the default variant, or the
/// reference alone.
struct BenchRequest {
  /// The task's folder. Required.
  std::filesystem::path task_dir;
  /// Seed of the inputs. Default 0.
  uint64_t seed = 0;
  /// How to sample; fields left out of the request keep MeasureOptions' defaults.
  MeasureOptions measure;
  /// The candidate, its kernel steps naming CUBIN symbols; none: the reference alone.
  std::optional<common::Solution> solution;
  /// The candidate's CUBIN image ("cubin_b64" on the wire); with `solution` only.
  std::string cubin;

  nlohmann::json ToJson() const;
  /// Fails on a field of the wrong type and on measure options that ValidateMeasureOptions refuses.
  static StatusOr<BenchRequest> FromJson(const nlohmann::json& json);
};

struct BenchReply {
  /// ok, or the status that stopped the timing (mismatch on a timed run, crash, harness_error, ...).
  common::VerdictStatus status = common::VerdictStatus::kOk;
  std::string message;
  /// The samples (ok only).
  std::optional<Measurement> measurement;
  /// Timed candidate runs whose outputs were checked.
  int checked_runs = 0;
  /// Copies of the inputs that samples rotated through.
  int placements = 0;
  /// The memory plan of the timed variant; null in a failure reply.
  std::optional<common::MemoryRecord> memory;
  /// The worker's device; null in a failure reply.
  std::optional<common::DeviceRecord> device;
  /// The device's peaks; none when unknown.
  std::optional<DevicePeak> peak;
  /// Of a candidate whose plan has library ops, from one run timed step by step after the timed runs;
  /// absent (and not written) otherwise.
  std::optional<common::PlanSplit> plan_split;
  /// The worker exits after this reply (its CUDA context is unusable).
  bool exiting = false;

  /// A failure reply is {"status", "message", "exiting"}.
  nlohmann::json ToJson() const;
  static StatusOr<BenchReply> FromJson(const nlohmann::json& json);
};

}  // namespace kforge::bench
