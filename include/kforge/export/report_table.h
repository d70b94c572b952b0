// The terminal form of a report: per run, a table of KernelBench's metrics per level, then the
// speedup distribution, first-turn rates, repair turns, speed of light, tokens and cost, harness
// errors; the comparison with a baseline; optionally one row per task.
#pragma once

#include <string>

#include "kforge/export/report.h"

namespace kforge::exporter {

/// Plain text, columns aligned with spaces. `per_task` adds the per-task table of each run.
std::string RenderTable(const Report& report, bool per_task);

/// "82.0%"; "-" when empty.
std::string Percent(const std::optional<double>& fraction);
/// "1.23x"; "-" when empty.
std::string Times(const std::optional<double>& value);

}  // namespace kforge::exporter
