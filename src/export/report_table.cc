// Terminal tables of a report.
#include "kforge/export/report_table.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "kforge/common/library_ops.h"
#include "kforge/common/text.h"

namespace kforge::exporter {
namespace {

using common::FormatNumber;

std::string Count(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

/// Rows of cells; the first column is left-aligned, the others right-aligned.
class TextTable {
 public:
  void Row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string Render() const {
    std::vector<size_t> width;
    for (const auto& row : rows_)
      for (size_t c = 0; c < row.size(); ++c) {
        if (width.size() <= c) width.push_back(0);
        width[c] = std::max(width[c], row[c].size());
      }
    std::string out;
    for (const auto& row : rows_) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c) {
        std::string pad(width[c] - row[c].size(), ' ');
        line += c == 0 ? row[c] + pad : "  " + pad + row[c];
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string Signed(double value, const char* unit) { return FormatNumber("%+.1f", value) + unit; }

/// How many correct kernels are mostly library ops, and fast_p without their speedups.
void LibraryOpsLine(std::ostringstream& out, const GroupMetrics& all) {
  out << "library ops: " << Count(all.mostly_library_ops) << " of " << Count(all.correct)
      << " correct kernels spent over " << FormatNumber("%g%%", common::kMostlyLibraryOps * 100)
      << " of their GPU time in them";
  if (all.mostly_library_ops > 0) {
    out << "; fast_p without their speedups:";
    for (size_t i = 0; i < kFastP.size(); ++i)
      out << (i ? "  " : " ") << FormatNumber("fast_%g ", kFastP[i])
          << Percent(all.fast_p_without_library_ops[i]);
  }
  out << "\n";
}

/// The median % of speed of light of correct kernels, of their references, and per level.
void SolLine(std::ostringstream& out, const RunReport& run) {
  const GroupMetrics& all = run.groups.front();
  out << "median % of speed of light (correct kernels with a roofline): "
      << (all.median_sol_pct ? FormatNumber("%.1f%%", *all.median_sol_pct) : "-");
  if (all.median_reference_sol_pct)
    out << " (their references: " << FormatNumber("%.1f%%", *all.median_reference_sol_pct) << ")";
  std::string levels;
  for (size_t i = 1; i < run.groups.size(); ++i) {
    const GroupMetrics& g = run.groups[i];
    if (!g.median_sol_pct) continue;
    levels += (levels.empty() ? "" : ", ") + g.name + " " + FormatNumber("%.1f%%", *g.median_sol_pct);
    if (g.median_reference_sol_pct)
      levels += " (reference " + FormatNumber("%.1f%%", *g.median_reference_sol_pct) + ")";
  }
  if (!levels.empty()) out << "; " << levels;
  out << "\n";
}

void RunSection(std::ostringstream& out, const RunReport& run, bool per_task) {
  const GroupMetrics& all = run.groups.front();
  out << "run " << run.label << ": " << Count(all.episodes) << " episodes of " << Count(all.tasks)
      << " tasks";
  if (run.scan.malformed || run.scan.torn)
    out << " (" << Count(run.scan.malformed) << " malformed and " << Count(run.scan.torn)
        << " torn lines skipped)";
  if (run.scan.duplicates) out << " (" << Count(run.scan.duplicates) << " duplicate records dropped: same id)";
  out << "\n\n";

  std::set<int> ks;
  for (const GroupMetrics& g : run.groups)
    for (const auto& [k, v] : g.pass_at_k) ks.insert(k);
  TextTable table;
  std::vector<std::string> header = {"group", "episodes", "tasks", "correct", "general"};
  for (double p : kFastP) header.push_back(FormatNumber("fast_%g", p));
  header.push_back("geomean");
  for (int k : ks) header.push_back("pass@" + std::to_string(k));
  table.Row(header);
  for (const GroupMetrics& g : run.groups) {
    std::vector<std::string> row = {g.name, Count(g.episodes), Count(g.tasks), Percent(g.correctness),
                                    Percent(g.general_correctness)};
    for (const auto& f : g.fast_p) row.push_back(Percent(f));
    row.push_back(Times(g.geomean_speedup));
    for (int k : ks) {
      auto it =
          std::find_if(g.pass_at_k.begin(), g.pass_at_k.end(), [k](const auto& e) { return e.first == k; });
      row.push_back(it == g.pass_at_k.end() ? "-" : Percent(it->second));
    }
    table.Row(row);
  }
  out << table.Render() << "\n";

  if (all.speedup_quantiles) {
    const Quantiles& q = *all.speedup_quantiles;
    out << "speedup of correct kernels (" << Count(all.timed) << " timed): p10 " << Times(q.p10) << "  p25 "
        << Times(q.p25) << "  median " << Times(q.p50) << "  p75 " << Times(q.p75) << "  p90 " << Times(q.p90)
        << "\n";
  }
  out << "correct: KernelBench's meaning (the task's own sizes); general: also correct at the sizes derived to "
         "probe generality ("
      << Count(all.correct_general) << " of " << Count(all.correct) << ")\n";
  if (all.suspect_timing > 0)
    out << "suspect timing: " << Count(all.suspect_timing)
        << " correct kernels whose timing kforge refused (faster than light, or not confirmed) are left out of "
           "fast_p, the geomean and %SOL\n";
  LibraryOpsLine(out, all);
  out << "first turn: " << Percent(all.first_turn_compile_rate) << " compiled, "
      << Percent(all.first_turn_correct_rate) << " correct; repair turns before the first correct kernel: "
      << (all.mean_repair_turns ? FormatNumber("%.2f", *all.mean_repair_turns) : "-") << " on average\n";
  SolLine(out, run);
  out << "per correct kernel: "
      << (all.tokens_per_correct ? Count(static_cast<int64_t>(*all.tokens_per_correct + 0.5)) + " tokens"
                                 : "-")
      << ", " << (all.cost_per_correct ? FormatNumber("$%.4f", *all.cost_per_correct) : "-")
      << (all.cost_known ? "" : " (some prices unknown: a lower bound)") << "\n";
  out << "harness errors: " << Count(all.unjudged)
      << " (kforge could not judge; outside every rate); teacher errors: " << Count(all.llm_errors)
      << " (counted as failures)\n";

  if (per_task) {
    TextTable tasks;
    tasks.Row({"task", "level", "episodes", "correct", "harness errors", "best speedup", "mean turns"});
    for (const auto& [id, t] : run.tasks)
      tasks.Row({common::Printable(id), t.level ? std::to_string(*t.level) : "-", Count(t.episodes),
                 Count(t.correct), Count(t.unjudged), Times(t.best_speedup),
                 t.episodes ? FormatNumber("%.1f",
                                           static_cast<double>(t.turns_sum) / static_cast<double>(t.episodes))
                            : "-"});
    out << "\n" << tasks.Render();
  }
}

void ComparisonSection(std::ostringstream& out, const Comparison& c) {
  out << "\n"
      << c.run << " against the baseline " << c.baseline << ", over the " << Count(c.common_tasks)
      << " tasks both have (" << c.resamples << " bootstrap resamples of tasks):\n\n";
  TextTable table;
  table.Row({"metric", "run", "baseline", "change", "95% interval"});
  for (const Delta& d : c.deltas) {
    std::string change = "-", interval = "-";
    if (d.ratio) {
      if (d.delta) change = FormatNumber("x%.3f", *d.delta);
      if (d.lo) interval = FormatNumber("[x%.3f, ", *d.lo) + FormatNumber("x%.3f]", *d.hi);
      table.Row({d.metric, Times(d.run), Times(d.baseline), change, interval});
    } else {
      if (d.delta) change = Signed(*d.delta * 100, " pp");
      if (d.lo) interval = "[" + Signed(*d.lo * 100, "") + ", " + Signed(*d.hi * 100, "") + "]";
      table.Row({d.metric, Percent(d.run), Percent(d.baseline), change, interval});
    }
  }
  out << table.Render();
}

}  // namespace

std::string Percent(const std::optional<double>& fraction) {
  return fraction ? FormatNumber("%.1f%%", *fraction * 100) : "-";
}

std::string Times(const std::optional<double>& value) { return value ? FormatNumber("%.2fx", *value) : "-"; }

std::string RenderTable(const Report& report, bool per_task) {
  std::ostringstream out;
  for (size_t i = 0; i < report.runs.size(); ++i) {
    if (i) out << "\n";
    RunSection(out, report.runs[i], per_task);
  }
  if (report.baseline) {
    out << "\nbaseline ";
    RunSection(out, *report.baseline, per_task);
  }
  for (const Comparison& c : report.comparisons) ComparisonSection(out, c);
  return out.str();
}

}  // namespace kforge::exporter
