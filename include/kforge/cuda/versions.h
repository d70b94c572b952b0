// Versions of the CUDA pieces kforge runs on, for --version and verdict records.
#pragma once

#include <string>

namespace kforge::cuda {

/// "13.0" style version of the CUDA runtime linked into kforge.
std::string RuntimeVersion();
/// Version of the CUDA driver, or "none" when no driver is installed.
std::string DriverVersion();
/// "13.0" style version of NVRTC.
std::string NvrtcVersion();

}  // namespace kforge::cuda
