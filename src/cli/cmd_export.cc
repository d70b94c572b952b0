// `kforge export`: trajectories to fine-tuning datasets (messages, pairs, trajectory) or KernelBench
// ModelNew files, with a dataset card and stats.json; a summary on stderr.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/run_inputs.h"
#include "kforge/common/python.h"
#include "kforge/export/exporter.h"
#include "kforge/finetune/hub.h"
#include "kforge/finetune/run.h"

namespace kforge::cli {
namespace {

struct ExportArgs {
  std::vector<std::string> runs;
  std::string format{exporter::FormatName(exporter::Format::kMessages)};
  std::string out;
  bool force = false;
  bool include_incorrect = false;
  bool include_suspect_timing = false;
  bool require_general = false;
  double min_speedup = 0;
  int max_turns = 0;
  double max_ops_fraction = 0;
  double min_sol = 0;
  std::string levels, tags, glob, balance, split, holdout;
  int64_t per_task = 0, balance_cap = 0;
  double near_dup = 0, holdout_threshold = 0.8;
  bool with_reasoning = false;
  std::string tool_arguments = "object", file_format = "jsonl", python, push_to_hub;
  std::filesystem::path tasks_root;
  std::map<std::string, CLI::Option*> given;  ///< options whose use the card records
};

/// scripts/NAME ($KFORGE_SCRIPTS/NAME when set).
std::filesystem::path Script(const char* name) { return ScriptPath(name); }

/// The options as the dataset card records them: every filter that was given.
nlohmann::json Describe(const exporter::ExportOptions& o) {
  nlohmann::json d = {{"format", exporter::FormatName(o.format)},
                      {"include_incorrect", o.filters.include_incorrect},
                      {"with_reasoning", o.rows.with_reasoning},
                      {"tool_arguments", o.rows.arguments_as_text ? "text" : "object"}};
  if (o.file_format != exporter::FileFormat::kJsonl)
    d["file_format"] = exporter::FileFormatName(o.file_format);
  const exporter::Filters& f = o.filters;
  if (f.include_suspect_timing) d["include_suspect_timing"] = true;
  if (f.require_general) d["require_general"] = true;
  if (f.min_speedup) d["min_speedup"] = *f.min_speedup;
  if (f.max_turns) d["max_turns"] = *f.max_turns;
  if (f.max_ops_fraction) d["max_ops_fraction"] = *f.max_ops_fraction;
  if (f.min_sol_pct) d["min_sol"] = *f.min_sol_pct;
  if (!f.levels.empty()) d["levels"] = f.levels;
  if (!f.tags.empty()) d["tags"] = f.tags;
  if (!f.task_glob.empty()) d["filter"] = f.task_glob;
  const exporter::SelectionOptions& s = o.selection;
  if (s.per_task) d["per_task"] = *s.per_task;
  if (s.near_dup) d["near_dup"] = *s.near_dup;
  if (s.balance != exporter::Balance::kNone) d["balance"] = exporter::kBalanceNames.Name(s.balance);
  if (s.balance_cap) d["balance_cap"] = *s.balance_cap;
  if (o.holdout) {
    d["holdout"] = o.holdout->string();
    d["holdout_threshold"] = o.holdout_threshold;
  }
  return d;
}

/// Turns the parsed flags into options; InvalidArgument naming the flag.
StatusOr<exporter::ExportOptions> ToOptions(const ExportArgs& a) {
  exporter::ExportOptions o;
  auto given = [&](const char* flag) { return a.given.at(flag)->count() > 0; };
  // `--format parquet` is short for messages rows in Parquet files. A dataset pushed to the Hub is
  // Parquet unless --file-format says otherwise: its files carry their features, whatever reads them.
  o.format = a.format == "parquet" ? exporter::Format::kMessages : *exporter::ParseFormat(a.format);
  const bool parquet =
      a.format == "parquet" ||
      exporter::kFileFormatNames.Parse(a.file_format) == exporter::FileFormat::kParquet ||
      (!a.push_to_hub.empty() && !given("--file-format") && exporter::IsConversation(o.format));
  o.out = a.out;
  o.force = a.force;
  o.rows.with_reasoning = a.with_reasoning;
  o.rows.arguments_as_text = a.tool_arguments == "text";
  if (parquet) {
    o.file_format = exporter::FileFormat::kParquet;
    o.parquet_writer = {a.python.empty() ? common::FindPython() : a.python,
                        Script("export_parquet.py").string()};
  }
  exporter::Filters& f = o.filters;
  f.include_incorrect = a.include_incorrect;
  f.include_suspect_timing = a.include_suspect_timing;
  f.require_general = a.require_general;
  if (given("--min-speedup")) f.min_speedup = a.min_speedup;
  if (given("--max-turns")) f.max_turns = a.max_turns;
  if (given("--max-ops-fraction")) f.max_ops_fraction = a.max_ops_fraction;
  if (given("--min-sol")) f.min_sol_pct = a.min_sol;
  if (given("--levels")) {
    StatusOr<std::vector<int>> levels = exporter::ParseLevels(a.levels);
    if (!levels.ok()) return Status::InvalidArgument("--levels: " + levels.status().message());
    f.levels = *levels;
  }
  if (given("--tags")) f.tags = exporter::SplitList(a.tags);
  if (given("--filter")) f.task_glob = a.glob;
  exporter::SelectionOptions& s = o.selection;
  if (given("--per-task")) s.per_task = a.per_task;
  if (given("--near-dup")) s.near_dup = a.near_dup;
  if (given("--balance")) s.balance = *exporter::kBalanceNames.Parse(a.balance);  // checked by the flag
  if (given("--balance-cap")) s.balance_cap = a.balance_cap;
  if (given("--holdout")) {
    o.holdout = a.holdout;
    o.holdout_threshold = a.holdout_threshold;
  }
  if (given("--split")) {
    StatusOr<exporter::SplitSpec> split = exporter::SplitSpec::Parse(a.split);
    if (!split.ok()) return Status::InvalidArgument("--split: " + split.status().message());
    o.split = *split;
  }
  KFORGE_RETURN_IF_ERROR(exporter::CheckExportOptions(o));
  if (o.format == exporter::Format::kKernelBench) {
    KFORGE_RETURN_IF_ERROR(CheckTasksRoot(a.tasks_root));
    o.tasks_root = a.tasks_root;
  }
  KFORGE_RETURN_IF_ERROR(exporter::CheckOutput(o.out, o.force));
  o.described = Describe(o);
  if (given("--split")) o.described["split"] = a.split;
  return o;
}

std::string Counts(const std::map<std::string, int64_t>& counts) {
  std::string text;
  for (const auto& [name, n] : counts) text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  return text;
}

/// The inputs, the output and its format: runs ... --require-general.
void AddOutputFlags(CLI::App& sub, ExportArgs* a) {
  sub.add_option("runs", a->runs,
                 "Run folders (their trajectories.jsonl), .jsonl files, or - for JSON lines on stdin")
      ->required();
  std::vector<std::string> formats = exporter::kFormatNames.Names();
  formats.push_back("parquet");  // messages rows in Parquet files
  sub.add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember(formats))
      ->default_val(a->format);
  a->given["--file-format"] =
      sub.add_option("--file-format", a->file_format,
                     "Files of messages and pairs rows: jsonl, or parquet (written with pyarrow by --python; "
                     "the default with --push-to-hub)")
      ->check(CLI::IsMember(exporter::kFileFormatNames.Names()))
      ->default_val("jsonl");
  sub.add_option("--tool-arguments", a->tool_arguments,
                 "Tool-call arguments as JSON objects (Hugging Face's convention) or as JSON text")
      ->check(CLI::IsMember({"object", "text"}))
      ->default_val("object");
  sub.add_option(
      "--push-to-hub", a->push_to_hub,
      "Upload the export to this Hugging Face Hub dataset repository (org/name; $HF_ENDPOINT, $HF_TOKEN)");
  sub.add_option(
      "--python", a->python,
      "Python with pyarrow and datasets for Parquet (default: $KFORGE_PYTHON, the kforge venv, the build's Python, python3)");
  sub.add_option("--out", a->out, "Output folder (created; must be empty unless --force)")->required();
  sub.add_flag("--force", a->force, "Write into a non-empty output folder, replacing a previous export");
  sub.add_flag("--include-incorrect", a->include_incorrect,
               "Also export records whose final solution is not correct");
  sub.add_flag("--include-suspect-timing", a->include_suspect_timing,
               "Also export records with an attempt whose timing kforge refused (faster than light, or not "
               "confirmed); their speedup stays null");
  sub.add_flag("--require-general", a->require_general,
               "Only correct records that are also correct at their task's derived sizes (default: correct at "
               "the task's own sizes, KernelBench's meaning)");
}

/// Which records go in: --min-speedup ... --with-reasoning, --tasks.
void AddFilterFlags(CLI::App& sub, ExportArgs* a) {
  auto& given = a->given;
  given["--min-speedup"] = sub.add_option("--min-speedup", a->min_speedup, "Only records at least this fast")
                               ->check(FiniteRange(0, 1e9));
  given["--max-turns"] =
      sub.add_option("--max-turns", a->max_turns, "Only records of at most N assistant turns")
          ->check(CLI::Range(1, 100000));
  given["--max-ops-fraction"] =
      sub.add_option(
             "--max-ops-fraction", a->max_ops_fraction,
             "Only records whose best attempt spent at most this share of its GPU time in library ops")
          ->check(FiniteRange(0, 1));
  given["--min-sol"] =
      sub.add_option("--min-sol", a->min_sol,
                     "Only records whose best kernel reached at least P% of speed of light (needs task costs)")
          ->check(FiniteRange(0, 1e6));
  given["--levels"] = sub.add_option("--levels", a->levels, "Only these KernelBench levels, e.g. 1,2");
  given["--tags"] = sub.add_option("--tags", a->tags, "Only tasks with one of these tags, e.g. matmul,fused");
  given["--filter"] =
      sub.add_option("--filter", a->glob, "Only task ids matching this glob")->check(NonEmptyFilter, "GLOB");
  given["--per-task"] = sub.add_option("--per-task", a->per_task, "At most K records per task, best first")
                            ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  given["--near-dup"] =
      sub.add_option("--near-dup", a->near_dup,
                     "Drop solutions this similar (MinHash Jaccard) to a faster one of the task")
          ->check(FiniteRange(0.01, 1));
  given["--balance"] =
      sub.add_option("--balance", a->balance, "Cap every level or tag group at the smallest's size")
          ->check(CLI::IsMember(exporter::kBalanceNames.Names()));
  given["--balance-cap"] =
      sub.add_option("--balance-cap", a->balance_cap, "Cap every --balance group at N instead")
          ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  given["--holdout"] =
      sub.add_option("--holdout", a->holdout, "Leave out these tasks: an ids file or a task root");
  sub.add_option("--holdout-threshold", a->holdout_threshold,
                 "Reference similarity (MinHash Jaccard) to a held-out task that also leaves a task out")
      ->default_val(0.8)
      ->check(FiniteRange(0.01, 1));
  given["--split"] =
      sub.add_option("--split", a->split, "Splits by task id hash, e.g. validation=0.05 (val: validation)");
  sub.add_flag("--with-reasoning", a->with_reasoning, "Keep the teacher's reasoning in assistant turns");
  AddTasksRootOption(sub, a->tasks_root);
}

int RunExportCommand(ExportArgs& a) {
  if (!a.push_to_hub.empty()) {
    if (Status repo = finetune::CheckHubRepo(a.push_to_hub); !repo.ok()) {
      return Fail("export", repo);
    }
  }
  StdinSpool stdin_records;
  if (Status read = stdin_records.Replace(a.runs); !read.ok()) {
    return Fail("export", read);
  }
  StatusOr<std::vector<std::filesystem::path>> files = ResolveRuns(a.runs);
  StatusOr<exporter::ExportOptions> options =
      files.ok() ? ToOptions(a) : StatusOr<exporter::ExportOptions>(files.status());
  if (!options.ok()) {
    return Fail("export", options.status());
  }
  WarningPrinter warn("export");
  StatusOr<exporter::DatasetStats> stats = exporter::Export(*files, *options, warn.Sink());
  warn.Finish();
  if (!stats.ok()) {
    return Fail("export", stats.status());
  }
  std::fprintf(stderr,
               "export: %lld records read from %zu file%s (%lld malformed, %lld torn lines skipped)\n",
               static_cast<long long>(stats->scan.records), files->size(), files->size() == 1 ? "" : "s",
               static_cast<long long>(stats->scan.malformed), static_cast<long long>(stats->scan.torn));
  if (stats->scan.duplicates)
    std::fprintf(stderr, "export: %lld duplicate records dropped (an id read more than once; the last finished kept)\n",
                 static_cast<long long>(stats->scan.duplicates));
  std::fprintf(stderr, "export: %lld %s records written to %s (%s)\n",
               static_cast<long long>(stats->exported), a.format.c_str(), a.out.c_str(),
               Counts(stats->splits).c_str());
  if (!stats->left_out.empty())
    std::fprintf(stderr, "export: left out: %s\n", Counts(stats->left_out).c_str());
  if (stats->exported == 0 && stats->left_out.count("incorrect") && !a.include_incorrect)
    std::fprintf(stderr,
                 "export: nothing correct to export (compile-only runs judge nothing correct); "
                 "--include-incorrect exports those records too\n");
  if (stats->exported == 0) return kExitFailed;
  if (!a.push_to_hub.empty()) {
    finetune::HubPush push{a.python.empty() ? common::FindPython() : a.python, Script("hub_push.py"),
                           a.push_to_hub, "dataset", a.out};
    StatusOr<nlohmann::json> pushed = finetune::PushToHub(push);
    if (!pushed.ok()) {
      return Fail("export", pushed.status().message() + " (the export in " + a.out + " is complete)");
    }
    std::fprintf(stderr, "export: pushed %d files to %s (commit %s)\n", pushed->value("files", 0),
                 pushed->value("url", std::string("?")).c_str(),
                 pushed->value("commit", std::string("?")).c_str());
  }
  return kExitOk;
}

}  // namespace

Runner AttachExport(CLI::App& sub) {
  auto a = std::make_shared<ExportArgs>();
  AddOutputFlags(sub, a.get());
  AddFilterFlags(sub, a.get());
  return [a] { return RunExportCommand(*a); };
}

}  // namespace kforge::cli
