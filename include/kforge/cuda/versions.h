// Versions of the CUDA pieces kforge runs on, for --version and verdict records.
#pragma once

#include <string>
#include <string_view>

#include "kforge/common/status.h"

namespace kforge::cuda {

/// "13.0" style version of the CUDA runtime linked into kforge.
std::string RuntimeVersion();
/// Version of the CUDA driver, or "none" when no driver is installed.
std::string DriverVersion();
/// "13.0" style version of NVRTC.
std::string NvrtcVersion();

/// OK when NVRTC can target `arch`: sm_XX with XX among nvrtcGetSupportedArchs, optionally with the
/// suffix a (XX >= 90) or f (XX >= 100). Otherwise InvalidArgument naming the supported targets.
Status CheckArch(std::string_view arch);

}  // namespace kforge::cuda
