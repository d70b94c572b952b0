// Per-attempt rows (`--format turns`) and what an attempt measured in absolute terms, for every
// conversation row: the kernel's and the reference's median times, the bench mode, the GPU and the
// judge's version.
#include <algorithm>
#include <cmath>

#include "kforge/export/formats.h"

namespace kforge::exporter {
namespace {

using nlohmann::json;

json Finite(double value) { return std::isfinite(value) && value > 0 ? json(value) : json(nullptr); }

/// The name of the device that judged: the bench record's, else the record's.
json GpuName(const dataset::Trajectory& t, const dataset::Attempt* a) {
  for (const std::optional<common::DeviceRecord>* device : {a && a->bench ? &a->bench->device : nullptr, &t.device})
    if (device && *device && (*device)->Has("name")) return (*device)->name;
  return nullptr;
}

}  // namespace

json Measurements(const dataset::Trajectory& t, const dataset::Attempt* a) {
  const bool timed = a && a->bench && a->bench->status == common::VerdictStatus::kOk;
  json row = {{"kernel_ms", timed ? Finite(a->bench->candidate.stats.median) : json(nullptr)},
              {"reference_ms", timed && a->bench->reference ? Finite(a->bench->reference->stats.median)
                                                            : json(nullptr)},
              {"bench_mode", timed ? json(common::kTimingModeNames.Name(a->bench->mode)) : json(nullptr)},
              {"gpu", t.compile_only ? json(nullptr) : GpuName(t, a)},
              {"judge_version", a && a->verdict ? json(a->verdict->judge) : json(nullptr)},
              {"torch_compile_ms", timed && a->bench->torch_compile ? Finite(a->bench->torch_compile->median_ms)
                                                                     : json(nullptr)}};
  return row;
}

bool SuspectTiming(const dataset::Attempt& a) {
  if (!a.suspect_timing.empty()) return true;  // common::SuspectTiming, as generate and the reader set it
  if (!a.bench) return false;
  // An implausible speedup is believed once the re-timing confirmed it; a record written before the
  // re-timing existed has none.
  const std::vector<std::string>& flags = a.bench->flags;
  return std::find(flags.begin(), flags.end(), "implausible_speedup") != flags.end() && !a.bench->recheck_speedup;
}

StatusOr<std::vector<json>> TurnRows(const dataset::Trajectory& t, const FormatOptions& options) {
  const std::vector<json> messages = TrlMessages(t, options);
  const json tools = common::TrlToolsToJson(t.tools);
  const json provenance = Provenance(t);
  std::vector<json> rows;
  for (const dataset::Attempt& a : t.attempts) {
    std::optional<size_t> at = AssistantMessageOf(messages, a.turn);
    if (!at) return Status::InvalidArgument("record " + t.id + ": attempt of turn " + std::to_string(a.turn) +
                                            " has no assistant turn");
    json row{{"prompt", json(std::vector<json>(messages.begin(), messages.begin() + *at))},
             {"completion", json::array({messages[*at]})},
             {"tools", tools}};
    for (const auto& [key, value] : provenance.items()) row[key] = value;
    row["turn"] = a.turn;
    row["status"] = a.StatusName();
    row["correct"] = a.correct;
    row["speedup"] = a.correct && a.speedup ? json(*a.speedup) : json(nullptr);
    const json measured = Measurements(t, &a);
    for (const auto& [key, value] : measured.items()) row[key] = value;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace kforge::exporter
