// `kforge tasks check ROOT`: every task's reference through the real harness in a GPU worker, one
// line per task (pass/fail, peak device memory against the footprint, time) and a summary.
#include "cli/cmd_tasks_check.h"

#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <vector>
#include <string>

#include "cli/command.h"
#include "cli/options.h"
#include "kforge/common/task.h"
#include "kforge/verify/worker_client.h"

namespace kforge::cli {
namespace {

std::string GiB(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (int64_t{1} << 30));
  return text;
}

/// The largest peak/footprint ratio over the reply's variants (0 when none ran).
double WorstRatio(const nlohmann::json& reply, int64_t& peak, int64_t& footprint) {
  double worst = 0;
  for (const nlohmann::json& v : reply.value("variants", nlohmann::json::array())) {
    const nlohmann::json& m = v.value("memory", nlohmann::json::object());
    int64_t p = m.value("peak_device_bytes", int64_t{0}), f = m.value("footprint_bytes", int64_t{0});
    double ratio = f > 0 ? static_cast<double>(p) / static_cast<double>(f) : 0;
    if (ratio >= worst) {
      worst = ratio;
      peak = p;
      footprint = f;
    }
  }
  return worst;
}

/// "cuda" -> 0, "cuda:N" -> N.
StatusOr<int> ParseCudaDevice(const std::string& text) {
  if (text == "cuda") return 0;
  if (text.rfind("cuda:", 0) == 0) {
    auto devices = ParseDeviceList(text.substr(5));
    if (devices.ok() && devices->size() == 1) return devices->front();
  }
  return Status::InvalidArgument("expected cuda or cuda:N, got \"" + text.substr(0, 40) + "\"");
}

}  // namespace

int CheckTasks(const TasksCheckOptions& options) {
  auto tasks = common::LoadTaskTree(options.root);
  if (!tasks.ok()) {
    std::fprintf(stderr, "kforge tasks check: %s\n", tasks.status().message().c_str());
    return kExitUsage;
  }
  auto device = ParseCudaDevice(options.device);
  if (!device.ok()) {
    std::fprintf(stderr, "kforge tasks check: --device: %s\n", device.status().message().c_str());
    return kExitUsage;
  }
  verify::WorkerClient worker({SelfExecutable().string(), "worker", "--device", std::to_string(*device)});
  verify::WorkerClient::Reply hello = worker.Call({{"op", "hello"}}, std::chrono::seconds(120));
  if (hello.kind != verify::WorkerClient::Reply::Kind::kOk || hello.body.value("status", "") != "ok") {
    std::string why = hello.kind == verify::WorkerClient::Reply::Kind::kOk ? hello.body.value("message", "")
                                                                          : "worker: " + hello.detail;
    std::fprintf(stderr, "kforge tasks check: needs a GPU: %s\n", why.c_str());
    return kExitUsage;
  }
  int checked = 0, ok = 0, failed = 0, harness = 0;
  double worst = 0;
  std::string worst_task;
  for (const common::Task& task : *tasks) {
    if (!options.filter.empty() && fnmatch(options.filter.c_str(), task.id.c_str(), 0) != 0) continue;
    ++checked;
    verify::WorkerClient::Reply reply =
        worker.Call({{"op", "task_check"}, {"task_dir", task.dir.string()}, {"seed", options.seed}},
                    std::chrono::seconds(options.timeout_s));
    nlohmann::json record = reply.kind == verify::WorkerClient::Reply::Kind::kOk
                                ? reply.body
                                : nlohmann::json{{"status", "harness_error"}, {"message", "worker: " + reply.detail}};
    record["task"] = task.id;
    std::string status = record.value("status", "harness_error");
    ok += status == "ok";
    failed += status == "fail";
    harness += status != "ok" && status != "fail";
    int64_t peak = 0, footprint = 0;
    double ratio = WorstRatio(record, peak, footprint);
    if (ratio > worst) {
      worst = ratio;
      worst_task = task.id;
    }
    if (options.json) {
      PrintJsonLine(record);
      continue;
    }
    double ms = 0;
    for (const nlohmann::json& v : record.value("variants", nlohmann::json::array()))
      ms = std::max(ms, v.value("reference_ms", 0.0));
    std::printf("%-13s %-60s peak %s / footprint %s (%.2fx)  ref %.3f ms%s%s\n", status.c_str(), task.id.c_str(),
                GiB(peak).c_str(), GiB(footprint).c_str(), ratio, ms, status == "ok" ? "" : "  ",
                record.value("message", "").substr(0, 300).c_str());
    std::fflush(stdout);
  }
  std::fprintf(stderr, "tasks check: %d tasks, %d ok, %d fail, %d harness_error; worst peak/footprint %.2fx%s\n",
               checked, ok, failed, harness, worst, worst_task.empty() ? "" : (" (" + worst_task + ")").c_str());
  if (harness > 0) return kExitUsage;
  return failed > 0 ? kExitFailed : kExitOk;
}

}  // namespace kforge::cli
