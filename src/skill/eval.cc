// `kforge skill eval` (skill/eval.h): arms, episodes, metrics and lifts.
#include "kforge/skill/eval.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>

#include "kforge/common/files.h"
#include "kforge/dataset/jsonl.h"
#include "kforge/dataset/trajectory.h"
#include "kforge/skill/context.h"
#include "skill/stats.h"

namespace kforge::skill {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kFastP[] = {1.0, 1.5, 2.0};

}  // namespace

/// "kernelbench/level1/23_Softmax" -> "softmax"; "core/relu_3" -> "relu".
std::string IdFamily(const std::string& id) {
  std::string last = id.substr(id.rfind('/') == std::string::npos ? 0 : id.rfind('/') + 1);
  std::transform(last.begin(), last.end(), last.begin(), [](unsigned char c) { return std::tolower(c); });
  size_t digits = 0;
  while (digits < last.size() && std::isdigit(static_cast<unsigned char>(last[digits]))) ++digits;
  if (digits > 0 && digits < last.size() && last[digits] == '_') last = last.substr(digits + 1);
  size_t underscore = last.rfind('_');
  if (underscore != std::string::npos && underscore + 1 < last.size() &&
      std::all_of(last.begin() + static_cast<std::ptrdiff_t>(underscore) + 1, last.end(),
                  [](unsigned char c) { return std::isdigit(c); }))
    last = last.substr(0, underscore);
  return last;
}

namespace {

/// Sentences that sound like advice on kernels and hold none: no technique, no number, no API.
const char* const kPlaceboSentences[] = {
    "Kernels of this kind appear often in deep learning workloads.",
    "Read the task description and the reference program before writing anything.",
    "A correct kernel matters more than a fast one.",
    "The reference program defines what the output must be.",
    "Think about the problem as a whole before looking at the details.",
    "Good kernels are the result of careful work.",
    "Write code that another engineer can read and understand.",
    "Keep the solution focused on what the task asks for.",
    "The judge checks the outputs against the reference on fresh inputs.",
    "Consider what the operator computes and why it is useful.",
    "Clear names make a kernel easier to review.",
    "Take the time to understand the shapes involved in the task.",
    "A solution is judged as a whole, kernel and launch plan together.",
    "Many engineers have written kernels for operators like this one.",
    "State your plan briefly, then write the solution.",
    "Performance work starts from a solution that is correct.",
};

/// `bytes` bytes of placebo sentences, chosen by `rng`; a blank line every four sentences when `paragraphs`.
std::string PlaceboText(size_t bytes, std::mt19937_64& rng, bool paragraphs) {
  const size_t count = sizeof(kPlaceboSentences) / sizeof(kPlaceboSentences[0]);
  std::string text;
  int sentences = 0;
  while (text.size() < bytes) {
    if (!text.empty()) text += paragraphs && sentences % 4 == 0 ? "\n\n" : " ";
    text += kPlaceboSentences[rng() % count];
    ++sentences;
  }
  text.resize(bytes);
  return text;
}

std::string SafeFolderName(const std::string& model) {
  std::string name = model;
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) c = '_';
  if (name.empty() || name[0] == '.') name = "_" + name;
  return name;
}

/// The episodes of the run in `dir` (its current run id only), by task and sample.
StatusOr<ArmEpisodes> ReadEpisodes(const fs::path& dir, int samples) {
  KFORGE_ASSIGN_OR_RETURN(std::string run_text, common::ReadFile(dir / "run.json"));
  json run = json::parse(run_text, nullptr, false);
  if (!run.is_object() || !run.contains("run_id") || !run["run_id"].is_string())
    return Status::InvalidArgument((dir / "run.json").string() + ": no run_id");
  const std::string run_id = run["run_id"];
  ArmEpisodes episodes;
  const fs::path file = dir / "trajectories.jsonl";
  StatusOr<std::unique_ptr<dataset::JsonlReader>> reader = dataset::JsonlReader::Open(file);
  if (!reader.ok()) return episodes;  // no episode has ended yet
  while (std::optional<dataset::JsonlReader::Line> line = (*reader)->NextText()) {
    if (!line->value.ok()) return line->value.status();  // a line past the cap, a failed read
    json j = json::parse(line->text, nullptr, false);
    if (j.is_discarded()) continue;  // a torn last line: the episode runs again on a rerun
    KFORGE_ASSIGN_OR_RETURN(dataset::Trajectory t,
                            dataset::TrajectoryFromJson(j, file.string() + ":" + std::to_string(line->number)));
    if (t.run_id != run_id || t.sample < 0 || t.sample >= samples) continue;
    EvalEpisode e;
    e.correct = t.correct();
    e.status = t.correct()                       ? "ok"
               : t.compile_only                  ? "compile_only"  // not judged on a GPU: never correct
               : t.best && t.stop != dataset::StopReason::kLlmError ? std::string(t.attempts[*t.best].StatusName())
                                                                    : std::string(dataset::StopReasonName(t.stop));
    if (e.status.empty()) e.status = "no_solution";
    e.speedup = t.correct() ? t.speedup() : std::nullopt;
    if (e.correct && t.best) {
      const std::optional<common::BenchResult>& bench = t.attempts[*t.best].bench;
      if (bench && std::isfinite(bench->speedup.ratio) && std::isfinite(bench->speedup.lo))
        e.speedup_low = bench->speedup.lo;
    }
    e.input_tokens = t.usage.input_tokens + t.usage.cache_read_tokens + t.usage.cache_write_tokens;
    e.output_tokens = t.usage.output_tokens;
    e.cost_usd = t.usage.cost_usd;
    std::vector<EvalEpisode>& by_sample = episodes[t.task.id];
    EvalEpisode not_run;
    not_run.status = "not_run";
    by_sample.resize(static_cast<size_t>(samples), not_run);
    by_sample[static_cast<size_t>(t.sample)] = std::move(e);
  }
  return episodes;
}

