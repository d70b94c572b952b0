// What every timed run of a candidate is checked against: buffer sets (one per placement), each with
// inputs of its own draw and the reference's outputs on them. A run uses the current set; its check
// compares the outputs with that set's draw, requires the inputs unchanged and the guards intact, poisons
// the outputs and moves on to the next set, so no two runs in a row see the same inputs. Shared by bench
// and the timing audit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/common/task.h"
#include "kforge/cuda/launch_plan.h"
#include "kforge/reference/runner.h"
#include "worker/candidate_buffers.h"

namespace kforge::worker {

/// Poison for timed runs: NaN in every float type.
inline constexpr uint8_t kTimingPoison = 0xFF;

/// How many sets of `bytes` each fit, at most `most`: the first is part of the task's budget, each further
/// one may take a quarter of the device memory free now.
int SetsThatFit(int most, int device, int64_t bytes);

class TimedRuns {
 public:
  /// `env` is the candidate's plan environment (scratch included): what a set allocates and poisons.
  TimedRuns(const common::Task& task, const cuda::PlanEnv& env) : task_(task), env_(env) {}

  /// One more set of guarded buffers with inputs drawn from `seed`, the reference's outputs on them,
  /// and its outputs poisoned.
  Status AddSet(reference::ReferenceProgram& program, const std::string& variant, uint64_t seed, int device);

  /// Runs rotate over the first `count` sets (all when 0) from the first, every set's outputs poisoned
  /// again; the count of checked runs starts again.
  Status Restart(size_t count = 0);

  size_t sets() const { return sets_.size(); }
  /// The current set's device addresses, for the run.
  const std::map<std::string, void*>& pointers() const { return sets_[next_].pointers(); }
  /// The current set's inputs (borrowed tensors over its buffers).
  reference::TensorSet& inputs() { return sets_[next_].inputs(); }
  /// Set `k`'s inputs, for the reference's own timed runs.
  const reference::TensorSet& inputs_of(size_t k) { return sets_[k].inputs(); }
  /// The current set's buffer `name` (an output, say).
  StatusOr<reference::Tensor> View(const std::string& name) const { return sets_[next_].View(name); }
  /// The first set, for a run after the timed ones.
  const std::map<std::string, void*>& first_pointers() const { return sets_.front().pointers(); }

  /// After the reference ran on set `k`: a reference may write its own inputs, and is trusted to.
  Status RedigestAfterReference(size_t k);

  /// After a run on the current set: guards intact, inputs unchanged and outputs within tolerance;
  /// then poisons the outputs and moves to the next set. InvalidArgument (and mismatched()) when the run
  /// got something wrong, Unavailable when the kernel faulted.
  Status Check(cudaStream_t stream);

  int checked() const { return checked_; }
  bool mismatched() const { return mismatched_; }

 private:
  Status Mismatch(const std::string& message);

  const common::Task& task_;
  const cuda::PlanEnv& env_;
  std::vector<CandidateBuffers> sets_;
  std::vector<reference::TensorSet> expected_;  ///< per set: the reference's outputs on its draw
  std::vector<std::map<std::string, uint64_t>> read_only_;  ///< per set: its read-only buffers' digests
  size_t next_ = 0;
  size_t rotation_ = 0;  ///< how many sets runs rotate over
  int checked_ = 0;
  bool mismatched_ = false;
};

}  // namespace kforge::worker
