// Inline SVG charts.
#include "export/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kforge/common/html.h"

namespace kforge::exporter::internal {
namespace {

using common::HtmlEscape;

constexpr double kWidth = 640, kHeight = 320;
// The legend has a band of its own between the title and the plot (kLegendTop to kTop), so that it
// never covers a bar or a line.
constexpr double kLeft = 64, kRight = 16, kTop = 60, kBottom = 52, kLegendTop = 30;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

/// Maps data to pixels inside the plot area.
struct Frame {
  const Axes& axes;
  double X(double x) const {
    double lo = axes.x_log2 ? std::log2(axes.x_min) : axes.x_min;
    double hi = axes.x_log2 ? std::log2(axes.x_max) : axes.x_max;
    double v = axes.x_log2 ? std::log2(std::max(x, 1e-300)) : x;
    v = std::clamp(v, lo, hi);
    return kLeft + (v - lo) / (hi - lo) * (kWidth - kLeft - kRight);
  }
  double Y(double y) const {
    double v = std::clamp(y, axes.y_min, axes.y_max);
    return kHeight - kBottom - (v - axes.y_min) / (axes.y_max - axes.y_min) * (kHeight - kTop - kBottom);
  }
};

std::string Open(const Axes& axes) {
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + Num(kWidth) + " " +
                    Num(kHeight) + "\" width=\"" + Num(kWidth) + "\" height=\"" + Num(kHeight) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + Num(kWidth / 2) +
         "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">" +
         HtmlEscape(axes.title) + "</text>\n";
  return svg;
}

/// Grid, ticks, axis titles and the marks.
std::string Decorations(const Axes& axes, const Frame& f, bool x_ticks_numeric) {
  std::string svg;
  for (const auto& [value, label] : axes.y_ticks) {
    double y = f.Y(value);
    svg += "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kWidth - kRight) + "\" y1=\"" + Num(y) + "\" y2=\"" +
           Num(y) + "\" stroke=\"#ddd\"/>\n";
    svg += "<text x=\"" + Num(kLeft - 6) + "\" y=\"" + Num(y + 4) + "\" text-anchor=\"end\">" +
           HtmlEscape(label) + "</text>\n";
  }
  if (x_ticks_numeric) {
    for (const auto& [value, label] : axes.x_ticks) {
      double x = f.X(value);
      svg += "<line x1=\"" + Num(x) + "\" x2=\"" + Num(x) + "\" y1=\"" + Num(kTop) + "\" y2=\"" +
             Num(kHeight - kBottom) + "\" stroke=\"#eee\"/>\n";
      svg += "<text x=\"" + Num(x) + "\" y=\"" + Num(kHeight - kBottom + 16) + "\" text-anchor=\"middle\">" +
             HtmlEscape(label) + "</text>\n";
    }
  }
  for (double mark : axes.x_marks) {
    double x = f.X(mark);
    svg += "<line x1=\"" + Num(x) + "\" x2=\"" + Num(x) + "\" y1=\"" + Num(kTop) + "\" y2=\"" +
           Num(kHeight - kBottom) + "\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n";
  }
  svg += "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kWidth - kRight) + "\" y1=\"" +
         Num(kHeight - kBottom) + "\" y2=\"" + Num(kHeight - kBottom) + "\" stroke=\"#333\"/>\n";
  svg += "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft) + "\" y1=\"" + Num(kTop) + "\" y2=\"" +
         Num(kHeight - kBottom) + "\" stroke=\"#333\"/>\n";
  svg += "<text x=\"" + Num((kLeft + kWidth - kRight) / 2) + "\" y=\"" + Num(kHeight - 10) +
         "\" text-anchor=\"middle\">" + HtmlEscape(axes.x_title) + "</text>\n";
  svg += "<text transform=\"translate(16," + Num((kTop + kHeight - kBottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + HtmlEscape(axes.y_title) + "</text>\n";
  return svg;
}

/// The series names in a row above the plot area (a second row when they do not fit in one).
std::string Legend(const std::vector<std::string>& names) {
  std::string svg;
  double x = kLeft, y = kLegendTop;
  for (size_t i = 0; i < names.size(); ++i) {
    const double width = 16 + 6.5 * static_cast<double>(names[i].size()) + 16;
    if (x > kLeft && x + width > kWidth - kRight) {
      x = kLeft;
      y += 14;
    }
    svg += "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"12\" height=\"10\" fill=\"" +
           SeriesColor(i) + "\"/>\n";
    svg += "<text x=\"" + Num(x + 16) + "\" y=\"" + Num(y + 9) + "\">" + HtmlEscape(names[i]) + "</text>\n";
    x += width;
  }
  return svg;
}

}  // namespace

const char* SeriesColor(size_t i) {
  static const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                  "#ff7f0e", "#8c564b", "#17becf"};
  return kColors[i % (sizeof kColors / sizeof *kColors)];
}

std::string LineChart(const Axes& axes, const std::vector<Series>& series, bool step) {
  Frame f{axes};
  std::string svg = Open(axes) + Decorations(axes, f, true);
  std::vector<std::string> names;
  for (size_t s = 0; s < series.size(); ++s) {
    names.push_back(series[s].name);
    std::string path;
    double last_y = 0;
    for (size_t i = 0; i < series[s].points.size(); ++i) {
      auto [x, y] = series[s].points[i];
      if (i == 0) {
        path += "M" + Num(f.X(x)) + " " + Num(f.Y(y));
      } else {
        if (step) path += " L" + Num(f.X(x)) + " " + Num(f.Y(last_y));
        path += " L" + Num(f.X(x)) + " " + Num(f.Y(y));
      }
      last_y = y;
    }
    if (!path.empty())
      svg +=
          "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + SeriesColor(s) + "\" stroke-width=\"2\"/>\n";
  }
  svg += Legend(names) + "</svg>\n";
  return svg;
}

std::string BarChart(const Axes& axes, const std::vector<std::string>& categories,
                     const std::vector<std::string>& series_names,
                     const std::vector<std::vector<double>>& values) {
  Frame f{axes};
  std::string svg = Open(axes) + Decorations(axes, f, false);
  double plot = kWidth - kLeft - kRight;
  double group = categories.empty() ? plot : plot / static_cast<double>(categories.size());
  double bar = std::min(40.0, group * 0.8 / std::max<size_t>(1, series_names.size()));
  for (size_t c = 0; c < categories.size(); ++c) {
    double start =
        kLeft + group * static_cast<double>(c) + (group - bar * static_cast<double>(series_names.size())) / 2;
    for (size_t s = 0; s < series_names.size(); ++s) {
      double v = c < values[s].size() ? values[s][c] : 0;
      double top = f.Y(v), base = f.Y(axes.y_min);
      svg += "<rect x=\"" + Num(start + bar * static_cast<double>(s)) + "\" y=\"" + Num(top) + "\" width=\"" +
             Num(bar - 2) + "\" height=\"" + Num(std::max(0.0, base - top)) + "\" fill=\"" + SeriesColor(s) +
             "\"/>\n";
    }
    svg += "<text x=\"" + Num(kLeft + group * (static_cast<double>(c) + 0.5)) + "\" y=\"" +
           Num(kHeight - kBottom + 16) + "\" text-anchor=\"middle\">" + HtmlEscape(categories[c]) +
           "</text>\n";
  }
  svg += Legend(series_names) + "</svg>\n";
  return svg;
}

}  // namespace kforge::exporter::internal
