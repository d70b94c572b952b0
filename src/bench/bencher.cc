// The bench pipeline on top of verify's: a passed solution stays in its worker for a "bench"
// request; the reply's samples become statistics, a speedup and a roofline here.
#include "kforge/bench/bencher.h"

#include <chrono>
#include <map>
#include <random>

#include "kforge/bench/wire.h"
#include "kforge/common/base64.h"
#include "kforge/common/solution.h"
#include "kforge/common/verdict.h"

namespace kforge::bench {
namespace {

BenchResult Failed(std::string task, std::string solution_hash, std::string status, std::string message) {
  BenchResult result;
  result.task = std::move(task);
  result.solution_hash = std::move(solution_hash);
  result.status = std::move(status);
  result.message = std::move(message);
  return result;
}

/// A worker's reply, or how the call failed, as a bench reply object.
nlohmann::json CallWorker(verify::WorkerClient& worker, const nlohmann::json& request,
                          std::chrono::milliseconds deadline) {
  verify::WorkerClient::Reply reply = worker.Call(request, deadline);
  if (reply.kind == verify::WorkerClient::Reply::Kind::kTimeout)
    return {{"status", "timeout"}, {"message", "worker: " + reply.detail}};
  if (reply.kind == verify::WorkerClient::Reply::Kind::kDied)
    return {{"status", "harness_error"}, {"message", "worker died: " + reply.detail}};
  return reply.body;
}

}  // namespace

std::optional<TaskCost> CostOf(const common::Task& task) {
  if (task.cost_flops.empty() && task.cost_bytes.empty()) return std::nullopt;
  TaskCost cost;
  const std::string& variant = task.variants.front().name;
  if (!task.cost_flops.empty()) {
    auto flops = common::EvalCost(task, task.cost_flops, variant);
    if (!flops.ok()) return std::nullopt;
    cost.flops = static_cast<double>(*flops);
  }
  if (!task.cost_bytes.empty()) {
    auto bytes = common::EvalCost(task, task.cost_bytes, variant);
    if (!bytes.ok()) return std::nullopt;
    cost.bytes = static_cast<double>(*bytes);
  }
  if (!task.inputs.empty()) cost.dtype = task.inputs.front().dtype;
  return cost;
}

Bencher::Bencher(BenchOptions options)
    : options_(std::move(options)),
      seed_(options_.verify.seed ? *options_.verify.seed
                                 : std::random_device{}() * uint64_t{0x100000000} + std::random_device{}()) {
  options_.verify.seed = seed_;
}

nlohmann::json Bencher::BenchRequest(const common::Task& task, uint64_t seed) const {
  return {{"op", "bench"},
          {"task_dir", task.dir.string()},
          {"seed", seed},
          {"measure", MeasureOptionsToJson(options_.measure)}};
}

std::chrono::milliseconds Bencher::BenchDeadline() const {
  return std::chrono::milliseconds(static_cast<int64_t>(options_.measure.max_seconds * 3000)) +
         std::chrono::minutes(2);
}

BenchResult Bencher::FromReply(const common::Task& task, const nlohmann::json& reply) const {
  std::string status = reply.value("status", "crash");
  if (status != "ok") return Failed(task.id, "", status, reply.value("message", ""));
  auto measurement = MeasurementFromJson(reply.value("measurement", nlohmann::json()));
  if (!measurement.ok()) return Failed(task.id, "", "harness_error", measurement.status().message());
  std::optional<DevicePeak> peak;
  if (auto p = DevicePeakFromJson(reply.value("peak", nlohmann::json())); p.ok()) peak = *p;
  auto result = MakeBenchResult(*measurement, seed_, CostOf(task), peak);
  if (!result.ok()) return Failed(task.id, "", "harness_error", result.status().message());
  result->task = task.id;
  result->device = reply.value("device", nlohmann::json());
  if (peak) result->device["peak"] = peak->ToJson();
  return *result;
}

std::function<nlohmann::json(const verify::AfterCheck&)> Bencher::TimingStage() const {
  std::chrono::milliseconds deadline = BenchDeadline();
  return [this, deadline](const verify::AfterCheck& c) {
    nlohmann::json request = BenchRequest(c.task, c.seed);
    request["solution"] = common::SolutionToJson(c.solution);
    request["cubin_b64"] = common::Base64Encode(c.cubin);
    nlohmann::json reply = CallWorker(c.worker, request, deadline);
    reply["task_dir"] = c.task.dir.string();
    return reply;
  };
}

BenchResult Bencher::Record(const common::Verdict& verdict, const nlohmann::json& after) {
  BenchResult result;
  if (verdict.status != common::VerdictStatus::kOk || after.is_null()) {
    result = Failed(verdict.task, verdict.solution_hash,
                    std::string(common::VerdictStatusName(verdict.status)), verdict.message);
  } else {
    std::string dir = after.value("task_dir", "");
    const common::Task* task = nullptr;
    {
      std::lock_guard<std::mutex> lock(tasks_mu_);
      auto it = tasks_.find(dir);
      if (it == tasks_.end()) {
        auto loaded = common::LoadTask(dir);
        if (loaded.ok()) it = tasks_.emplace(dir, std::move(*loaded)).first;
      }
      if (it != tasks_.end()) task = &it->second;  // std::map nodes stay put
    }
    result =
        task ? FromReply(*task, after)
             : Failed(verdict.task, verdict.solution_hash, "harness_error", "task folder vanished: " + dir);
    result.solution_hash = verdict.solution_hash;
  }
  result.seed = seed_;
  return result;
}

BenchSummary Bencher::Run(verify::SolutionReader& reader,
                          const std::function<void(const BenchResult&)>& emit) {
  verify::VerifyOptions verify_options = options_.verify;
  verify_options.after_check = TimingStage();
  verify::Verifier verifier(verify_options);
  BenchSummary summary;
  verify::VerifySummary verified =
      verifier.Run(reader, [&](const common::Verdict& verdict, const nlohmann::json& after) {
        BenchResult result = Record(verdict, after);
        ++summary.total;
        if (result.status == "ok") ++summary.ok;
        if (result.status == "harness_error") ++summary.harness_errors;
        emit(result);
      });
  summary.no_gpu = verified.no_gpu;
  return summary;
}

BenchSummary Bencher::RunReferences(const std::vector<std::string>& task_ids,
                                    const std::function<void(const BenchResult&)>& emit) {
  BenchSummary summary;
  int device = options_.verify.devices.empty() ? 0 : options_.verify.devices.front();
  setenv("TORCH_CPP_LOG_LEVEL", "ERROR", 0);
  verify::WorkerClient worker(
      {options_.verify.worker_program.string(), "worker", "--device", std::to_string(device)});
  std::chrono::milliseconds deadline = BenchDeadline();
  for (const std::string& id : task_ids) {
    BenchResult result;
    auto task = common::FindTask(options_.verify.tasks_root, id);
    if (!task.ok()) {
      result = Failed(id, "", "invalid_solution", "task " + id + ": " + task.status().message());
    } else {
      nlohmann::json reply = CallWorker(worker, BenchRequest(*task, seed_), deadline);
      if (reply.value("status", "") == "no_gpu") summary.no_gpu = true;
      result = FromReply(*task, reply);
    }
    result.seed = seed_;
    ++summary.total;
    if (result.status == "ok") ++summary.ok;
    if (result.status == "harness_error") ++summary.harness_errors;
    emit(result);
  }
  return summary;
}

}  // namespace kforge::bench
