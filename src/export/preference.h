// Preference pairs (`kforge export --format preference`): two attempts of one task that saw the same
// prompt, the one a rule prefers as `chosen` (docs/export.md, "Preference pairs"). The first pass keeps
// a small PairableAttempt per attempt; PairAttempts applies the rules; the second pass reads the paired
// records again and writes one row per pair.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "export/holdout.h"
#include "export/sinks.h"
#include "kforge/common/names.h"
#include "kforge/export/exporter.h"

namespace kforge::exporter::internal {

/// Why a pair's chosen attempt is preferred.
enum class PairRule {
  kCorrectOverIncorrect,  ///< the chosen one is verified correct, the rejected one is not
  kFasterOverSlower,      ///< both correct; the chosen one's speedup interval lies above the other's
};
inline constexpr common::NameTable<PairRule, 2> kPairRuleNames = {
    {{PairRule::kCorrectOverIncorrect, "correct_over_incorrect"}, {PairRule::kFasterOverSlower, "faster_over_slower"}}};
static_assert(kPairRuleNames.MatchesEnum());

/// What pairing needs of one attempt.
struct PairableAttempt {
  uint32_t record = 0;    ///< index into the pass's records
  uint32_t task = 0;      ///< index into the pass's tasks
  uint16_t attempt = 0;   ///< index into the record's attempts
  uint64_t prompt = 0;    ///< hash of the messages before its assistant turn and of the tools
  uint64_t solution = 0;  ///< SolutionKey of its solution; a hash of the record and turn without one
  bool correct = false;
  bool suspect = false;  ///< SuspectTiming: never chosen
  /// The bench record's speedup and its interval; NaN when it was not timed.
  double speedup = NAN, lo = NAN, hi = NAN;
};

struct PreferencePair {
  uint32_t chosen = 0, rejected = 0;  ///< indices into the attempts
  PairRule rule = PairRule::kCorrectOverIncorrect;
};

/// The pairs the rules allow among `attempts` with the same task and prompt, in task order (as the
/// tasks' indices), within a task correct_over_incorrect first, then by the chosen side's speedup
/// (highest first), then in input order; at most `per_task` per task.
std::vector<PreferencePair> PairAttempts(const std::vector<PairableAttempt>& attempts,
                                         std::optional<int64_t> per_task);

class PreferencePass {
 public:
  PreferencePass(const ExportOptions& options, Holdout& holdout, DatasetStats& stats, const WarningSink& warn);

  /// First pass: the record's pairable attempts.
  void Visit(const RecordRef& ref, dataset::Trajectory& record);
  /// Between the passes: tasks similar to a held-out one are left out, then the pairs are made.
  void Pair();
  /// Second pass: reads the paired records again and writes one row per pair into `sink`.
  Status Write(const std::vector<std::filesystem::path>& files, Sink& sink);

 private:
  struct Task {
    std::string id;
    int64_t records = 0;
    bool held_out = false;
  };
  /// What the second pass keeps of one paired attempt.
  struct Side {
    nlohmann::json message;  ///< its assistant turn
    nlohmann::json facts;    ///< id, turn, status, speedup, kernel_ms and the row's measurements
  };
  static nlohmann::json PairRow(const PreferencePair& p, const Side& chosen, const Side& rejected,
                                const nlohmann::json& prompt, const nlohmann::json& provenance);

  const ExportOptions& options_;
  Filters filters_;  ///< options_.filters keeping incorrect records: they hold the rejected sides
  Holdout& holdout_;
  DatasetStats& stats_;
  const WarningSink& warn_;
  std::vector<RecordRef> records_;
  std::vector<Task> tasks_;
  std::vector<MinHash> references_;  ///< per task, when a holdout is given
  std::unordered_map<std::string, uint32_t> task_index_;
  std::vector<PairableAttempt> attempts_;
  std::vector<PreferencePair> pairs_;
};

}  // namespace kforge::exporter::internal
