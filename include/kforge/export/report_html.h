// The HTML form of a report: one self-contained page (inline CSS and SVG, no script, nothing fetched)
// with the metrics tables, the comparison with a baseline, and plots: the speedup distribution, fast_p
// over p, turns to the first correct kernel, and correctness and fast_1 per level.
#pragma once

#include <string>
#include <vector>

#include "kforge/export/report.h"

namespace kforge::exporter {

/// A section rendered by another module (a skill eval): HTML already escaped, with an <h2> heading,
/// and the CSS rules it needs beyond the page's own.
struct HtmlSection {
  std::string html;
  std::string css;
};

/// The page; `sections` follow the metrics (and the comparison with the baseline), in order.
std::string RenderHtml(const Report& report, const std::vector<HtmlSection>& sections = {});

}  // namespace kforge::exporter
