// `kforge skill eval`'s output: the table for the terminal and a standalone HTML page (skill/eval.h).
#include <cstdio>
#include <string>

#include "kforge/common/html.h"
#include "kforge/skill/eval.h"

namespace kforge::skill {
namespace {

using nlohmann::json;

std::string Fixed(double v, int digits = 2) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
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

std::string Cell(const std::string& text) { return "<td>" + common::HtmlEscape(text) + "</td>"; }

}  // namespace

std::string EvalTable(const json& eval) {
  std::string out = "skill " + eval["skill"]["name"].get<std::string>() + " (" +
                    eval["skill"]["hash"].get<std::string>().substr(0, 19) + "), " +
                    std::to_string(eval["tasks"].size()) + " held-out tasks x " + eval["samples"].dump() +
                    " samples; left out: " + std::to_string(eval["left_out"].size()) + "\n";
  for (const json& left : eval["left_out"])
    out += "  left out " + left["task"].get<std::string>() + ": " + left["reason"].get<std::string>() + "\n";
  if (eval.value("compile_only", false))
    out += "compile-only: nothing ran on a GPU, so no kernel is correct and no lift is measured\n";
  for (const json& m : eval["models"]) {
    out += "\n" + m["model"].get<std::string>() + "\n";
    out += "  " + Pad("arm", 9) + Pad("correct", 16) + Pad("fast_1", 8) + Pad("fast_1.5", 10) +
           Pad("fast_2", 8) + Pad("geomean vs none", 22) + Pad("tokens", 10) + "cost\n";
    for (const char* name : {"none", "skill", "placebo", "teacher"}) {
      if (!m["arms"].contains(name)) continue;
      const json& a = m["arms"][name];
      std::string geo = "-";
      if (a.contains("geomean_speedup_vs_none") && a["geomean_speedup_vs_none"]["tasks"] > 0)
        geo = Fixed(a["geomean_speedup_vs_none"]["arm"]) + "x/" +
              Fixed(a["geomean_speedup_vs_none"]["none"]) + "x (" +
              a["geomean_speedup_vs_none"]["tasks"].dump() + " tasks)";
      out += "  " + Pad(name, 9) +
             Pad(a["correct"].dump() + "/" + a["episodes"].dump() + " " + Fixed(a["correctness"]), 16) +
             Pad(Fixed(a["fast_p"]["1"]), 8) + Pad(Fixed(a["fast_p"]["1.5"]), 10) +
             Pad(Fixed(a["fast_p"]["2"]), 8) + Pad(geo, 22) +
             Pad(std::to_string(a["input_tokens"].get<int64_t>() + a["output_tokens"].get<int64_t>()), 10) +
             "$" + Fixed(a["cost_usd"], 4) + "\n";
      std::string failures;
      for (const auto& [status, n] : a["failures"].items()) failures += " " + status + " " + n.dump();
      if (!failures.empty()) out += "  " + Pad("", 9) + "failures:" + failures + "\n";
    }
    for (const auto& [name, lift] : m["lifts"].items()) {
      out += "  " + Pad(name, 18) + "lift " + Fixed(lift["lift"], 3) + " [" + Fixed(lift["low"], 3) + ", " +
             Fixed(lift["high"], 3) + "], McNemar p " + PValue(lift["mcnemar"]["p"]) + " (" +
             lift["mcnemar"]["only_arm"].dump() + " vs " + lift["mcnemar"]["only_baseline"].dump() + ")";
      if (lift["mcnemar"].contains("holm_p")) out += ", Holm p " + PValue(lift["mcnemar"]["holm_p"]);
      out += ", MDE " + (lift["mde"].is_number() ? Fixed(lift["mde"], 3) : std::string("-")) +
             ", worse tasks " + std::to_string(lift["worse_tasks"].size());
      for (const json& w : lift["worse_tasks"]) out += " " + w["task"].get<std::string>();
      out += "\n";
    }
    out += "  verdict: " + m["verdict"].get<std::string>() + "\n";
  }
  return out;
}

std::string EvalHtml(const json& eval) {
  std::string out =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>kforge skill eval</title><style>"
      "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
      "td,th{border:1px solid #ccc;padding:4px "
      "8px;text-align:right}td:first-child,th:first-child{text-align:left}"
      ".yes{color:#070}.no{color:#a00}</style></head><body>\n";
  out += "<h1>Skill " + common::HtmlEscape(eval["skill"]["name"].get<std::string>()) + "</h1>\n<p>" +
         common::HtmlEscape(eval["skill"]["hash"].get<std::string>()) + "; " +
         std::to_string(eval["tasks"].size()) + " held-out tasks &times; " + eval["samples"].dump() +
         " samples, protocol " + common::HtmlEscape(eval["protocol"].get<std::string>()) + "; bootstrap " +
         eval["bootstrap"]["resamples"].dump() + " resamples, seed " + eval["bootstrap"]["seed"].dump() +
         ".</p>\n";
  if (!eval["left_out"].empty()) {
    out += "<p>Left out:</p><ul>";
    for (const json& left : eval["left_out"])
      out += "<li>" + common::HtmlEscape(left["task"].get<std::string>()) + ": " +
             common::HtmlEscape(left["reason"].get<std::string>()) + "</li>";
    out += "</ul>\n";
  }
  for (const json& m : eval["models"]) {
    const bool beneficial = m["beneficial"].get<bool>();
    out += "<h2>" + common::HtmlEscape(m["model"].get<std::string>()) + ": <span class=\"" +
           (beneficial ? "yes" : "no") + "\">" + common::HtmlEscape(m["verdict"].get<std::string>()) +
           "</span></h2>\n<table><tr><th>arm</th><th>correct</th>"
           "<th>fast_1</th><th>fast_1.5</th><th>fast_2</th><th>geomean speedup (arm / none, "
           "tasks)</th><th>tokens</th>"
           "<th>cost</th><th>failures</th></tr>\n";
    for (const char* name : {"none", "skill", "placebo", "teacher"}) {
      if (!m["arms"].contains(name)) continue;
      const json& a = m["arms"][name];
      std::string geo = "-";
      if (a.contains("geomean_speedup_vs_none") && a["geomean_speedup_vs_none"]["tasks"] > 0)
        geo = Fixed(a["geomean_speedup_vs_none"]["arm"]) + "x / " +
              Fixed(a["geomean_speedup_vs_none"]["none"]) + "x (" +
              a["geomean_speedup_vs_none"]["tasks"].dump() + ")";
      std::string failures;
      for (const auto& [status, n] : a["failures"].items())
        failures += (failures.empty() ? "" : ", ") + status + " " + n.dump();
      out += "<tr>" + Cell(name) + Cell(a["correct"].dump() + "/" + a["episodes"].dump()) +
             Cell(Fixed(a["fast_p"]["1"])) + Cell(Fixed(a["fast_p"]["1.5"])) + Cell(Fixed(a["fast_p"]["2"])) +
             Cell(geo) +
             Cell(std::to_string(a["input_tokens"].get<int64_t>() + a["output_tokens"].get<int64_t>())) +
             Cell("$" + Fixed(a["cost_usd"], 4)) + Cell(failures) + "</tr>\n";
    }
    out +=
        "</table>\n<table><tr><th>comparison</th><th>lift</th><th>95% interval</th><th>McNemar p</th>"
        "<th>Holm p</th><th>MDE</th><th>worse tasks</th></tr>\n";
    for (const auto& [name, lift] : m["lifts"].items()) {
      std::string worse;
      for (const json& w : lift["worse_tasks"])
        worse += (worse.empty() ? "" : ", ") + w["task"].get<std::string>();
      out += "<tr>" + Cell(name) + Cell(Fixed(lift["lift"], 3)) +
             Cell("[" + Fixed(lift["low"], 3) + ", " + Fixed(lift["high"], 3) + "]") +
             Cell(PValue(lift["mcnemar"]["p"]) + " (" + lift["mcnemar"]["only_arm"].dump() + " vs " +
                  lift["mcnemar"]["only_baseline"].dump() + ")") +
             Cell(lift["mcnemar"].contains("holm_p") ? PValue(lift["mcnemar"]["holm_p"]) : "-") +
             Cell(lift["mde"].is_number() ? Fixed(lift["mde"], 3) : "-") + Cell(worse) + "</tr>\n";
    }
    out += "</table>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace kforge::skill
