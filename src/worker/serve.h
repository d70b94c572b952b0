// The worker library's request loop (protocol in docs/worker.md).
#pragma once

namespace kforge::worker {

/// Serves requests on stdin/stdout for `device_index` until stdin closes; returns the exit code.
/// Exits the process at once when a candidate leaves the CUDA context unusable.
int Serve(int device_index);

}  // namespace kforge::worker

/// The symbol `kforge worker` looks up after loading the library.
extern "C" int kforge_worker_serve(int device_index);
