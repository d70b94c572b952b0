// The NVRTC helper's messages as JSON: a job with its budget, the outcome, the hello. Both sides
// (nvrtc_helper.cc in the parent, nvrtc_server.cc in the helper) write and read them here only.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "cuda/nvrtc_helper.h"

namespace kforge::cuda::internal {

/// A job as the helper receives it: the compile and how long it may take.
struct NvrtcRequest {
  NvrtcJob job;
  std::chrono::milliseconds budget{0};
};

/// The hello a helper sends first: {"schema": kNvrtcWireSchema, "nvrtc": version}.
std::string NvrtcHelloFrame(std::string_view nvrtc_version);
/// True when `frame` is the hello of a helper speaking this wire.
bool IsNvrtcHello(std::string_view frame);

/// A negative budget goes out as 0.
std::string NvrtcJobFrame(const NvrtcJob& job, std::chrono::milliseconds budget);
/// Throws std::runtime_error naming the first malformed field.
NvrtcRequest ParseNvrtcJobFrame(std::string_view frame);

/// A helper's answer. kDied is never sent: the parent decides it when no answer comes.
std::string NvrtcOutcomeFrame(const NvrtcOutcome& outcome);
/// The answer when NVRTC failed in a way that is not the source's fault.
std::string NvrtcFailureFrame(std::string_view message);
/// Throws std::runtime_error on a failure answer ("NVRTC helper: <message>") or a malformed one.
NvrtcOutcome ParseNvrtcOutcomeFrame(std::string_view frame);

}  // namespace kforge::cuda::internal
