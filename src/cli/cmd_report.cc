// `kforge report`: KernelBench's metrics and kforge's own from trajectory records, per run, against a
// baseline; a terminal table, JSON, or one HTML page.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/run_inputs.h"
#include "kforge/common/files.h"
#include "kforge/export/report.h"
#include "kforge/export/report_html.h"
#include "kforge/export/report_table.h"

namespace kforge::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> runs;
  std::string html;
  bool json = false;
  std::string baseline;
  bool per_task = false;
};

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

/// The page never replaces an input (compared by device and inode, so other names count).
Status CheckHtmlApart(const ReportArgs& a) {
  std::optional<std::pair<uint64_t, uint64_t>> page = common::FileIdentity(a.html);
  if (!page) return Status::Ok();
  std::vector<std::string> inputs = a.runs;
  if (!a.baseline.empty()) inputs.push_back(a.baseline);
  for (const std::string& input : inputs) {
    StatusOr<std::filesystem::path> file = exporter::ResolveRun(input);
    if (file.ok() && common::FileIdentity(*file) == page)
      return Status::InvalidArgument("--html " + a.html + " is the input " + file->string() +
                                     "; the report never writes over what it reads");
  }
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
  return [a]() {
    StdinSpool stdin_records;
    Status usage = stdin_records.Replace(a->runs);
    if (usage.ok()) usage = stdin_records.Replace(a->baseline);
    for (const std::string& run : a->runs)
      if (usage.ok()) usage = exporter::ResolveRun(run).status();
    if (usage.ok() && !a->baseline.empty()) usage = exporter::ResolveRun(a->baseline).status();
    std::error_code ec;
    if (usage.ok() && !a->html.empty() && std::filesystem::is_directory(a->html, ec))
      usage = Status::InvalidArgument("--html " + a->html + ": a folder, not a file");
    if (usage.ok() && !a->html.empty()) usage = CheckHtmlApart(*a);
    if (!usage.ok()) {
      std::fprintf(stderr, "kforge report: %s\n", usage.message().c_str());
      return kExitUsage;
    }
    WarningPrinter warn("report");
    StatusOr<exporter::Report> report = BuildReport(*a, warn);
    warn.Finish();
    if (!report.ok()) {
      std::fprintf(stderr, "kforge report: %s\n", report.status().message().c_str());
      return kExitUsage;
    }
    std::vector<const exporter::RunReport*> read;
    for (const exporter::RunReport& run : report->runs) read.push_back(&run);
    if (report->baseline) read.push_back(&*report->baseline);
    for (const exporter::RunReport* run : read)
      if (run->scan.duplicates)
        std::fprintf(stderr, "report: %s: %lld duplicate records dropped (an id read more than once; the last finished kept)\n",
                     run->label.c_str(), static_cast<long long>(run->scan.duplicates));
    if (!a->html.empty()) {
      if (Status written = common::WriteFileAtomic(a->html, exporter::RenderHtml(*report)); !written.ok()) {
        std::fprintf(stderr, "kforge report: --html %s\n", written.message().c_str());
        return kExitUsage;
      }
    }
    if (a->json) {
      PrintJsonLine(exporter::ToJson(*report));
    } else {
      std::string table = exporter::RenderTable(*report, a->per_task);
      std::fwrite(table.data(), 1, table.size(), stdout);
    }
    return kExitOk;
  };
}

}  // namespace kforge::cli
