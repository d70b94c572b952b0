// The judge's audit: outputs of candidates that do no work, judged as a check judges a kernel's.
#include "worker/task_audit.h"

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "kforge/common/hash.h"
#include "kforge/cuda/plan_env.h"
#include "kforge/reference/compare.h"
#include "kforge/reference/no_work.h"
#include "kforge/reference/runner.h"
#include "worker/judge.h"
#include "worker/trial_plan.h"

namespace kforge::worker {
namespace {

using common::SplitMix64;

using reference::Tensor;
using reference::TensorSet;

/// What one trial gives every candidate to make its outputs from.
struct TrialData {
  const TensorSet& inputs;
  const TensorSet& expected;      // the reference's outputs on `inputs`
  const TensorSet& other;         // the reference's outputs on inputs of another seed
};

using MakeOutputs = std::function<StatusOr<TensorSet>(const TrialData&)>;

struct Candidate {
  verify::AuditedCandidate record;
  MakeOutputs make;
};

StatusOr<TensorSet> Filled(const TrialData& d, uint8_t byte) {
  TensorSet out;
  for (const auto& [name, ref] : d.expected.items()) {
    KFORGE_ASSIGN_OR_RETURN(Tensor t, reference::EmptyLike(ref, reference::Fill{reference::Fill::Kind::kByte, byte}));
    out.Set(name, std::move(t));
  }
  return out;
}

Candidate Named(std::string name, MakeOutputs make) {
  Candidate c;
  c.record.name = std::move(name);
  c.make = std::move(make);
  return c;
}

std::vector<Candidate> Candidates(const common::Task& task) {
  std::vector<Candidate> out;
  out.push_back(Named("zeros", [](const TrialData& d) { return Filled(d, 0x00); }));
  out.push_back(Named("byte_pattern", [](const TrialData& d) { return Filled(d, 0x3F); }));
  for (const common::TensorSpec& input : task.inputs) {
    out.push_back(Named("copy:" + input.name, [name = input.name](const TrialData& d) -> StatusOr<TensorSet> {
                     TensorSet set;
                     const Tensor* src = d.inputs.Find(name);
                     if (!src) return Status::Internal("no input " + name);
                     for (const auto& [out_name, ref] : d.expected.items()) {
                       KFORGE_ASSIGN_OR_RETURN(Tensor t, reference::CopyAs(*src, ref.dtype(), ref.shape()));
                       set.Set(out_name, std::move(t));
                     }
                     return set;
                   }));
  }
  out.push_back(Named("first_half", [](const TrialData& d) -> StatusOr<TensorSet> {
                   TensorSet set;
                   for (const auto& [name, ref] : d.expected.items()) {
                     KFORGE_ASSIGN_OR_RETURN(Tensor t, reference::FirstHalfOf(ref));
                     set.Set(name, std::move(t));
                   }
                   return set;
                 }));
  out.push_back(Named("other_inputs", [](const TrialData& d) -> StatusOr<TensorSet> {
                   return d.other;  // shares the buffers: compared, never written
                 }));
  return out;
}

verify::TaskAuditReply Harness(const std::string& message, std::vector<Candidate>& candidates) {
  verify::TaskAuditReply reply;
  reply.status = verify::TaskAuditStatus::kHarnessError;
  reply.message = message;
  for (Candidate& c : candidates) reply.candidates.push_back(c.record);
  return reply;
}

}  // namespace

verify::TaskAuditReply RunTaskAudit(GpuChecker& checker, const verify::TaskAuditRequest& request) {
  std::vector<Candidate> candidates;
  auto task_or = checker.TaskFor(request.task_dir);
  if (!task_or.ok()) return Harness(task_or.status().message(), candidates);
  const common::Task& task = **task_or;
  candidates = Candidates(task);
  for (Candidate& c : candidates) c.record.accepted = true;  // until a trial refuses it
  std::vector<common::Task> domain_tasks;
  for (const common::InputDomain& domain : task.domains) domain_tasks.push_back(WithDomain(task, domain));
  const OutputRules rules = OutputRules::For(task);
  const reference::Device cuda = reference::Device::Cuda(checker.device().index);

  for (size_t v = 0; v < task.variants.size(); ++v) {
    const common::Variant& variant = task.variants[v];
    if (variant.kind == common::VariantKind::kDerived) continue;  // decides no verdict, so defends nothing
    auto env = cuda::PlanEnvFor(task, variant);
    if (!env.ok()) return Harness(env.status().message(), candidates);
    bool scratch_only = false;
    if (Status room = checker.ReserveFor(task, PlanMemory(task, *env), scratch_only); !room.ok())
      return Harness(room.message(), candidates);
    auto program = checker.ProgramFor(task, variant.name);
    if (!program.ok()) return Harness("reference: " + program.status().message(), candidates);
    int count = v == 0 ? request.trials : 1;
    for (int t = 0; t < count; ++t) {
      TrialDraw draw = TrialDrawFor(v, t, count, static_cast<int>(domain_tasks.size()));
      const common::Task& draws = draw.domain >= 0 ? domain_tasks[draw.domain] : task;
      uint64_t seed = SplitMix64(request.seed ^ SplitMix64(v * 1000003 + t));
      auto inputs = reference::GenerateInputs(draws, variant.name, seed, draw.dist, cuda);
      if (!inputs.ok()) return Harness("input generation: " + inputs.status().message(), candidates);
      auto expected = (*program)->Run(*inputs);
      if (!expected.ok()) return Harness("reference: " + expected.status().message(), candidates);
      StatusOr<TensorSet> other = Status::Internal("not run");
      {
        auto other_inputs = reference::GenerateInputs(draws, variant.name, SplitMix64(seed), draw.dist, cuda);
        if (!other_inputs.ok()) return Harness("input generation: " + other_inputs.status().message(), candidates);
        other = (*program)->Run(*other_inputs);
        if (!other.ok()) return Harness("reference: " + other.status().message(), candidates);
      }
      TrialData data{*inputs, *expected, *other};
      for (Candidate& c : candidates) {
        if (!c.record.accepted) continue;
        auto outputs = c.make(data);
        if (!outputs.ok()) return Harness(c.record.name + ": " + outputs.status().message(), candidates);
        auto compared = reference::CompareAll(*expected, *outputs, task.tolerance);
        if (!compared.ok()) return Harness(compared.status().message(), candidates);
        common::Checks checks;
        if (auto problem = CheckOutputs(*compared, rules, checks)) {
          c.record.accepted = false;
          c.record.message = *problem + " in trial " + std::to_string(t) +
                             (task.variants.size() > 1 ? " (variant " + variant.name + ")" : "");
        }
      }
      cudaDeviceSynchronize();
    }
  }
  verify::TaskAuditReply reply;
  for (Candidate& c : candidates) reply.candidates.push_back(std::move(c.record));
  return reply;
}

}  // namespace kforge::worker
