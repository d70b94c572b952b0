// `kforge report`: KernelBench's metrics and kforge's own from trajectory records, per run, against a
// baseline, and the results of skill evals (--skill-eval); a terminal table, JSON, or one HTML page.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/run_inputs.h"
#include "kforge/common/files.h"
#include "kforge/export/report.h"
#include "kforge/export/report_html.h"
#include "kforge/export/report_table.h"
#include "kforge/skill/eval_report.h"

namespace kforge::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> runs;
  std::string html;
  bool json = false;
  std::string baseline;
  bool per_task = false;
  std::vector<std::string> skill_evals;
};

/// Runs and skill evals are told apart: eval.json (or a folder holding it) is never read as records,
/// nor a run folder as an eval.
Status CheckInputKinds(const ReportArgs& a) {
  std::vector<std::string> runs = a.runs;
  if (!a.baseline.empty()) runs.push_back(a.baseline);
  for (const std::string& run : runs) {
    std::error_code ec;
    if (skill::EvalFileOf(run) &&
        !std::filesystem::exists(std::filesystem::path(run) / "trajectories.jsonl", ec))
      return Status::InvalidArgument(
          run + ": a skill eval's output (eval.json), not a run; pass it as --skill-eval " + run);
  }
  for (const std::string& eval : a.skill_evals) {
    std::error_code ec;
    if (std::filesystem::is_directory(eval, ec) && !skill::EvalFileOf(eval))
      return Status::InvalidArgument("--skill-eval " + eval + ": a folder without eval.json" +
                                     (exporter::ResolveRun(eval).ok()
                                          ? " (a run folder: name it without --skill-eval)"
                                          : " (not a skill eval's output)"));
  }
  return Status::Ok();
}

StatusOr<std::vector<nlohmann::json>> ReadSkillEvals(const ReportArgs& a) {
  std::vector<nlohmann::json> evals;
  for (const std::string& argument : a.skill_evals) {
    StatusOr<nlohmann::json> eval = skill::ReadEvalReport(argument);
    if (!eval.ok()) return Status::InvalidArgument("--skill-eval " + eval.status().message());
    evals.push_back(std::move(*eval));
  }
  return evals;
}

StatusOr<exporter::Report> BuildReport(const ReportArgs& a, WarningPrinter& warn) {
  exporter::Report report;
  for (const std::string& run : a.runs) {
    KFORGE_ASSIGN_OR_RETURN(std::filesystem::path file, exporter::ResolveRun(run));
    KFORGE_ASSIGN_OR_RETURN(exporter::RunReport metrics, exporter::ReportRun(run, {file}, warn.Sink()));
    report.runs.push_back(std::move(metrics));
  }
  if (!a.baseline.empty()) {
    KFORGE_ASSIGN_OR_RETURN(std::filesystem::path file, exporter::ResolveRun(a.baseline));
    KFORGE_ASSIGN_OR_RETURN(report.baseline, exporter::ReportRun(a.baseline, {file}, warn.Sink()));
    for (const exporter::RunReport& run : report.runs)
      report.comparisons.push_back(exporter::Compare(run, *report.baseline));
  }
  return report;
}

/// The folder an input lives in when it is a run's or a skill eval's (a folder given, or the records
/// file or eval.json of one), else none: a loose file is only itself.
std::optional<std::filesystem::path> InputFolder(const std::filesystem::path& input) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(input, ec)) return input;
  const fs::path parent = input.parent_path().empty() ? fs::path(".") : input.parent_path();
  if (input.filename() == "trajectories.jsonl" || input.filename() == "eval.json" ||
      fs::exists(parent / "run.json", ec))
    return parent;
  return std::nullopt;
}

