// The GPU worker process (`kforge worker`): JSON requests on stdin, one JSON reply line each on
// stdout (protocol in docs/worker.md). It holds the CUDA context, tasks and reference programs.
#pragma once

#include <filesystem>

namespace kforge::verify {

/// Serves requests until stdin closes or the CUDA context becomes unusable; returns the exit code.
/// Without the device, or without the worker library, every reply is no_gpu. Unless `orderly_exit`,
/// the process then exits at once, skipping LibTorch's and the CUDA context's teardown.
int RunWorker(int device_index, bool orderly_exit = false);

/// The worker library: $KFORGE_WORKER_LIBRARY, else libkforge_worker.so beside the executable, else in
/// PREFIX/lib/kforge for an installed PREFIX/bin/kforge.
std::filesystem::path WorkerLibraryPath();

}  // namespace kforge::verify
