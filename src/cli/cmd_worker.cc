// `kforge worker`: the GPU worker process, started by verify and bench (not for direct use).
#include <CLI/CLI.hpp>

#include <memory>

#include "cli/command.h"
#include "kforge/verify/worker.h"

namespace kforge::cli {

Runner AttachWorker(CLI::App& sub) {
  auto device = std::make_shared<int>(0);
  sub.add_option("--device", *device, "CUDA device index")->default_val(0);
  return [device]() { return verify::RunWorker(*device); };
}

}  // namespace kforge::cli
