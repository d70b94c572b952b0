// The worker's request loop.
#include "kforge/verify/worker.h"

#include <signal.h>
#include <sys/prctl.h>
#include <cstdint>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/common/base64.h"
#include "kforge/common/verdict.h"
#include "kforge/cuda/device.h"
#ifdef KFORGE_WITH_TORCH
#include "verify/gpu_check.h"
#endif

namespace kforge::verify {
namespace {

void Reply(const nlohmann::json& body) {
  std::string line = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

nlohmann::json NoGpu(const std::string& why) {
  return {{"status", common::VerdictStatusName(common::VerdictStatus::kNoGpu)}, {"message", why}};
}

}  // namespace

int RunWorker(int device_index) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the parent
  std::string no_gpu;
#ifndef KFORGE_WITH_TORCH
  no_gpu = "this kforge was built without the LibTorch reference runner";
#endif
  std::unique_ptr<cuda::DeviceInfo> device;
  if (no_gpu.empty()) {
    if (cuda::DeviceCount() <= device_index) {
      no_gpu = "no CUDA device " + std::to_string(device_index) + " (found " +
               std::to_string(cuda::DeviceCount()) + ")";
    } else {
      auto info = cuda::OpenDevice(device_index);
      if (info.ok()) {
        device = std::make_unique<cuda::DeviceInfo>(*info);
      } else {
        no_gpu = info.status().message();
      }
    }
  }
#ifdef KFORGE_WITH_TORCH
  std::unique_ptr<GpuChecker> checker;
  if (device) checker = std::make_unique<GpuChecker>(*device);
#endif

  std::string line;
  while (std::getline(std::cin, line)) {
    nlohmann::json request;
    try {
      request = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
      Reply({{"status", "crash"}, {"message", "worker: malformed request"}});
      continue;
    }
    std::string op = request.value("op", "");
    if (!no_gpu.empty()) {
      Reply(NoGpu(no_gpu));
      continue;
    }
    if (op == "hello") {
      Reply({{"status", "ok"}, {"device", device->ToJson()}});
      continue;
    }
#ifdef KFORGE_WITH_TORCH
    if (op == "check") {
      GpuCheckRequest check;
      auto cubin = common::Base64Decode(request.value("cubin_b64", ""));
      auto solution = common::SolutionFromJson(request.value("solution", nlohmann::json()), "request");
      if (!cubin.ok() || !solution.ok()) {
        Reply({{"status", "crash"}, {"message", "worker: bad check request"}});
        continue;
      }
      check.task_dir = request.value("task_dir", "");
      check.solution = std::move(*solution);
      check.cubin = std::move(*cubin);
      check.trials = request.value("trials", 5);
      check.seed = request.value("seed", uint64_t{0});
      check.kernel_timeout = std::chrono::milliseconds(request.value("kernel_timeout_ms", 10000));
      GpuCheckResult result = checker->Check(check);
      Reply({{"status", common::VerdictStatusName(result.status)},
             {"message", result.message},
             {"trials", result.trials},
             {"checks", result.checks},
             {"device", device->ToJson()},
             {"exiting", result.worker_must_exit}});
      if (result.worker_must_exit) std::_Exit(3);  // a context with a sticky error or a hung kernel
      continue;
    }
#endif
    Reply({{"status", "crash"}, {"message", "worker: unknown op \"" + op.substr(0, 40) + "\""}});
  }
  return 0;
}

}  // namespace kforge::verify
