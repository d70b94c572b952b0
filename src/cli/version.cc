// `kforge --version`.
#include "cli/version.h"

#include "kforge/cuda/versions.h"
#include "kforge/verify/worker.h"

namespace kforge::cli {

std::string VersionText() {
  std::string text = std::string("kforge ") + KFORGE_VERSION + "\n";
  text += "cuda runtime " + cuda::RuntimeVersion() + "\n";
  text += "cuda driver " + cuda::DriverVersion() + "\n";
  text += "nvrtc " + cuda::NvrtcVersion() + "\n";
  if (*KFORGE_LIBTORCH_VERSION) {
    text += std::string("libtorch ") + KFORGE_LIBTORCH_VERSION + " (" + verify::WorkerLibraryPath().string() +
            ")";
  } else {
    text += "libtorch none (built without the reference runner)";
  }
  return text;
}

}  // namespace kforge::cli