/// The page never replaces an input nor lands inside an input's run folder (run.json, unfinished.jsonl
/// and the rest are what a resume reads): compared by name and by device and inode.
Status CheckHtmlApart(const ReportArgs& a) {
  std::vector<std::string> inputs = a.runs;
  if (!a.baseline.empty()) inputs.push_back(a.baseline);
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const std::string& input : inputs)
    if (StatusOr<std::filesystem::path> file = exporter::ResolveRun(input); file.ok()) files.push_back(*file);
  for (const std::string& eval : a.skill_evals)
    files.push_back(std::filesystem::is_directory(eval, ec) ? std::filesystem::path(eval) / "eval.json"
                                                            : std::filesystem::path(eval));
  for (const std::filesystem::path& file : files)
    if (common::SameFile(a.html, file))
      return Status::InvalidArgument("--html " + a.html + " is the input " + file.string() +
                                     "; the report never writes over what it reads");
  inputs.insert(inputs.end(), a.skill_evals.begin(), a.skill_evals.end());
  for (const std::string& input : inputs)
    if (std::optional<std::filesystem::path> folder = InputFolder(input); folder && common::IsInside(a.html, *folder))
      return Status::InvalidArgument("--html " + a.html + " is inside the input folder " + folder->string() +
                                     "; the report never writes into what it reads");
  return Status::Ok();
}

}  // namespace

Runner AttachReport(CLI::App& sub) {
  auto a = std::make_shared<ReportArgs>();
  sub.add_option(
         "runs", a->runs,
         "Run folders (their trajectories.jsonl) or .jsonl files, side by side; - for JSON lines on stdin")
      ->required();
  sub.add_option("--html", a->html, "Also write the report as one self-contained HTML page");
  sub.add_flag("--json", a->json, "Print the report as one JSON line instead of tables");
  sub.add_option("--baseline", a->baseline, "A run to compare every run with (paired by task)");
  sub.add_flag("--per-task", a->per_task, "Add a row per task to the terminal tables");
  sub.add_option("--skill-eval", a->skill_evals,
                 "A skill eval's output folder (or its eval.json) to add: a section of the HTML page, a line "
                 "of the tables, an entry of the JSON (repeatable)");
  return [a]() {
    StdinSpool stdin_records;
    Status usage = stdin_records.Replace(a->runs);
    if (usage.ok()) usage = stdin_records.Replace(a->baseline);
    if (usage.ok()) usage = CheckInputKinds(*a);
    for (const std::string& run : a->runs)
      if (usage.ok()) usage = exporter::ResolveRun(run).status();
    if (usage.ok() && !a->baseline.empty()) usage = exporter::ResolveRun(a->baseline).status();
    StatusOr<std::vector<nlohmann::json>> evals = std::vector<nlohmann::json>{};
    if (usage.ok()) {
      evals = ReadSkillEvals(*a);
      usage = evals.status();
    }
    std::error_code ec;
    if (usage.ok() && !a->html.empty() && std::filesystem::is_directory(a->html, ec))
      usage = Status::InvalidArgument("--html " + a->html + ": a folder, not a file");
    if (usage.ok() && !a->html.empty()) usage = CheckHtmlApart(*a);
    if (!usage.ok()) {
      return Fail("report", usage);
    }
    WarningPrinter warn("report");
    StatusOr<exporter::Report> report = BuildReport(*a, warn);
    warn.Finish();
    if (!report.ok()) {
      return Fail("report", report.status());
    }
    std::vector<const exporter::RunReport*> read;
    for (const exporter::RunReport& run : report->runs) read.push_back(&run);
    if (report->baseline) read.push_back(&*report->baseline);
    for (const exporter::RunReport* run : read)
      if (run->scan.duplicates)
        std::fprintf(stderr, "report: %s: %lld duplicate records dropped (an id read more than once; the last finished kept)\n",
                     run->label.c_str(), static_cast<long long>(run->scan.duplicates));
    if (!a->html.empty()) {
      std::vector<exporter::HtmlSection> sections;
      for (const nlohmann::json& eval : *evals)
        sections.push_back({skill::EvalHtmlSection(eval, 2), skill::kEvalHtmlStyle});
      if (Status written = common::WriteFileAtomic(a->html, exporter::RenderHtml(*report, sections));
          !written.ok()) {
        return Fail("report", "--html " + written.message());
      }
    }
    if (a->json) {
      nlohmann::json json = exporter::ToJson(*report);
      if (!evals->empty()) json["skill_evals"] = *evals;
      PrintJsonLine(json);
    } else {
      std::string table = exporter::RenderTable(*report, a->per_task);
      if (!evals->empty()) table += "\n";
      for (const nlohmann::json& eval : *evals) table += skill::EvalSummaryLine(eval);
      std::fwrite(table.data(), 1, table.size(), stdout);
    }
    return kExitOk;
  };
}

}  // namespace kforge::cli
