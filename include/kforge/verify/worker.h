// The GPU worker process (`kforge worker`): JSON requests on stdin, one JSON reply line each on
// stdout (protocol in docs/worker.md). It holds the CUDA context, tasks and reference programs.
#pragma once

namespace kforge::verify {

/// Serves requests until stdin closes or the CUDA context becomes unusable; returns the exit code.
int RunWorker(int device_index);

}  // namespace kforge::verify
