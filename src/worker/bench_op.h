// The worker's "bench" request: time a verified candidate against its reference (or the reference
// alone) on the same inputs, interleaved on one stream (bench::Measure), checking every timed run.
#pragma once

#include <nlohmann/json.hpp>

#include "worker/check.h"

namespace kforge::worker {

/// Answers one bench request (docs/worker.md). Sets `must_exit` when the CUDA context is unusable.
nlohmann::json RunBench(GpuChecker& state, const nlohmann::json& request, bool& must_exit);

}  // namespace kforge::worker
