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

#include "kforge/common/base64.h"
#include "kforge/common/verdict.h"
#include "kforge/cuda/device.h"
#include "worker/bench_op.h"
#include "worker/check.h"

namespace kforge::worker {
namespace {

void Reply(const nlohmann::json& body) {
  std::string line = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

nlohmann::json Crash(const std::string& message) { return {{"status", "crash"}, {"message", message}}; }

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

}  // namespace

int Serve(int device_index) {
  auto device = cuda::OpenDevice(device_index);
  if (!device.ok()) {
    std::fprintf(stderr, "kforge worker: %s\n", device.status().message().c_str());
    return 1;
  }
  GpuChecker checker(*device);
  std::string line;
  while (std::getline(std::cin, line)) {
    nlohmann::json request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (request.is_discarded() || !request.is_object()) {
      Reply(Crash("worker: malformed request"));
      continue;
    }
    std::string op = request.value("op", "");
    if (op == "hello") {
      Reply({{"status", "ok"}, {"device", device->ToJson()}});
    } else if (op == "check") {
      auto check = ParseCheck(request);
      if (!check.ok()) {
        Reply(Crash("worker: bad check request: " + check.status().message()));
        continue;
      }
      auto start = std::chrono::steady_clock::now();
      GpuCheckResult result = checker.Check(*check);
      double gpu_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      Reply({{"status", common::VerdictStatusName(result.status)},
             {"message", result.message},
             {"trials", result.trials},
             {"checks", result.checks},
             {"device", device->ToJson()},
             {"timing", {{"gpu_ms", gpu_ms}, {"reference_load_ms", result.reference_load_ms}}},
             {"exiting", result.worker_must_exit}});
      if (result.worker_must_exit) std::_Exit(3);  // a context with a sticky error or a hung kernel
    } else if (op == "bench") {
      bool must_exit = false;
      nlohmann::json reply = RunBench(checker, request, must_exit);
      reply["exiting"] = must_exit;
      Reply(reply);
      if (must_exit) std::_Exit(3);
    } else {
      Reply(Crash("worker: unknown op \"" + op.substr(0, 40) + "\""));
    }
  }
  return 0;
}

}  // namespace kforge::worker

extern "C" __attribute__((visibility("default"))) int kforge_worker_serve(int device_index) {
  return kforge::worker::Serve(device_index);
}
