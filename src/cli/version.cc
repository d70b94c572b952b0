// `kforge --version`.
#include "cli/version.h"

#include "kforge/cuda/versions.h"
#ifdef KFORGE_WITH_TORCH
#include "kforge/reference/runner.h"
#endif

namespace kforge::cli {

std::string VersionText() {
  std::string text = std::string("kforge ") + KFORGE_VERSION + "\n";
  text += "cuda runtime " + cuda::RuntimeVersion() + "\n";
  text += "cuda driver " + cuda::DriverVersion() + "\n";
  text += "nvrtc " + cuda::NvrtcVersion() + "\n";
#ifdef KFORGE_WITH_TORCH
  text += "libtorch " + reference::LibTorchVersion();
#else
  text += "libtorch none (built without the reference runner)";
#endif
  return text;
}

}  // namespace kforge::cli
