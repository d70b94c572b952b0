// `kforge skill eval`'s output shown: the terminal table, a one-line summary, and the HTML section that
// the eval's own page and `kforge report --html` both use (skill/eval_report.h).
#include "kforge/skill/eval_report.h"

#include <cstdio>
#include <string>

#include "kforge/common/html.h"
#include "kforge/common/text.h"

namespace kforge::skill {
namespace {

using nlohmann::json;

constexpr const char* kArmOrder[] = {"none", "skill", "placebo", "teacher"};

/// A number with `digits` decimals; "-" for null (a lift over no task, an undefined MDE).
std::string Fixed(const json& v, int digits = 2) {
  if (!v.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v.get<double>());
  return buf;
}

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

/// A p value: 4 decimals, or 2 significant digits below 0.001 (7.6e-06).
std::string PValue(const json& p) {
  const double v = p.get<double>();
  char buf[32];
  std::snprintf(buf, sizeof(buf), v < 0.001 ? "%.2g" : "%.4f", v);
  return buf;
}

/// Terminal-safe text from the file.
std::string Text(const json& v) { return common::Printable(v.get<std::string>()); }

std::string Tokens(const json& arm) {
  return std::to_string(arm["input_tokens"].get<int64_t>() + arm["output_tokens"].get<int64_t>());
}

/// "1.90x/1.70x (7 tasks)" on the tasks both this arm and none solved; "-" when there are none.
std::string Geomean(const json& arm, const char* between, const char* unit) {
  if (!arm.contains("geomean_speedup_vs_none") || arm["geomean_speedup_vs_none"]["tasks"] <= 0) return "-";
  const json& g = arm["geomean_speedup_vs_none"];
  return Fixed(g["arm"]) + "x" + between + Fixed(g["none"]) + "x (" + g["tasks"].dump() + unit + ")";
}

std::string IntervalText(const json& lift) {
  return "[" + Fixed(lift["low"], 3) + ", " + Fixed(lift["high"], 3) + "]";
}

std::string Cell(const std::string& text) { return "<td>" + common::HtmlEscape(text) + "</td>"; }

std::string Heading(int level, const std::string& inner_html) {
  const std::string h = "h" + std::to_string(level);
  return "<" + h + ">" + inner_html + "</" + h + ">\n";
}

}  // namespace

const char* const kEvalHtmlStyle = ".skill-eval .yes { color: #070; } .skill-eval .no { color: #a00; }\n";

std::string EvalTable(const json& eval) {
  std::string out = "skill " + Text(eval["skill"]["name"]) + " (" +
                    Text(eval["skill"]["hash"]).substr(0, 19) + "), " + std::to_string(eval["tasks"].size()) +
                    " held-out tasks x " + eval["samples"].dump() +
                    " samples; left out: " + std::to_string(eval["left_out"].size()) + "\n";
  for (const json& left : eval["left_out"])
    out += "  left out " + Text(left["task"]) + ": " + Text(left["reason"]) + "\n";
  if (eval.value("compile_only", false))
    out += "compile-only: nothing ran on a GPU, so no kernel is correct and no lift is measured\n";
  for (const json& m : eval["models"]) {
    out += "\n" + Text(m["model"]) + "\n";
    out += "  " + Pad("arm", 9) + Pad("correct", 16) + Pad("fast_1", 8) + Pad("fast_1.5", 10) +
           Pad("fast_2", 8) + Pad("geomean vs none", 22) + Pad("tokens", 10) + "cost\n";
    for (const char* name : kArmOrder) {
      if (!m["arms"].contains(name)) continue;
      const json& a = m["arms"][name];
      out += "  " + Pad(name, 9) +
             Pad(a["correct"].dump() + "/" + a["episodes"].dump() + " " + Fixed(a["correctness"]), 16) +
             Pad(Fixed(a["fast_p"]["1"]), 8) + Pad(Fixed(a["fast_p"]["1.5"]), 10) +
             Pad(Fixed(a["fast_p"]["2"]), 8) + Pad(Geomean(a, "/", " tasks"), 22) + Pad(Tokens(a), 10) + "$" +
             Fixed(a["cost_usd"], 4) + "\n";
      std::string failures;
      for (const auto& [status, n] : a["failures"].items())
        failures += " " + common::Printable(status) + " " + n.dump();
      if (!failures.empty()) out += "  " + Pad("", 9) + "failures:" + failures + "\n";
    }
    for (const auto& [name, lift] : m["lifts"].items()) {
      out += "  " + Pad(common::Printable(name), 18) + "lift " + Fixed(lift["lift"], 3) + " " +
             IntervalText(lift) + ", McNemar p " + PValue(lift["mcnemar"]["p"]) + " (" +
             lift["mcnemar"]["only_arm"].dump() + " vs " + lift["mcnemar"]["only_baseline"].dump() + ")";
      if (lift["mcnemar"].contains("holm_p")) out += ", Holm p " + PValue(lift["mcnemar"]["holm_p"]);
      out += ", MDE " + Fixed(lift["mde"], 3) + ", worse tasks " + std::to_string(lift["worse_tasks"].size());
      for (const json& w : lift["worse_tasks"]) out += " " + Text(w["task"]);
      out += "\n";
    }
    out += "  verdict: " + Text(m["verdict"]) + "\n";
  }
  return out;
}

std::string EvalSummaryLine(const json& eval) {
  std::string out = "skill eval " + Text(eval["skill"]["name"]) + " (" +
                    Text(eval["skill"]["hash"]).substr(0, 19) + "): " + std::to_string(eval["tasks"].size()) +
                    " held-out tasks x " + eval["samples"].dump() + " samples, " +
                    std::to_string(eval["left_out"].size()) + " left out";
  if (eval.value("compile_only", false)) return out + "; compile-only, no lift measured\n";
  for (const json& m : eval["models"]) {
    out += "; " + Text(m["model"]) + ": " + Text(m["verdict"]);
    if (!m["lifts"].contains("skill_vs_none")) continue;
    const json& lift = m["lifts"]["skill_vs_none"];
    out += ", lift " + Fixed(lift["lift"], 3) + " " + IntervalText(lift);
    if (lift["mcnemar"].contains("holm_p")) out += ", Holm p " + PValue(lift["mcnemar"]["holm_p"]);
  }
  return out + "\n";
}

std::string EvalHtmlSection(const json& eval, int level) {
  using common::HtmlEscape;
  std::string out = "<section class=\"skill-eval\">\n" +
                    Heading(level, "Skill eval: " + HtmlEscape(eval["skill"]["name"].get<std::string>()));
  out += "<p>" + HtmlEscape(eval["skill"]["hash"].get<std::string>()) + "; " +
         std::to_string(eval["tasks"].size()) + " held-out tasks &times; " + eval["samples"].dump() +
         " samples, protocol " + HtmlEscape(eval["protocol"].get<std::string>()) + "; bootstrap " +
         eval["bootstrap"]["resamples"].dump() + " resamples, seed " + eval["bootstrap"]["seed"].dump() +
         ".</p>\n";
  if (eval.value("compile_only", false))
    out += "<p>Compile-only: nothing ran on a GPU, so no kernel is correct and no lift is measured.</p>\n";
  if (!eval["left_out"].empty()) {
    out += "<p>Left out:</p><ul>";
    for (const json& left : eval["left_out"])
      out += "<li>" + HtmlEscape(left["task"].get<std::string>()) + ": " +
             HtmlEscape(left["reason"].get<std::string>()) + "</li>";
    out += "</ul>\n";
  }
  for (const json& m : eval["models"]) {
    const bool beneficial = m["beneficial"].get<bool>();
    out += Heading(level + 1, HtmlEscape(m["model"].get<std::string>()) + ": <span class=\"" +
                                  (beneficial ? "yes" : "no") + "\">" +
                                  HtmlEscape(m["verdict"].get<std::string>()) + "</span>");
    out +=
        "<table><tr><th>arm</th><th>correct</th><th>fast_1</th><th>fast_1.5</th><th>fast_2</th>"
        "<th>geomean speedup (arm / none, tasks)</th><th>tokens</th><th>cost</th><th>failures</th></tr>\n";
    for (const char* name : kArmOrder) {
      if (!m["arms"].contains(name)) continue;
      const json& a = m["arms"][name];
      std::string failures;
      for (const auto& [status, n] : a["failures"].items())
        failures += (failures.empty() ? "" : ", ") + status + " " + n.dump();
      out += "<tr>" + Cell(name) + Cell(a["correct"].dump() + "/" + a["episodes"].dump()) +
             Cell(Fixed(a["fast_p"]["1"])) + Cell(Fixed(a["fast_p"]["1.5"])) + Cell(Fixed(a["fast_p"]["2"])) +
             Cell(Geomean(a, " / ", "")) + Cell(Tokens(a)) + Cell("$" + Fixed(a["cost_usd"], 4)) +
             Cell(failures) + "</tr>\n";
    }
    out +=
        "</table>\n<table><tr><th>comparison</th><th>lift</th><th>95% interval</th><th>McNemar p</th>"
        "<th>Holm p</th><th>MDE</th><th>worse tasks</th></tr>\n";
    for (const auto& [name, lift] : m["lifts"].items()) {
      std::string worse;
      for (const json& w : lift["worse_tasks"])
        worse += (worse.empty() ? "" : ", ") + w["task"].get<std::string>();
      out += "<tr>" + Cell(name) + Cell(Fixed(lift["lift"], 3)) + Cell(IntervalText(lift)) +
             Cell(PValue(lift["mcnemar"]["p"]) + " (" + lift["mcnemar"]["only_arm"].dump() + " vs " +
                  lift["mcnemar"]["only_baseline"].dump() + ")") +
             Cell(lift["mcnemar"].contains("holm_p") ? PValue(lift["mcnemar"]["holm_p"]) : "-") +
             Cell(Fixed(lift["mde"], 3)) + Cell(worse) + "</tr>\n";
    }
    out += "</table>\n";
  }
  return out + "</section>\n";
}

std::string EvalHtml(const json& eval) {
  return std::string(
             "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>kforge skill eval</title><style>"
             "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
             "td:first-child,th:first-child{text-align:left}\n") +
         kEvalHtmlStyle + "</style></head><body>\n" + EvalHtmlSection(eval, 1) + "</body></html>\n";
}

}  // namespace kforge::skill