double SolveRate(const std::vector<EvalEpisode>& episodes) {
  if (episodes.empty()) return 0;
  double correct = 0;
  for (const EvalEpisode& e : episodes) correct += e.correct;
  return correct / static_cast<double>(episodes.size());
}

/// The geometric mean of the correct episodes' speedups of one task, or nullopt.
std::optional<double> TaskSpeedup(const std::vector<EvalEpisode>& episodes) {
  double logs = 0;
  int n = 0;
  for (const EvalEpisode& e : episodes)
    if (e.correct && e.speedup && *e.speedup > 0) logs += std::log(*e.speedup), ++n;
  if (n == 0) return std::nullopt;
  return std::exp(logs / n);
}

json ArmJson(const ArmEpisodes& arm, const ArmEpisodes* none) {
  int episodes = 0, correct = 0;
  int fast[3] = {0, 0, 0};
  int64_t input = 0, output = 0;
  double cost = 0;
  std::map<std::string, int> failures;
  for (const auto& [task, list] : arm) {
    for (const EvalEpisode& e : list) {
      ++episodes;
      correct += e.correct;
      if (!e.correct) ++failures[e.status];
      for (int i = 0; i < 3; ++i) fast[i] += e.correct && e.speedup_low && *e.speedup_low > kFastP[i];
      input += e.input_tokens;
      output += e.output_tokens;
      cost += e.cost_usd;
    }
  }
  auto rate = [episodes](int n) { return episodes > 0 ? static_cast<double>(n) / episodes : 0.0; };
  json j = {{"episodes", episodes},
            {"correct", correct},
            {"correctness", rate(correct)},
            {"failures", failures},
            {"fast_p", {{"1", rate(fast[0])}, {"1.5", rate(fast[1])}, {"2", rate(fast[2])}}},
            {"input_tokens", input},
            {"output_tokens", output},
            {"cost_usd", cost}};
  if (none != nullptr && none != &arm) {
    double logs_arm = 0, logs_none = 0;
    int tasks = 0;
    for (const auto& [task, list] : arm) {
      auto it = none->find(task);
      if (it == none->end()) continue;
      auto a = TaskSpeedup(list), b = TaskSpeedup(it->second);
      if (!a || !b) continue;
      logs_arm += std::log(*a), logs_none += std::log(*b), ++tasks;
    }
    j["geomean_speedup_vs_none"] = {{"tasks", tasks},
                                    {"arm", tasks ? json(std::exp(logs_arm / tasks)) : json()},
                                    {"none", tasks ? json(std::exp(logs_none / tasks)) : json()}};
  }
  return j;
}

json LiftJson(const ArmEpisodes& a, const ArmEpisodes& b, int samples, int resamples, uint64_t seed) {
  std::vector<double> differences;
  int only_a = 0, only_b = 0;
  json worse = json::array();
  for (const auto& [task, list_a] : a) {
    auto it = b.find(task);
    if (it == b.end()) continue;
    const std::vector<EvalEpisode>& list_b = it->second;
    const double rate_a = SolveRate(list_a), rate_b = SolveRate(list_b);
    differences.push_back(rate_a - rate_b);
    if (rate_a < rate_b) worse.push_back({{"task", task}, {"rate", rate_a}, {"baseline_rate", rate_b}});
    for (size_t s = 0; s < std::min(list_a.size(), list_b.size()); ++s) {
      only_a += list_a[s].correct && !list_b[s].correct;
      only_b += !list_a[s].correct && list_b[s].correct;
    }
  }
  Interval lift = PairedBootstrap(differences, resamples, seed);
  const double mde = MinimumDetectableEffect(differences, samples);
  return {
      {"tasks", differences.size()},
      {"lift", lift.mean},
      {"low", lift.low},
      {"high", lift.high},
      {"mcnemar", {{"only_arm", only_a}, {"only_baseline", only_b}, {"p", McNemarExactP(only_b, only_a)}}},
      {"worse_tasks", worse},
      {"mde", std::isfinite(mde) ? json(mde) : json()}};
}

}  // namespace

