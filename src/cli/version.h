// `kforge --version` text.
#pragma once

#include <string>

namespace kforge::cli {

/// Multi-line version report: kforge, CUDA runtime and driver, NVRTC, LibTorch.
std::string VersionText();

}  // namespace kforge::cli
