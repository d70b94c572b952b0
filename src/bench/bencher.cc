// The bench pipeline on top of verify's: a passed solution stays in its worker for a "bench"
// request; the reply's samples become statistics, a speedup and a roofline here.
#include "kforge/bench/bencher.h"

#include <chrono>
#include <cmath>
#include <random>

#include "kforge/bench/report.h"
#include "kforge/bench/wire.h"
#include "kforge/common/hash.h"
#include "kforge/common/solution.h"
#include "kforge/common/verdict.h"

namespace kforge::bench {
namespace {

BenchResult Failed(std::string task, std::string solution_hash, common::VerdictStatus status,
                   std::string message) {
  BenchResult result;
  result.task = std::move(task);
  result.solution_hash = std::move(solution_hash);
  result.status = status;
  result.message = std::move(message);
  return result;
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

BenchRequest Bencher::RequestFor(const common::Task& task, uint64_t seed) const {
  BenchRequest request;
  request.task_dir = task.dir;
  request.seed = seed;
  request.measure = options_.measure;
  return request;
}

std::chrono::milliseconds Bencher::BenchDeadline() const {
  return std::chrono::milliseconds(static_cast<int64_t>(options_.measure.max_seconds * 3000)) +
         std::chrono::minutes(2);
}

BenchResult Bencher::FromReply(const common::Task& task, const BenchReply& reply) const {
  if (reply.status != common::VerdictStatus::kOk) return Failed(task.id, "", reply.status, reply.message);
  auto result = MakeBenchResult(*reply.measurement, seed_, CostOf(task), reply.peak);
  if (!result.ok())
    return Failed(task.id, "", common::VerdictStatus::kHarnessError, result.status().message());
  result->task = task.id;
  result->device = reply.device;
  if (reply.peak && result->device) result->device->peak = *reply.peak;
  result->plan_split = reply.plan_split;
  if (reply.checked_runs > 0) result->input_draws = reply.placements;  // a candidate's: one draw per placement
  result->flags = BenchFlags(*result);  // again, with the split
  return *result;
}

BenchResult Bencher::Recheck(BenchResult first, verify::WorkerSession& worker, const BenchRequest& request,
                             const common::Task& task, std::chrono::milliseconds deadline) const {
  BenchRequest again = request;
  again.seed = common::SplitMix64(request.seed ^ 0x7265636865636bULL);  // other draws than the first
  again.measure.mode = request.measure.mode == Mode::kCold ? Mode::kHot : Mode::kCold;
  BenchResult second = FromReply(task, worker.Call<BenchReply>(again, deadline));
  const bool candidates_fault = second.status != common::VerdictStatus::kOk &&
                                second.status != common::VerdictStatus::kHarnessError &&
                                second.status != common::VerdictStatus::kTimeout;
  if (candidates_fault) {
    second.message = "re-timing an implausible speedup: " + second.message;
    return second;
  }
  // Not confirmed when the second measurement failed on kforge's side or finds much less.
  first.recheck_speedup = second.status == common::VerdictStatus::kOk ? second.speedup.ratio : std::nan("");
  first.flags = BenchFlags(first);
  return first;
}

std::function<std::optional<BenchResult>(const verify::AfterCheck&)> Bencher::TimingStage() const {
  std::chrono::milliseconds deadline = BenchDeadline();
  return [this, deadline](const verify::AfterCheck& c) -> std::optional<BenchResult> {
    BenchRequest request = RequestFor(c.task, c.seed);
    request.solution = c.solution;
    request.cubin = c.cubin;
    BenchResult result = FromReply(c.task, c.worker.Call<BenchReply>(request, deadline));
    // An implausible speedup is timed again before it is believed (a faster-than-light one never is).
    if (result.status == common::VerdictStatus::kOk && result.speedup.ratio > kImplausibleSpeedup &&
        common::SuspectTiming(result).empty())
      result = Recheck(std::move(result), c.worker, request, c.task, deadline);
    return result;
  };
}

verify::VerifyOptions Bencher::TimedVerifyOptions() const {
  verify::VerifyOptions options = options_.verify;
  options.after_check = TimingStage();
  return options;
}

BenchResult Bencher::Record(const common::Verdict& verdict, const std::optional<BenchResult>& timed) const {
  BenchResult result = verdict.status == common::VerdictStatus::kOk && timed
                           ? *timed
                           : Failed(verdict.task, verdict.solution_hash, verdict.status, verdict.message);
  result.solution_hash = verdict.solution_hash;
  result.seed = seed_;
  return result;
}

BenchSummary Bencher::Run(verify::SolutionReader& reader,
                          const std::function<void(const BenchResult&)>& emit) {
  return RunJudged(reader, [&emit](const BenchResult& result, const common::Verdict&) { emit(result); });
}

BenchSummary Bencher::RunJudged(verify::SolutionReader& reader,
                                const std::function<void(const BenchResult&, const common::Verdict&)>& emit) {
  verify::Verifier verifier(TimedVerifyOptions());
  BenchSummary summary;
  verify::VerifySummary verified =
      verifier.Run(reader, [&](const common::Verdict& verdict, const std::optional<BenchResult>& timed) {
        BenchResult result = Record(verdict, timed);
        ++summary.total;
        if (result.status == common::VerdictStatus::kOk) ++summary.ok;
        if (result.status == common::VerdictStatus::kHarnessError) ++summary.harness_errors;
        emit(result, verdict);
      });
  summary.no_gpu = verified.no_gpu;
  return summary;
}

BenchSummary Bencher::RunReferences(const std::vector<std::string>& task_ids,
                                    const std::function<void(const BenchResult&)>& emit) {
  BenchSummary summary;
  int device = options_.verify.devices.empty() ? 0 : options_.verify.devices.front();
  setenv("TORCH_CPP_LOG_LEVEL", "ERROR", 0);
  verify::WorkerSessionOptions session;
  session.program = options_.verify.worker_program;
  session.device = device;
  verify::WorkerSession worker(session);
  std::chrono::milliseconds deadline = BenchDeadline();
  for (const std::string& id : task_ids) {
    BenchResult result;
    auto task = common::FindTask(options_.verify.tasks_root, id);
    if (!task.ok()) {
      result = Failed(id, "", common::VerdictStatus::kInvalidSolution,
                      "task " + id + ": " + task.status().message());
    } else {
      BenchReply reply = worker.Call<BenchReply>(RequestFor(*task, seed_), deadline);
      if (reply.status == common::VerdictStatus::kNoGpu) summary.no_gpu = true;
      result = FromReply(*task, reply);
    }
    result.seed = seed_;
    ++summary.total;
    if (result.status == common::VerdictStatus::kOk) ++summary.ok;
    if (result.status == common::VerdictStatus::kHarnessError) ++summary.harness_errors;
    emit(result);
  }
  return summary;
}

}  // namespace kforge::bench
