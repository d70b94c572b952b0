// The worker's request loop, the entry point of the worker library (libkforge_worker.so), which
// `kforge worker` loads once it has a device. It links LibTorch; the kforge executable does not.
#include "worker/serve.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "kforge/bench/peak.h"
#include "kforge/bench/wire.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/verdict.h"
#include "kforge/cuda/device.h"
#include "kforge/cuda/guarded_buffer.h"
#include "kforge/reference/device_memory.h"
#include "kforge/verify/worker_protocol.h"
#include "worker/bench_op.h"
#include "worker/check.h"
#include "worker/task_audit.h"
#include "worker/timing_audit.h"
#include "worker/task_check.h"

namespace kforge::worker {
namespace {

void Reply(const nlohmann::json& body) {
  std::string line = common::JsonText(body) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

/// A failure on kforge's side (a malformed request from the parent, an exception in the worker).
nlohmann::json HarnessError(const std::string& message) {
  return verify::FailureReplyJson(common::VerdictStatus::kHarnessError, message);
}

nlohmann::json AnswerHello(const cuda::DeviceInfo& device, const nlohmann::json& request) {
  auto hello = verify::HelloRequest::FromJson(request);
  if (!hello.ok()) return HarnessError("worker: " + hello.status().message());
  verify::HelloReply reply;
  reply.device = device.Record();
  reply.peak_asked = hello->peak;
  if (hello->peak) {  // measured once per device, then read from the cache
    auto peak = bench::LoadOrMeasurePeak(device.index, bench::DefaultCacheDir());
    if (peak.ok()) reply.peak = *peak;
  }
  return reply.ToJson();
}

nlohmann::json AnswerCheck(GpuChecker& checker, const cuda::DeviceInfo& device, const nlohmann::json& request,
                           bool& must_exit) {
  auto check = verify::CheckRequest::FromJson(request);
  if (!check.ok()) return HarnessError("worker: " + check.status().message());
  auto start = std::chrono::steady_clock::now();
  GpuCheckResult result = checker.Check(*check);
  double gpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  verify::CheckReply reply;
  reply.status = result.status;
  reply.message = std::move(result.message);
  reply.trials = std::move(result.trials);
  reply.checks = std::move(result.checks);
  reply.device = device.Record();
  reply.timing = verify::CheckTiming{gpu_ms, result.reference_load_ms, std::move(result.phases_ms),
                                     std::move(result.plan_split)};
  reply.memory = std::move(result.memory);
  reply.exiting = must_exit = result.worker_must_exit;
  return reply.ToJson();
}

nlohmann::json AnswerBench(GpuChecker& checker, const nlohmann::json& request, bool& must_exit) {
  auto bench = bench::BenchRequest::FromJson(request);
  if (!bench.ok()) return HarnessError("worker: " + bench.status().message());
  bench::BenchReply reply = RunBench(checker, *bench);
  must_exit = reply.exiting;
  return reply.ToJson();
}

nlohmann::json AnswerTaskCheck(GpuChecker& checker, const nlohmann::json& request) {
  auto task_check = verify::TaskCheckRequest::FromJson(request);
  if (!task_check.ok()) return HarnessError("worker: " + task_check.status().message());
  return RunTaskCheck(checker, *task_check).ToJson();
}

nlohmann::json AnswerTaskAudit(GpuChecker& checker, const nlohmann::json& request) {
  auto task_audit = verify::TaskAuditRequest::FromJson(request);
  if (!task_audit.ok()) return HarnessError("worker: " + task_audit.status().message());
  return (task_audit->timing ? RunTimingAudit(checker, *task_audit) : RunTaskAudit(checker, *task_audit)).ToJson();
}

/// Answers one request line.
nlohmann::json Handle(GpuChecker& checker, const cuda::DeviceInfo& device, const std::string& line,
                      bool& must_exit) {
  nlohmann::json request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded() || !request.is_object()) return HarnessError("worker: malformed request");
  std::optional<verify::WorkerOp> op = verify::RequestOp(request);
  if (!op) return HarnessError("worker: unknown op \"" + verify::RequestOpText(request).substr(0, 40) + "\"");
  switch (*op) {
    case verify::WorkerOp::kHello:
      return AnswerHello(device, request);
    case verify::WorkerOp::kCheck:
      return AnswerCheck(checker, device, request, must_exit);
    case verify::WorkerOp::kBench:
      return AnswerBench(checker, request, must_exit);
    case verify::WorkerOp::kTaskCheck:
      return AnswerTaskCheck(checker, request);
    case verify::WorkerOp::kTaskAudit:
      return AnswerTaskAudit(checker, request);
  }
  return HarnessError("worker: unknown op");
}

}  // namespace

int Serve(int device_index) {
  auto device = cuda::OpenDevice(device_index);
  if (!device.ok()) {
    spdlog::error("worker: {}", device.status().message());
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
