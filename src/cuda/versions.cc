// Version queries; none of these needs a GPU.
#include "kforge/cuda/versions.h"

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "kforge/common/text.h"

namespace kforge::cuda {
namespace {

std::string FormatCudaVersion(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

std::string RuntimeVersion() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return "unknown";
  return FormatCudaVersion(v);
}

std::string DriverVersion() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess || v == 0) return "none";
  return FormatCudaVersion(v);
}

std::string NvrtcVersion() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

Status CheckArch(std::string_view arch) {
  int count = 0;
  std::vector<int> supported;
  if (nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    supported.resize(static_cast<size_t>(count));
    if (nvrtcGetSupportedArchs(supported.data()) != NVRTC_SUCCESS) supported.clear();
  }
  std::string listed;
  for (int a : supported) listed += (listed.empty() ? "sm_" : ", sm_") + std::to_string(a);
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(common::Quote(arch, 20) + ": " + why + "; NVRTC " + NvrtcVersion() +
                                   " targets " + listed + " (suffix a from sm_90, f from sm_100)");
  };
  if (arch.substr(0, 3) != "sm_") return bad("not of the form sm_XX[a|f]");
  std::string_view rest = arch.substr(3);
  char suffix = 0;
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    suffix = rest.back();
    rest.remove_suffix(1);
  }
  if (rest.empty() || rest.size() > 4 || !std::all_of(rest.begin(), rest.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      }))
    return bad("not of the form sm_XX[a|f]");
  int number = std::stoi(std::string(rest));
  if (std::find(supported.begin(), supported.end(), number) == supported.end()) return bad("not supported");
  if ((suffix == 'a' && number < 90) || (suffix == 'f' && number < 100)) return bad("no such variant");
  return Status::Ok();
}

}  // namespace kforge::cuda
