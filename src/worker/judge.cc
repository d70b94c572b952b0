// The verdict on a candidate's outputs from their comparison with the reference's.
#include "worker/judge.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace kforge::worker {
namespace {

/// True when a candidate value is one of the poison patterns (an element never written).
bool LooksPoisoned(double value) {
  float poison_5a;
  uint32_t bits = 0x5A5A5A5Au;
  std::memcpy(&poison_5a, &bits, sizeof bits);
  return std::isnan(value) || value == static_cast<double>(poison_5a);
}

/// Relative L2 error allowed on every output: ten times the element rtol, at least 1e-3.
double RelL2Bound(const common::Tolerance& tol) { return std::max(10 * tol.rtol, 1e-3); }

/// True when a constant could match the whole reference output within tolerance.
bool NearConstant(const reference::CompareResult& r, const common::Tolerance& tol) {
  return r.ref_std <= tol.atol + tol.rtol * r.ref_max_abs;
}

}  // namespace

common::OutputComparison OutputRecord(const reference::CompareResult& r) {
  common::OutputComparison out;
  out.name = r.name;
  out.max_abs_err = r.max_abs_err;
  out.max_rel_err = r.max_rel_err;
  out.rel_l2_err = r.rel_l2_err;
  out.mismatches = r.mismatches;
  out.numel = r.numel;
  if (r.first_mismatch >= 0) out.first_mismatch = r.first_mismatch;
  return out;
}

OutputRules OutputRules::For(const common::Task& task) {
  OutputRules rules;
  rules.tol = task.tolerance;
  for (const common::TensorSpec& out : task.outputs)
    if (task.NoiseOutput(out.name)) rules.noise_outputs.insert(out.name);
  return rules;
}

std::optional<std::string> CheckOutputs(const std::vector<reference::CompareResult>& results,
                                        const OutputRules& rules, common::Checks& checks) {
  const common::Tolerance& tol = rules.tol;
  for (const reference::CompareResult& r : results) {
    if (NearConstant(r, tol)) checks.degenerate_reference = r.name + " is near-constant; norm check applied";
    if (!r.ok()) {
      if (LooksPoisoned(r.cand_at_first)) checks.poisoned_outputs = common::CheckOutcome::kFail;
      return r.name + ": " + std::to_string(r.mismatches) + " of " + std::to_string(r.numel) +
             " elements differ (first at index " + std::to_string(r.first_mismatch) + ": got " +
             std::to_string(r.cand_at_first) + ", expected " + std::to_string(r.ref_at_first) + ")";
    }
    // An output measured at import to be rounding noise (a mean of normalised values), or exactly
    // zero here, has no scale for a relative error: its elements alone decide. Small values with a
    // scale (probabilities over 393216 classes) are held to the bound like any other.
    if (rules.noise_outputs.count(r.name) || r.ref_max_abs == 0) {
      checks.elements_only =
          r.name + (r.ref_max_abs == 0 ? " is zero" : " is rounding noise") + "; judged by elements alone";
      continue;
    }
    if (r.rel_l2_err > RelL2Bound(tol)) {
      return r.name + ": relative L2 error " + std::to_string(r.rel_l2_err) + " exceeds " +
             std::to_string(RelL2Bound(tol));
    }
  }
  return std::nullopt;
}

}  // namespace kforge::worker