std::vector<std::string> TaskFamilies(const common::Task& task) {
  std::vector<std::string> families;
  for (std::string tag : task.tags) {
    std::transform(tag.begin(), tag.end(), tag.begin(), [](unsigned char c) { return std::tolower(c); });
    families.push_back(tag);
  }
  families.push_back(IdFamily(task.id));
  std::sort(families.begin(), families.end());
  families.erase(std::unique(families.begin(), families.end()), families.end());
  return families;
}

TaskSelection SelectTasks(const std::vector<common::Task>& tasks, const Skill& skill,
                          const std::vector<std::string>& holdout) {
  std::set<std::string> skill_families(skill.families.begin(), skill.families.end());
  std::set<std::string> eval_tasks;
  for (const EvalCase& c : skill.evals) {
    eval_tasks.insert(c.task);
    skill_families.insert(c.family.empty() ? IdFamily(c.task) : c.family);
  }
  const std::set<std::string> wanted(holdout.begin(), holdout.end());
  TaskSelection selection;
  for (const common::Task& task : tasks) {
    const std::vector<std::string> families = TaskFamilies(task);
    bool named = false;
    std::string shared;
    for (const std::string& f : families) {
      named |= wanted.count(f) > 0;
      if (skill_families.count(f) && shared.empty()) shared = f;
    }
    if (!named) continue;
    if (eval_tasks.count(task.id))
      selection.left_out.emplace_back(task.id, "the skill was built from it (evals/evals.json)");
    else if (!shared.empty())
      selection.left_out.emplace_back(task.id, "its family " + shared + " is one the skill was built from");
    else if (task.Unjudgeable())
      selection.left_out.emplace_back(task.id, "unjudgeable (" + std::string(task.UnjudgeableReason()) + ")");
    else
      selection.counted.push_back(task.id);
  }
  return selection;
}

generate::ContextSkill MakePlacebo(const Skill& skill) {
  std::seed_seq seq(skill.hash.begin(), skill.hash.end());
  std::mt19937_64 rng(seq);
  generate::ContextSkill placebo;
  placebo.name = skill.name;
  placebo.description = PlaceboText(skill.description.size(), rng, false);
  placebo.body = PlaceboText(skill.body.size(), rng, true);
  placebo.readable["SKILL.md"] =
      "---\nname: " + placebo.name + "\ndescription: \"" + placebo.description + "\"\n---\n" + placebo.body;
  placebo.hash = "placebo:" + skill.hash;
  return placebo;
}

json ModelReport(const std::map<std::string, ArmEpisodes>& arms, int samples, int resamples, uint64_t seed) {
  json report = {{"arms", json::object()}, {"lifts", json::object()}};
  auto none = arms.find("none");
  for (const auto& [name, episodes] : arms)
    report["arms"][name] = ArmJson(episodes, none == arms.end() ? nullptr : &none->second);
  const std::pair<const char*, const char*> pairs[] = {
      {"skill", "none"}, {"placebo", "none"}, {"skill", "placebo"}, {"teacher", "none"}};
  for (const auto& [a, b] : pairs) {
    if (!arms.count(a) || !arms.count(b)) continue;
    report["lifts"][std::string(a) + "_vs_" + b] = LiftJson(arms.at(a), arms.at(b), samples, resamples, seed);
  }
  return report;
}

/// Holm across models on the skill's McNemar p, then the verdict of each model.
void Decide(json& models) {
  std::vector<double> p;
  for (const json& m : models) p.push_back(m["lifts"]["skill_vs_none"]["mcnemar"]["p"].get<double>());
  std::vector<double> adjusted = HolmAdjust(p);
  for (size_t i = 0; i < models.size(); ++i) {
    json& lifts = models[i]["lifts"];
    lifts["skill_vs_none"]["mcnemar"]["holm_p"] = adjusted[i];
    const bool above_none = lifts["skill_vs_none"]["low"].get<double>() > 0 && adjusted[i] < 0.05;
    const bool above_placebo =
        lifts.contains("skill_vs_placebo") && lifts["skill_vs_placebo"]["low"].get<double>() > 0;
    models[i]["beneficial"] = above_none && above_placebo;
    models[i]["verdict"] = above_none && above_placebo ? "beneficial"
                           : above_none                ? "lift over no skill, but not over the placebo"
                                                       : "no lift shown";
  }
}

