// The HTML form of a report: one self-contained page (inline CSS and SVG, no script, nothing fetched)
// with the metrics tables, the comparison with a baseline, and plots: the speedup distribution, fast_p
// over p, turns to the first correct kernel, and correctness and fast_1 per level.
#pragma once

#include <string>

#include "kforge/export/report.h"

namespace kforge::exporter {

std::string RenderHtml(const Report& report);

}  // namespace kforge::exporter
