// `kforge skill`: Agent Skills for the teacher loop. `check DIR...` refuses what the Agent Skills
// specification refuses (exit 0 when every folder is valid, 1 when one is not); `eval DIR` measures
// the lift a skill gives student models in verified kernels; `distill RUN_DIR...` has a teacher write a
// skill from verified trajectories (docs/skills.md).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/teacher_flag.h"
#include "kforge/common/files.h"
#include "kforge/common/text.h"
#include "kforge/llm/prices.h"
#include "kforge/skill/distill.h"
#include "kforge/skill/eval.h"
#include "kforge/skill/eval_report.h"
#include "kforge/skill/skill.h"

namespace kforge::cli {
namespace {

int Check(const std::vector<std::string>& dirs) {
  int invalid = 0;
  for (const std::string& dir : dirs) {
    skill::CheckResult r = skill::CheckSkill(dir);
    if (r.ok()) {
      std::printf("ok %s: %s, %zu readable file%s, body about %d tokens, %s\n", dir.c_str(),
                  r.skill.name.c_str(), r.skill.readable.size(), r.skill.readable.size() == 1 ? "" : "s",
                  r.skill.body_tokens, r.skill.hash.c_str());
      continue;
    }
    ++invalid;
    for (const std::string& problem : r.problems)
      std::printf("invalid %s: %s\n", dir.c_str(), common::Printable(problem).c_str());
  }
  return invalid == 0 ? kExitOk : kExitFailed;
}

struct EvalArgs {
  skill::EvalOptions options;
  GpuRunFlags gpu;
  std::string teacher, prices, html, protocol = "text";
  double temperature = 0, bench_time = 2;
  CLI::Option* temperature_option = nullptr;
  bool json = false;
};

void AddEvalOptions(CLI::App& eval, EvalArgs& args) {
  skill::EvalOptions& o = args.options;
  generate::GenerateOptions& run = o.run;
  eval.add_option("DIR", o.skill_dir, "The skill folder")->required();
  AddTasksRootOption(eval, run.tasks_root);
  eval.add_option("--teacher", args.teacher,
                  "Where the students are served: openai, anthropic, replay:FILE, exec:CMD")
      ->required();
  eval.add_option("--model", o.models, "Student models, comma-separated")->delimiter(',')->required();
  eval.add_option("--teacher-model", o.teacher_model,
                  "Also run this model without a skill (the teacher arm)");
  eval.add_option("--holdout", o.holdout,
                  "Operator families that count, comma-separated (task tags or id families)")
      ->delimiter(',')
      ->required();
  eval.add_option("--samples", run.samples, "Episodes per task and arm")
      ->default_val(4)
      ->check(CLI::Range(1, 100000));
  eval.add_option("--out", o.out, "Results: OUT/MODEL/ARM run folders and OUT/eval.json")->required();
  eval.add_option("--base-url", run.provider.base_url, "API endpoint of the students");
  eval.add_option("--api-key-env", run.provider.api_key_env, "Environment variable holding the API key");
  eval.add_option("--protocol", args.protocol,
                  "text (the skill's body in the prompt) or tools (read_skill_file)")
      ->default_val("text");
  eval.add_option("--max-turns", run.max_turns, "Turns per episode")
      ->default_val(4)
      ->check(CLI::Range(1, 1000));
  eval.add_option("--max-tokens", run.max_tokens, "Output cap per reply")
      ->default_val(8192)
      ->check(CLI::Range(1, 1000000));
  args.temperature_option = eval.add_option("--temperature", args.temperature, "Sampling temperature")
                                ->check(FiniteRange(0, 2), "[0, 2]");
  eval.add_option("--concurrency", run.concurrency, "Episodes in flight")
      ->default_val(16)
      ->check(CLI::Range(1, 4096));
  eval.add_option("--trials", run.bench.verify.trials, "Verification trials per candidate")
      ->default_val(3)
      ->check(CLI::Range(1, 1000));
  eval.add_option("--bench-time", args.bench_time, "Most seconds of timing per correct candidate")
      ->default_val(2)
      ->check(FiniteRange(0.01, 3600.0), "[0.01, 3600]");
  eval.add_flag("--compile-only", run.compile_only, "Compile and check plans only (no correctness: no lift)");
  eval.add_flag("--no-probe{false}", run.probe, "Skip the one-token request that checks each model at start");
  eval.add_option("--prompts", run.prompts_dir, "Prompt templates folder")->default_val(DefaultPromptsDir());
  eval.add_option("--prices", args.prices, "Price table (JSON)")
      ->default_val(DefaultPromptsDir() + "/prices.json");
  eval.add_option("--bootstrap", o.resamples, "Bootstrap resamples")
      ->default_val(10000)
      ->check(CLI::Range(100, 1000000));
  eval.add_option("--bootstrap-seed", o.bootstrap_seed, "Seed of the bootstrap")->default_val(0);
  eval.add_flag("--json", args.json, "Print eval.json instead of the table");
  eval.add_option("--html", args.html, "Also write the results as one HTML page to FILE");
  AddGpuRunFlags(eval, args.gpu, run.bench.verify.arch);
}

int Eval(EvalArgs& args) {
  skill::EvalOptions& o = args.options;
  generate::GenerateOptions& run = o.run;
  Status usage = ApplyGpuRunFlags(args.gpu, run.bench.verify);
  if (usage.ok()) usage = ParseTeacher(args.teacher, run.teacher);
  if (usage.ok()) usage = CheckTasksRoot(run.tasks_root);
  if (usage.ok()) {
    if (std::optional<dataset::Protocol> parsed = dataset::kProtocolNames.Parse(args.protocol))
      run.protocol = *parsed;
    else
      usage = Status::InvalidArgument("--protocol " + args.protocol.substr(0, 20) + ": expected text or tools");
  }
  if (usage.ok()) {
    auto prices = llm::PriceTable::Load(args.prices);
    if (prices.ok())
      run.client.prices = std::move(*prices);
    else
      usage = prices.status().WithContext("--prices");
  }
  if (!usage.ok()) {
    return Fail("skill eval", usage);
  }
  if (args.temperature_option->count() > 0) run.temperature = args.temperature;
  run.seed = run.bench.verify.seed.value_or(0);
  run.bench.measure.min_samples = 5;
  run.bench.measure.max_seconds = args.bench_time;
  auto eval = skill::RunSkillEval(o);
  if (!eval.ok()) {
    return Fail("skill eval", eval.status());
  }
  if (!args.html.empty()) {
    if (Status written = common::WriteFileAtomic(args.html, skill::EvalHtml(*eval)); !written.ok()) {
      return Fail("skill eval", "--html: " + written.message());
    }
  }
  if (args.json)
    PrintJsonLine(*eval);
  else
    std::fputs(skill::EvalTable(*eval).c_str(), stdout);
  return kExitOk;
}

struct DistillArgs {
  skill::DistillOptions options;
  std::vector<std::string> runs;
  std::string teacher, prices;
};

void AddDistillOptions(CLI::App& distill, DistillArgs& args) {
  skill::DistillOptions& o = args.options;
  distill.add_option("RUN_DIR", args.runs, "generate run folders (trajectories.jsonl)")->required();
  distill.add_option("--teacher", args.teacher, "anthropic, openai, replay:CASSETTE or exec:COMMAND")
      ->required();
  distill.add_option("--model", o.model, "The teacher's model");
  distill.add_option("--out", o.out, "The new skill folder, DIR/NAME (NAME is the skill's name)")->required();
  distill.add_option("--base-url", o.provider.base_url, "API endpoint");
  distill.add_option("--api-key-env", o.provider.api_key_env, "Environment variable holding the API key");
  distill.add_option("--max-tokens", o.max_tokens, "Output cap of the teacher's reply")
      ->default_val(8192)
      ->check(CLI::Range(1, 1000000));
  distill.add_option("--license", o.license, "The skill's license (front matter)");
  distill.add_option("--prompts", o.prompts_dir, "Prompt templates folder (skill_distill.md)")
      ->default_val(DefaultPromptsDir());
  distill.add_option("--prices", args.prices, "Price table (JSON)")
      ->default_val(DefaultPromptsDir() + "/prices.json");
}

int Distill(DistillArgs& args) {
  skill::DistillOptions& o = args.options;
  for (const std::string& run : args.runs) o.run_dirs.push_back(run);
  std::optional<llm::ProviderSpec> teacher;
  if (Status usage = ParseTeacher(args.teacher, teacher); !usage.ok()) {
    return Fail("skill distill", usage);
  }
  o.teacher = *teacher;
  auto prices = llm::PriceTable::Load(args.prices);
  if (!prices.ok()) {
    return Fail("skill distill", "--prices: " + prices.status().message());
  }
  o.client.prices = std::move(*prices);
  auto summary = skill::RunDistill(o);
  if (!summary.ok()) {
    return Fail("skill distill", summary.status());
  }
  std::string families;
  for (const std::string& f : summary->families) families += (families.empty() ? "" : ", ") + f;
  std::printf("distilled %s from %d verified episode%s (%d pitfall%s; families %s): %s\n",
              o.out.string().c_str(), summary->verified, summary->verified == 1 ? "" : "s", summary->pitfalls,
              summary->pitfalls == 1 ? "" : "s", families.c_str(), summary->hash.c_str());
  return kExitOk;
}

}  // namespace

Runner AttachSkill(CLI::App& sub) {
  struct Args {
    std::vector<std::string> check_dirs;
  };
  auto args = std::make_shared<Args>();
  sub.require_subcommand(1);
  CLI::App* check = sub.add_subcommand("check", "Check skill folders against the Agent Skills specification");
  check->add_option("DIR", args->check_dirs, "Skill folders (each holds a SKILL.md)")->required();
  auto eval_args = std::make_shared<EvalArgs>();
  CLI::App* eval = sub.add_subcommand(
      "eval", "Measure a skill's lift: students with no skill, the skill and a placebo on held-out tasks");
  AddEvalOptions(*eval, *eval_args);
  auto distill_args = std::make_shared<DistillArgs>();
  CLI::App* distill = sub.add_subcommand(
      "distill", "A teacher writes a skill from verified trajectories; kforge adds references and checks it");
  AddDistillOptions(*distill, *distill_args);
  return [args, check, eval, eval_args, distill, distill_args]() -> int {
    if (check->parsed()) return Check(args->check_dirs);
    if (eval->parsed()) return Eval(*eval_args);
    if (distill->parsed()) return Distill(*distill_args);
    return kExitUsage;
  };
}

}  // namespace kforge::cli
