// The self-contained HTML report page.
#include "kforge/export/report_html.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "export/svg.h"
#include "kforge/common/html.h"
#include "kforge/common/library_ops.h"
#include "kforge/common/text.h"
#include "kforge/export/report_table.h"

namespace kforge::exporter {
namespace {

using common::FormatNumber;
using common::HtmlEscape;
using internal::Axes;
using internal::Series;

constexpr const char* kStyle = R"css(
body { font-family: sans-serif; margin: 24px auto; padding: 0 16px; max-width: 1240px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; } h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 12px; display: block; max-width: 100%;
        overflow-x: auto; }
th, td { padding: 3px 7px; border-bottom: 1px solid #ddd; text-align: right; }
th { background: #f4f4f4; white-space: normal; vertical-align: bottom; }
th:first-child, td:first-child { text-align: left; white-space: nowrap; }
.plots { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 12px; }
.plots svg { width: 100%; height: auto; }
.note { color: #555; font-size: 13px; }
)css";

struct Subject {
  std::string name;
  const RunReport* run;
};

std::vector<Subject> Subjects(const Report& report) {
  std::vector<Subject> subjects;
  for (const RunReport& run : report.runs) subjects.push_back({run.label, &run});
  if (report.baseline) subjects.push_back({report.baseline->label + " (baseline)", &*report.baseline});
  return subjects;
}

/// Ticks of a fraction axis from 0 to at least `top`, as percentages; sets y_max.
void PercentAxis(Axes& axes, double top) {
  static const double kSteps[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.25};
  double step = 0.25;
  for (double s : kSteps)
    if (top / s <= 6) {
      step = s;
      break;
    }
  axes.y_max = std::min(1.0, std::max(step, std::ceil(top / step - 1e-9) * step));
  if (top >= 0.999) axes.y_max = 1.0;
  for (double v = 0; v <= axes.y_max + 1e-9; v += step)
    axes.y_ticks.emplace_back(v, FormatNumber("%.0f%%", v * 100));
}

std::string SpeedupHistogram(const std::vector<Subject>& subjects) {
  constexpr double kLo = -3, kHi = 4, kStep = 0.25;
  const int bins = static_cast<int>((kHi - kLo) / kStep);
  Axes axes;
  axes.title = "Speedup of correct kernels over the PyTorch reference";
  axes.x_title = "speedup (log scale; below 1/8x and above 16x in the end bins)";
  axes.y_title = "share of timed correct kernels";
  axes.x_log2 = true;
  axes.x_min = std::exp2(kLo);
  axes.x_max = std::exp2(kHi);
  for (double e = kLo; e <= kHi; ++e)
    axes.x_ticks.emplace_back(std::exp2(e), e < 0 ? "1/" + FormatNumber("%.0fx", std::exp2(-e))
                                                  : FormatNumber("%.0fx", std::exp2(e)));
  axes.x_marks = {1.0};
  std::vector<Series> series;
  double top = 0;
  for (const Subject& s : subjects) {
    const std::vector<float>& speedups = s.run->groups.front().speedups;
    std::vector<double> share(bins, 0.0);
    for (float v : speedups) {
      int b = static_cast<int>(std::floor((std::log2(v) - kLo) / kStep));
      share[std::clamp(b, 0, bins - 1)] += 1.0 / static_cast<double>(speedups.size());
    }
    Series line{s.name, {}};
    for (int b = 0; b < bins; ++b) {
      line.points.emplace_back(std::exp2(kLo + b * kStep), share[b]);
      top = std::max(top, share[b]);
    }
    line.points.emplace_back(std::exp2(kHi), share[bins - 1]);
    series.push_back(std::move(line));
  }
  PercentAxis(axes, std::max(top * 1.15, 0.05));
  return internal::LineChart(axes, series, true);
}

std::string FastPCurve(const std::vector<Subject>& subjects) {
  Axes axes;
  axes.title = "fast_p: correct and more than p times as fast as the reference";
  axes.x_title = "p (speedup threshold)";
  axes.y_title = "share of all episodes";
  axes.x_max = 4;
  for (double p = 0; p <= 4; p += 0.5) axes.x_ticks.emplace_back(p, FormatNumber("%g", p));
  axes.x_marks = {1.0, 1.5, 2.0};
  std::vector<Series> series;
  double top = 0;
  for (const Subject& s : subjects) {
    const GroupMetrics& all = s.run->groups.front();
    Series line{s.name, {}};
    for (int i = 0; i <= 200; ++i) {
      double p = i * 0.02;
      auto above = all.speedups.end() -
                   std::upper_bound(all.speedups.begin(), all.speedups.end(), static_cast<float>(p));
      double share = all.episodes ? static_cast<double>(above) / static_cast<double>(all.episodes) : 0;
      line.points.emplace_back(p, share);
      top = std::max(top, share);
    }
    series.push_back(std::move(line));
  }
  PercentAxis(axes, std::max(top * 1.1, 0.05));
  return internal::LineChart(axes, series, false);
}

std::string TurnsChart(const std::vector<Subject>& subjects) {
  size_t turns = 1;
  for (const Subject& s : subjects) turns = std::max(turns, s.run->groups.front().first_correct_turns.size());
  std::vector<std::string> categories, names;
  for (size_t t = 1; t < turns; ++t) categories.push_back(std::to_string(t));
  std::vector<std::vector<double>> values;
  double top = 0;
  for (const Subject& s : subjects) {
    const GroupMetrics& all = s.run->groups.front();
    names.push_back(s.name);
    std::vector<double> row;
    for (size_t t = 1; t < turns; ++t) {
      int64_t n = t < all.first_correct_turns.size() ? all.first_correct_turns[t] : 0;
      row.push_back(all.episodes ? static_cast<double>(n) / static_cast<double>(all.episodes) : 0);
      top = std::max(top, row.back());
    }
    values.push_back(std::move(row));
  }
  Axes axes;
  axes.title = "Turn of the first correct kernel";
  axes.x_title = "assistant turn";
  axes.y_title = "share of all episodes";
  PercentAxis(axes, std::max(top * 1.15, 0.05));
  return internal::BarChart(axes, categories, names, values);
}

std::string LevelChart(const std::vector<Subject>& subjects, bool fast_1) {
  std::vector<std::string> categories;
  for (const Subject& s : subjects)
    for (size_t g = 1; g < s.run->groups.size(); ++g)
      if (std::find(categories.begin(), categories.end(), s.run->groups[g].name) == categories.end())
        categories.push_back(s.run->groups[g].name);
  categories.push_back("all");
  std::vector<std::string> names;
  std::vector<std::vector<double>> values;
  double top = 0;
  for (const Subject& s : subjects) {
    names.push_back(s.name);
    std::vector<double> row;
    for (const std::string& c : categories) {
      double v = 0;
      for (const GroupMetrics& g : s.run->groups)
        if (g.name == c) v = (fast_1 ? g.fast_p[1] : g.correctness).value_or(0);
      row.push_back(v);
      top = std::max(top, v);
    }
    values.push_back(std::move(row));
  }
  Axes axes;
  axes.title = fast_1 ? "fast_1 per level (correct and faster than the reference)" : "Correctness per level";
  axes.x_title = "level";
  axes.y_title = "share of episodes";
  PercentAxis(axes, std::max(top * 1.15, 0.05));
  return internal::BarChart(axes, categories, names, values);
}

void MetricsTable(std::ostringstream& out, const RunReport& run) {
  std::set<int> ks;
  for (const GroupMetrics& g : run.groups)
    for (const auto& [k, v] : g.pass_at_k) ks.insert(k);
  out << "<table><tr><th>group</th><th>episodes</th><th>tasks</th><th>correct</th><th>general</th>";
  for (double p : kFastP) out << "<th>fast_" << FormatNumber("%g", p) << "</th>";
  out << "<th>geomean speedup</th>";
  for (int k : ks) out << "<th>pass@" << k << "</th>";
  out << "<th>median speedup</th><th>first-turn compile</th><th>first-turn correct</th><th>repair turns</th>"
         "<th>median %SOL</th><th>tokens / correct</th><th>cost / correct</th><th>harness errors</th>"
         "<th>mostly library ops</th><th>fast_1 without them</th><th>suspect timing</th></tr>\n";
  for (const GroupMetrics& g : run.groups) {
    out << "<tr><td>" << HtmlEscape(g.name) << "</td><td>" << g.episodes << "</td><td>" << g.tasks
        << "</td><td>" << Percent(g.correctness) << "</td><td>" << Percent(g.general_correctness) << "</td>";
    for (const auto& f : g.fast_p) out << "<td>" << Percent(f) << "</td>";
    out << "<td>" << Times(g.geomean_speedup) << "</td>";
    for (int k : ks) {
      auto it =
          std::find_if(g.pass_at_k.begin(), g.pass_at_k.end(), [k](const auto& e) { return e.first == k; });
      out << "<td>" << (it == g.pass_at_k.end() ? "-" : Percent(it->second)) << "</td>";
    }
    out << "<td>" << (g.speedup_quantiles ? Times(g.speedup_quantiles->p50) : "-") << "</td><td>"
        << Percent(g.first_turn_compile_rate) << "</td><td>" << Percent(g.first_turn_correct_rate)
        << "</td><td>" << (g.mean_repair_turns ? FormatNumber("%.2f", *g.mean_repair_turns) : "-")
        << "</td><td>" << (g.median_sol_pct ? FormatNumber("%.1f%%", *g.median_sol_pct) : "-") << "</td><td>"
        << (g.tokens_per_correct ? FormatNumber("%.0f", *g.tokens_per_correct) : "-") << "</td><td>"
        << (g.cost_per_correct ? FormatNumber("$%.4f", *g.cost_per_correct) + (g.cost_known ? "" : "+") : "-")
        << "</td><td>" << g.unjudged << "</td><td>" << g.mostly_library_ops << "</td><td>"
        << Percent(g.fast_p_without_library_ops[1]) << "</td><td>" << g.suspect_timing << "</td></tr>\n";
  }
  out << "</table>\n";
}

void ComparisonTable(std::ostringstream& out, const Comparison& c) {
  out << "<h3>" << HtmlEscape(c.run) << " against " << HtmlEscape(c.baseline)
      << "</h3>\n<p class=\"note\">Over the " << c.common_tasks << " tasks both have; 95% intervals from "
      << c.resamples
      << " bootstrap resamples of "
         "tasks.</p>\n<table><tr><th>metric</th><th>run</th><th>baseline</th><th>change</th>"
         "<th>95% interval</th></tr>\n";
  for (const Delta& d : c.deltas) {
    std::string change = "-", interval = "-";
    if (d.ratio) {
      if (d.delta) change = FormatNumber("x%.3f", *d.delta);
      if (d.lo) interval = FormatNumber("[x%.3f, ", *d.lo) + FormatNumber("x%.3f]", *d.hi);
    } else {
      if (d.delta) change = FormatNumber("%+.1f pp", *d.delta * 100);
      if (d.lo) interval = FormatNumber("[%+.1f, ", *d.lo * 100) + FormatNumber("%+.1f]", *d.hi * 100);
    }
    std::string run = d.ratio ? Times(d.run) : Percent(d.run),
                base = d.ratio ? Times(d.baseline) : Percent(d.baseline);
    out << "<tr><td>" << d.metric << "</td><td>" << run << "</td><td>" << base << "</td><td>" << change
        << "</td><td>" << interval << "</td></tr>\n";
  }
  out << "</table>\n";
}

void TaskTable(std::ostringstream& out, const Subject& s) {
  out << "<details><summary>" << HtmlEscape(s.name) << ": " << s.run->tasks.size() << " tasks</summary>\n"
      << "<table><tr><th>task</th><th>level</th><th>episodes</th><th>correct</th><th>harness errors</th>"
         "<th>best speedup</th><th>mean turns</th></tr>\n";
  for (const auto& [id, t] : s.run->tasks)
    out << "<tr><td>" << HtmlEscape(id) << "</td><td>" << (t.level ? std::to_string(*t.level) : "-")
        << "</td><td>" << t.episodes << "</td><td>" << t.correct << "</td><td>" << t.unjudged << "</td><td>"
        << Times(t.best_speedup) << "</td><td>"
        << (t.episodes
                ? FormatNumber("%.1f", static_cast<double>(t.turns_sum) / static_cast<double>(t.episodes))
                : "-")
        << "</td></tr>\n";
  out << "</table></details>\n";
}

}  // namespace

std::string RenderHtml(const Report& report, const std::vector<HtmlSection>& sections) {
  std::vector<Subject> subjects = Subjects(report);
  std::set<std::string> section_css;
  for (const HtmlSection& section : sections) section_css.insert(section.css);
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>kforge "
         "report</title><style>"
      << kStyle;
  for (const std::string& css : section_css) out << css;
  out << "</style></head>\n<body>\n<h1>kforge report</h1>\n<p class=\"note\">kforge " << KFORGE_VERSION
      << ". Rates are over judged episodes; harness errors (kforge could not judge) are counted apart. "
         "fast_p: "
         "correct and speedup &gt; p, over all episodes. Geometric mean over correct timed kernels. Mostly "
         "library ops: correct kernels that spent more than "
      << FormatNumber("%g%%", common::kMostlyLibraryOps * 100)
      << " of their GPU time in library ops; fast_1 without them counts those as not fast.</p>\n";
  out << "<h2>Metrics</h2>\n";
  for (const Subject& s : subjects) {
    out << "<h3>" << HtmlEscape(s.name) << "</h3>\n";
    if (s.run->scan.malformed || s.run->scan.torn)
      out << "<p class=\"note\">" << s.run->scan.malformed << " malformed and " << s.run->scan.torn
          << " torn lines skipped.</p>\n";
    MetricsTable(out, *s.run);
  }
  if (!report.comparisons.empty()) {
    out << "<h2>Against the baseline</h2>\n";
    for (const Comparison& c : report.comparisons) ComparisonTable(out, c);
  }
  for (const HtmlSection& section : sections) out << section.html;
  out << "<h2>Plots</h2>\n<div class=\"plots\">\n"
      << SpeedupHistogram(subjects) << FastPCurve(subjects) << TurnsChart(subjects)
      << LevelChart(subjects, false) << LevelChart(subjects, true) << "</div>\n";
  out << "<h2>Tasks</h2>\n";
  for (const Subject& s : subjects) TaskTable(out, s);
  out << "</body></html>\n";
  return out.str();
}

}  // namespace kforge::exporter
