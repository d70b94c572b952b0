// Measurements and measure options as JSON, for the trip from the GPU worker to the parent.
#pragma once

#include <nlohmann/json.hpp>

#include "kforge/bench/measure.h"
#include "kforge/bench/peak.h"
#include "kforge/common/status.h"

namespace kforge::bench {

nlohmann::json MeasurementToJson(const Measurement& measurement);
/// Errors name the JSON path of the first bad field.
StatusOr<Measurement> MeasurementFromJson(const nlohmann::json& json);

/// The inverse of DevicePeak::ToJson (null peaks read as 0, unknown).
StatusOr<DevicePeak> DevicePeakFromJson(const nlohmann::json& json);

nlohmann::json MeasureOptionsToJson(const MeasureOptions& options);
/// Fields left out keep their defaults; the result passes ValidateMeasureOptions.
StatusOr<MeasureOptions> MeasureOptionsFromJson(const nlohmann::json& json);

}  // namespace kforge::bench
