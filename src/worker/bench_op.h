// The worker's "bench" request: time a verified candidate against its reference (or the reference
// alone) on the same inputs, interleaved on one stream (bench::Measure), checking every timed run.
#pragma once

#include "kforge/bench/wire.h"
#include "worker/check.h"

namespace kforge::worker {

/// Answers one bench request (docs/worker.md); `exiting` is set when the CUDA context is unusable.
bench::BenchReply RunBench(GpuChecker& state, const bench::BenchRequest& request);

}  // namespace kforge::worker
