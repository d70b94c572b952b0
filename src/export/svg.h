// Small inline SVG charts for the HTML report: line (or step) series and grouped bars on one pair of
// axes, with grid, tick labels, axis titles and a legend. No scripts, no external resources.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kforge::exporter::internal {

/// The colour of series `i`.
const char* SeriesColor(size_t i);

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< (x, y), x ascending
};

struct Axes {
  std::string title;
  std::string x_title, y_title;
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;
  bool x_log2 = false;                                           ///< x positions are log2 of the values
  std::vector<std::pair<double, std::string>> x_ticks, y_ticks;  ///< value, label
  std::vector<double> x_marks;                                   ///< dashed vertical lines (e.g. speedup 1)
};

/// Lines through each series' points (steps when `step`).
std::string LineChart(const Axes& axes, const std::vector<Series>& series, bool step);

/// Bars: one group per category, one bar per series in it; `values[s][c]` of series s, category c.
std::string BarChart(const Axes& axes, const std::vector<std::string>& categories,
                     const std::vector<std::string>& series_names,
                     const std::vector<std::vector<double>>& values);

}  // namespace kforge::exporter::internal
