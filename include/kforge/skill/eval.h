// `kforge skill eval`: the lift a skill gives students, measured in compiled, verified and timed
// kernels. Each model runs the same held-out tasks, samples and seed under several arms: no skill,
// the skill, and a placebo of the same length that holds no technique (and, optionally, the teacher
// itself). The lift is task-paired, with bootstrap intervals, exact McNemar tests, Holm's
// correction across models and the minimum detectable effect (docs/skills.md).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"
#include "kforge/common/task.h"
#include "kforge/generate/generate.h"
#include "kforge/skill/skill.h"

namespace kforge::skill {

struct EvalOptions {
  std::filesystem::path skill_dir;
  /// The students' runs: tasks root, teacher (provider), judge, samples, seed, protocol, prompts...
  /// Its model, filter, skills and out are set per arm.
  generate::GenerateOptions run;
  /// Student models (--model M1,M2). At least one.
  std::vector<std::string> models;
  /// The operator families that count (--holdout); tasks of the skill's own families are left out.
  std::vector<std::string> holdout;
  /// Also run this model without a skill as the "teacher" arm (--teacher-model). Empty: no such arm.
  std::string teacher_model;
  /// Results: OUT/<model>/<arm>/ run folders, OUT/eval.json.
  std::filesystem::path out;
  /// Bootstrap resamples and the generator's seed. Defaults 10000, 0.
  int resamples = 10000;
  uint64_t bootstrap_seed = 0;
};

/// The family of a task id: its last part, lower case, without a leading "NN_" and a trailing "_N".
std::string IdFamily(const std::string& id);

/// The operator families of a task: its tags and the family of its id (the last part of the id,
/// lower case, without a leading "NN_" and a trailing "_N": "kernelbench/level1/23_Softmax" ->
/// "softmax").
std::vector<std::string> TaskFamilies(const common::Task& task);

/// Which tasks count: those with a family in `holdout` and none of the skill's (evals.json families
/// and the families of its eval tasks), and not an eval task itself. The others that were named,
/// and the reason each is left out.
struct TaskSelection {
  std::vector<std::string> counted;
  std::vector<std::pair<std::string, std::string>> left_out;  ///< task id, reason
};
TaskSelection SelectTasks(const std::vector<common::Task>& tasks, const Skill& skill,
                          const std::vector<std::string>& holdout);

/// The placebo arm's skill: the skill's name, a description and a body of the same lengths made of
/// relevant-sounding sentences that hold no technique, chosen from a fixed list by the skill's hash
/// (the same skill always gets the same placebo).
generate::ContextSkill MakePlacebo(const Skill& skill);

/// One episode as the eval counts it.
struct EvalEpisode {
  bool correct = false;
  std::string status;                 ///< the best attempt's status ("ok", "mismatch", ...) or the stop
  std::optional<double> speedup;      ///< of a correct best attempt
  std::optional<double> speedup_low;  ///< the lower bound of its 95% interval
  int64_t input_tokens = 0, output_tokens = 0;
  double cost_usd = 0;
};

/// An arm's episodes: task id -> episodes by sample index.
using ArmEpisodes = std::map<std::string, std::vector<EvalEpisode>>;

/// The metrics and lifts of one model's arms (names -> episodes), as JSON (docs/formats.md,
/// kforge.skill_eval/1, models[]). "beneficial" is true only when the skill's lift over no skill has a
/// 95% interval above zero, its Holm-adjusted McNemar p (set by the caller) is below 0.05, and its
/// lift over the placebo has an interval above zero too.
nlohmann::json ModelReport(const std::map<std::string, ArmEpisodes>& arms, int samples, int resamples,
                           uint64_t seed);

/// Runs every arm of every model and writes OUT/eval.json; returns that JSON.
StatusOr<nlohmann::json> RunSkillEval(const EvalOptions& options);

}  // namespace kforge::skill
