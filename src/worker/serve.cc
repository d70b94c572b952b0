// The worker's request loop, the entry point of the worker library (libkforge_worker.so), which
// `kforge worker` loads once it has a device. It links LibTorch; the kforge executable does not.
#include "worker/serve.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/bench/peak.h"
#include "kforge/common/base64.h"
#include "kforge/common/verdict.h"
#include "kforge/cuda/device.h"
#include "kforge/cuda/guarded_buffer.h"
#include "kforge/reference/device_memory.h"
#include "worker/bench_op.h"
#include "worker/check.h"
#include "worker/task_check.h"

namespace kforge::worker {
namespace {

void Reply(const nlohmann::json& body) {
  std::string line = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

/// A failure on kforge's side (a malformed request from the parent, an exception in the worker).
nlohmann::json HarnessError(const std::string& message) {
  return {{"status", common::VerdictStatusName(common::VerdictStatus::kHarnessError)}, {"message", message}};
}

StatusOr<GpuCheckRequest> ParseCheck(const nlohmann::json& request) {
  GpuCheckRequest check;
  KFORGE_ASSIGN_OR_RETURN(check.cubin, common::Base64Decode(request.value("cubin_b64", "")));
  KFORGE_ASSIGN_OR_RETURN(check.solution,
                          common::SolutionFromJson(request.value("solution", nlohmann::json()), "request"));
  check.task_dir = request.value("task_dir", "");
  check.trials = request.value("trials", 5);
  check.seed = request.value("seed", uint64_t{0});
  check.kernel_timeout = std::chrono::milliseconds(request.value("kernel_timeout_ms", 10000));
  return check;
}

/// Answers one request line.
nlohmann::json Handle(GpuChecker& checker, const cuda::DeviceInfo& device, const std::string& line,
                      bool& must_exit) {
  nlohmann::json request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded() || !request.is_object()) return HarnessError("worker: malformed request");
  std::string op = request.value("op", "");
  if (op == "hello") {
    nlohmann::json reply = {{"status", "ok"}, {"device", device.ToJson()}};
    if (request.value("peak", false)) {  // measured once per device, then read from the cache
      auto peak = bench::LoadOrMeasurePeak(device.index, bench::DefaultCacheDir());
      reply["peak"] = peak.ok() ? peak->ToJson() : nlohmann::json(nullptr);
    }
    return reply;
  }
  if (op == "check") {
    auto check = ParseCheck(request);
    if (!check.ok()) return HarnessError("worker: bad check request: " + check.status().message());
    auto start = std::chrono::steady_clock::now();
    GpuCheckResult result = checker.Check(*check);
    double gpu_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    must_exit = result.worker_must_exit;
    nlohmann::json reply = {{"status", common::VerdictStatusName(result.status)},
                            {"message", result.message},
                            {"trials", result.trials},
                            {"checks", result.checks},
                            {"device", device.ToJson()},
                            {"timing",
                             {{"gpu_ms", gpu_ms},
                              {"reference_load_ms", result.reference_load_ms},
                              {"phases_ms", result.phases_ms}}},
                            {"memory", result.memory},
                            {"exiting", must_exit}};
    // Where the plan's GPU time went, when it calls library ops between its kernels.
    if (!result.plan_split.is_null()) reply["timing"]["plan_split"] = result.plan_split;
    return reply;
  }
  if (op == "bench") {
    nlohmann::json reply = RunBench(checker, request, must_exit);
    reply["exiting"] = must_exit;
    return reply;
  }
  if (op == "task_check") return RunTaskCheck(checker, request);
  return HarnessError("worker: unknown op \"" + op.substr(0, 40) + "\"");
}

}  // namespace

int Serve(int device_index) {
  auto device = cuda::OpenDevice(device_index);
  if (!device.ok()) {
    std::fprintf(stderr, "kforge worker: %s\n", device.status().message().c_str());
    return 1;
  }
  // Every device byte of a request goes through LibTorch's caching allocator: one count, one cache.
  cuda::SetDeviceAllocator({reference::AllocateDeviceMemory, reference::FreeDeviceMemory});
  GpuChecker checker(*device);
  std::string line;
  while (std::getline(std::cin, line)) {
    bool must_exit = false;
    nlohmann::json reply;
    try {
      reply = Handle(checker, *device, line, must_exit);
    } catch (const std::exception& e) {  // one bad request never ends the worker
      std::string text = e.what();
      std::string log = LogFailure(text);
      reply = HarnessError("worker: " + text.substr(0, std::min<size_t>(text.find('\n'), 300)) +
                           (log.empty() ? "" : " (details in " + log + ")"));
    }
    Reply(reply);
    if (must_exit) std::_Exit(3);  // a context with a sticky error or a hung kernel
  }
  return 0;
}

}  // namespace kforge::worker

extern "C" __attribute__((visibility("default"))) int kforge_worker_serve(int device_index) {
  return kforge::worker::Serve(device_index);
}