StatusOr<json> RunSkillEval(const EvalOptions& options) {
  if (options.models.empty()) return Status::InvalidArgument("--model: name at least one student model");
  if (options.holdout.empty())
    return Status::InvalidArgument("--holdout: name the operator families that count");
  if (options.out.empty()) return Status::InvalidArgument("--out is required");
  KFORGE_ASSIGN_OR_RETURN(Skill skill, LoadSkill(options.skill_dir));
  KFORGE_ASSIGN_OR_RETURN(std::vector<common::Task> tasks, common::LoadTaskTree(options.run.tasks_root));
  TaskSelection selection = SelectTasks(tasks, skill, options.holdout);
  if (selection.counted.empty()) {
    std::string why = selection.left_out.empty()
                          ? "no task under " + options.run.tasks_root.string() +
                                " has one of these families (task tags or id families)"
                          : std::to_string(selection.left_out.size()) +
                                " were named and all are left out, e.g. " + selection.left_out[0].first +
                                ": " + selection.left_out[0].second;
    return Status::InvalidArgument("--holdout: no task counts: " + why);
  }
  std::string filter;
  for (const std::string& id : selection.counted) filter += (filter.empty() ? "" : ",") + id;

  bool compile_only = false;  // some arm ran without a GPU
  const generate::ContextSkill with_skill = ContextOf(skill);
  const generate::ContextSkill placebo = MakePlacebo(skill);
  auto run_arm = [&](const std::string& model, const std::string& arm,
                     std::vector<generate::ContextSkill> skills) -> StatusOr<ArmEpisodes> {
    generate::GenerateOptions run = options.run;
    run.model = model;
    run.filter = filter;
    run.skills = std::move(skills);
    run.out = options.out / SafeFolderName(model) / arm;
    std::fprintf(stderr, "skill eval: %s, arm %s -> %s\n", model.c_str(), arm.c_str(),
                 run.out.string().c_str());
    auto summary = generate::RunGenerate(run);
    if (!summary.ok()) return summary.status().WithContext(model + ", arm " + arm);
    if (!summary->fatal.ok()) return summary->fatal.WithContext(model + ", arm " + arm);
    compile_only |= summary->compile_only;
    // Arms compared on different episodes would not be paired: finish them first.
    if (summary->deferred > 0 || summary->stopped_by_budget)
      return Status::Unavailable(model + ", arm " + arm + ": " + std::to_string(summary->deferred) +
                                 " episodes ended on transient teacher errors" +
                                 (summary->stopped_by_budget ? " or the budget" : "") +
                                 "; run the same command again to finish them (" + run.out.string() + " resumes)");
    return ReadEpisodes(run.out, run.samples);
  };

  std::optional<ArmEpisodes> teacher;
  if (!options.teacher_model.empty()) {
    KFORGE_ASSIGN_OR_RETURN(ArmEpisodes episodes, run_arm(options.teacher_model, "teacher", {}));
    teacher = std::move(episodes);
  }
  json models = json::array();
  for (const std::string& model : options.models) {
    std::map<std::string, ArmEpisodes> arms;
    KFORGE_ASSIGN_OR_RETURN(arms["none"], run_arm(model, "none", {}));
    KFORGE_ASSIGN_OR_RETURN(arms["skill"], run_arm(model, "skill", {with_skill}));
    KFORGE_ASSIGN_OR_RETURN(arms["placebo"], run_arm(model, "placebo", {placebo}));
    if (teacher) arms["teacher"] = *teacher;
    json report = ModelReport(arms, options.run.samples, options.resamples, options.bootstrap_seed);
    report["model"] = model;
    models.push_back(std::move(report));
  }
  Decide(models);
  json left_out = json::array();
  for (const auto& [id, reason] : selection.left_out) left_out.push_back({{"task", id}, {"reason", reason}});
  json eval = {{"schema", "kforge.skill_eval/1"},
               {"skill", {{"name", skill.name}, {"hash", skill.hash}, {"dir", skill.dir.string()}}},
               {"placebo", {{"hash", placebo.hash}, {"body_bytes", placebo.body.size()}}},
               {"holdout", options.holdout},
               {"tasks", selection.counted},
               {"left_out", left_out},
               {"samples", options.run.samples},
               {"seed", options.run.seed},
               {"protocol", std::string(dataset::ProtocolName(options.run.protocol))},
               {"compile_only", compile_only},
               {"teacher_model", options.teacher_model},
               {"bootstrap", {{"resamples", options.resamples}, {"seed", options.bootstrap_seed}}},
               {"models", models}};
  KFORGE_RETURN_IF_ERROR(common::WriteFileAtomic(options.out / "eval.json", eval.dump(2) + "\n"));
  return eval;
}

}  // namespace kforge::skill
