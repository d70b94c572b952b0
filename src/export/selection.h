// What an export keeps of the whole input: exact and near-duplicate solutions of a task (keeping the
// best), at most K records per task, and a cap per level or tag. Decided from one small Candidate per
// record that passed the per-record filters, so memory grows by tens of bytes per such record. Its
// options (SelectionOptions) are part of ExportOptions, in kforge/export/exporter.h.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "export/dedup.h"
#include "kforge/export/exporter.h"
#include "kforge/export/scan.h"

namespace kforge::exporter {

/// A task as selection groups it.
struct TaskEntry {
  std::string id;
  std::optional<int> level;
  std::string group_tag;  ///< the task's first tag ("" without tags): its group for `--balance tag`
  bool held_out = false;  ///< its reference is close to a held-out one: every record is dropped
};

/// One record that passed the per-record filters.
struct Candidate {
  RecordRef ref;
  uint64_t key = 0;      ///< SolutionKey of the best attempt's solution; unique when there is none
  uint32_t id_hash = 0;  ///< low bits of Hash64(record id), to check the record on the second pass
  uint32_t task = 0;     ///< index into the task table
  float speedup = NAN;   ///< of a correct best attempt; NaN when none
  uint16_t turns = 0;
  bool correct = false;
  bool has_solution = false;  ///< near-duplicate checks apply only to records with a solution
};

struct Selection {
  std::vector<uint32_t> kept;  ///< candidate indices, ascending (input order)
  /// Dropped candidates by reason: "holdout_similar", "duplicate", "near_duplicate", "per_task", "balance".
  std::map<std::string, int64_t> dropped;
};

/// Best first: correct, then faster (no speedup last), then fewer turns, then earlier in the input.
bool Better(const Candidate& a, uint32_t a_index, const Candidate& b, uint32_t b_index);

/// `signatures` holds one CompactMinHash per candidate when `options.near_dup` is set, else nothing.
/// Duplicates are looked for within a task only: the same kernel for two tasks is two examples.
Selection Select(const std::vector<TaskEntry>& tasks, const std::vector<Candidate>& candidates,
                 const std::vector<CompactMinHash>& signatures, const SelectionOptions& options);

}  // namespace kforge::exporter
