// Report: per-run metrics and their JSON form.
#include "kforge/export/report.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "export/episode.h"

namespace kforge::exporter {
namespace {

using nlohmann::json;

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

/// A figure computed from float32 samples, with the digits a float holds: 1.1, not the
/// 1.100000023841858 its widening to double prints.
json FloatFigure(double v) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, static_cast<float>(v));
  if (ec != std::errc()) return json(v);
  return json(std::strtod(std::string(text, end).c_str(), nullptr));
}

std::string FastName(size_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "fast_%g", kFastP[i]);
  return buf;
}

json ToJson(const RunReport& run) {
  json groups = json::array();
  for (const GroupMetrics& g : run.groups) groups.push_back(ToJson(g));
  json tasks = json::array();
  for (const auto& [id, t] : run.tasks) {
    json fast = json::object();
    for (size_t i = 0; i < kFastP.size(); ++i) fast[FastName(i)] = t.fast[i];
    tasks.push_back(
        {{"task", id},
         {"level", t.level ? json(*t.level) : json(nullptr)},
         {"episodes", t.episodes},
         {"correct", t.correct},
         {"timed", t.timed},
         {"unjudged", t.unjudged},
         {"fast", fast},
         {"mostly_library_ops", t.mostly_library_ops},
         {"best_speedup", Opt(t.best_speedup)},
         {"mean_turns", t.episodes ? json(static_cast<double>(t.turns_sum) / t.episodes) : json(nullptr)}});
  }
  json read = {{"records", run.scan.records}, {"malformed", run.scan.malformed}, {"torn", run.scan.torn}};
  if (run.scan.duplicates) read["duplicates"] = run.scan.duplicates;
  return {
      {"label", run.label},
      {"files", run.files},
      {"read", read},
      {"groups", groups},
      {"tasks", tasks}};
}

}  // namespace

StatusOr<RunReport> ReportRun(const std::string& label, const std::vector<std::filesystem::path>& files,
                              const WarningSink& warn) {
  RunReport run;
  run.label = label;
  for (const auto& f : files) run.files.push_back(f.string());
  MetricsBuilder builder;
  KFORGE_RETURN_IF_ERROR(ScanRecords(
      files, [&](const RecordRef&, dataset::Trajectory& t) { builder.Add(Summarize(t)); }, run.scan, warn));
  run.groups = builder.Groups();
  run.tasks = builder.tasks();
  return run;
}

json ToJson(const GroupMetrics& g) {
  json fast = json::object(), fast_own = json::object();
  for (size_t i = 0; i < kFastP.size(); ++i) {
    fast[FastName(i)] = Opt(g.fast_p[i]);
    fast_own[FastName(i)] = Opt(g.fast_p_without_library_ops[i]);
  }
  json pass = json::object();
  for (const auto& [k, v] : g.pass_at_k) pass["pass@" + std::to_string(k)] = v;
  json quantiles = nullptr;
  if (g.speedup_quantiles) {
    const Quantiles& q = *g.speedup_quantiles;
    quantiles = {{"p10", FloatFigure(q.p10)},
                 {"p25", FloatFigure(q.p25)},
                 {"p50", FloatFigure(q.p50)},
                 {"p75", FloatFigure(q.p75)},
                 {"p90", FloatFigure(q.p90)}};
  }
  return {{"name", g.name},
          {"episodes", g.episodes},
          {"correct", g.correct},
          {"timed", g.timed},
          {"harness_errors", g.unjudged},
          {"llm_errors", g.llm_errors},
          {"tasks", g.tasks},
          {"correctness", Opt(g.correctness)},
          {"correct_general", g.correct_general},
          {"general_correctness", Opt(g.general_correctness)},
          {"suspect_timing", g.suspect_timing},
          {"fast_p", fast},
          {"mostly_library_ops", g.mostly_library_ops},
          {"fast_p_without_library_ops", fast_own},
          {"geomean_speedup", Opt(g.geomean_speedup)},
          {"speedup_quantiles", quantiles},
          {"pass_at_k", pass},
          {"first_turn_compile_rate", Opt(g.first_turn_compile_rate)},
          {"first_turn_correct_rate", Opt(g.first_turn_correct_rate)},
          {"mean_repair_turns", Opt(g.mean_repair_turns)},
          {"median_sol_pct", g.median_sol_pct ? FloatFigure(*g.median_sol_pct) : json(nullptr)},
          {"median_reference_sol_pct",
           g.median_reference_sol_pct ? FloatFigure(*g.median_reference_sol_pct) : json(nullptr)},
          {"tokens_per_correct", Opt(g.tokens_per_correct)},
          {"cost_per_correct_usd", Opt(g.cost_per_correct)},
          {"cost_known", g.cost_known},
          {"first_correct_turns", g.first_correct_turns}};
}

json ToJson(const Report& report) {
  json runs = json::array();
  for (const RunReport& run : report.runs) runs.push_back(ToJson(run));
  json comparisons = json::array();
  for (const Comparison& c : report.comparisons) {
    json deltas = json::array();
    for (const Delta& d : c.deltas)
      deltas.push_back({{"metric", d.metric},
                        {"run", Opt(d.run)},
                        {"baseline", Opt(d.baseline)},
                        {d.ratio ? "ratio" : "difference", Opt(d.delta)},
                        {"ci95", {Opt(d.lo), Opt(d.hi)}}});
    comparisons.push_back({{"run", c.run},
                           {"baseline", c.baseline},
                           {"common_tasks", c.common_tasks},
                           {"resamples", c.resamples},
                           {"deltas", deltas}});
  }
  return {{"schema", kReportSchema},
          {"kforge_version", KFORGE_VERSION},
          {"runs", runs},
          {"baseline", report.baseline ? ToJson(*report.baseline) : json(nullptr)},
          {"comparisons", comparisons}};
}

}  // namespace kforge::exporter
