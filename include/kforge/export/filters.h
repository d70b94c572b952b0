// The per-record filters of export: what a record must be to become training data, decided from the
// record alone (dedup, holdout, per-task caps and balance need the whole input: selection.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/dataset/trajectory.h"

namespace kforge::exporter {

struct Filters {
  /// Keep records whose best attempt is not verified correct (default: only correct ones).
  bool include_incorrect = false;
  /// Keep records with an attempt whose timing kforge refused (Attempt::suspect_timing; default: left
  /// out, since the kernel keeps state between runs or was not confirmed).
  bool include_suspect_timing = false;
  /// Keep only correct records that are also correct at their task's derived sizes
  /// (common::Generalises); default: correct in KernelBench's meaning is enough.
  bool require_general = false;
  /// Keep only correct records timed at least this fast (speedup >= X).
  std::optional<double> min_speedup;
  /// Keep only records of at most N assistant turns.
  std::optional<int> max_turns;
  /// Keep only records whose best attempt spent at most this share of its GPU time in library ops
  /// (LibraryOpsFraction); records without library ops always pass.
  std::optional<double> max_ops_fraction;
  /// Keep only correct records whose best kernel reached at least this % of speed of light
  /// (BestSolPct); a record without a roofline (its task has no cost) is left out.
  std::optional<double> min_sol_pct;
  /// Keep only these KernelBench levels; empty: every record, with a level or not.
  std::vector<int> levels;
  /// Keep only records whose task has at least one of these tags; empty: all.
  std::vector<std::string> tags;
  /// Keep only task ids matching this glob (fnmatch: `*` also crosses `/`); empty: all.
  std::string task_glob;
};

/// Why `record` is left out ("harness_error", "incorrect", "suspect_timing", "not_general", "min_speedup", "max_turns",
/// "max_ops_fraction", "min_sol", "level", "tag", "filter"), or nullopt when it passes. A record kforge could not judge
/// (Unjudged) is always left out unless it is correct.
std::optional<std::string_view> Reject(const dataset::Trajectory& record, const Filters& filters);

/// "1,2,3" -> {1, 2, 3}; InvalidArgument naming the bad item.
StatusOr<std::vector<int>> ParseLevels(const std::string& text);
/// "a,b" -> {"a", "b"}; empty items dropped.
std::vector<std::string> SplitList(const std::string& text);

}  // namespace kforge::exporter
