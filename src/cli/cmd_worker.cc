// `kforge worker`: the GPU worker process, started by verify and bench (not for direct use).
#include <CLI/CLI.hpp>

#include <memory>

#include "cli/command.h"
#include "kforge/verify/worker.h"

namespace kforge::cli {

Runner AttachWorker(CLI::App& sub) {
  auto device = std::make_shared<int>(0);
  auto orderly_exit = std::make_shared<bool>(false);
  sub.add_option("--device", *device, "CUDA device index")->default_val(0);
  sub.add_flag("--orderly-exit", *orderly_exit,
               "Tear down LibTorch and CUDA at exit (for compute-sanitizer)");
  return [device, orderly_exit]() { return verify::RunWorker(*device, *orderly_exit); };
}

}  // namespace kforge::cli
