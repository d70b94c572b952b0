// The rows of the JSON lines export formats, one per trajectory record: `messages` (TRL's
// conversational format), `pairs` (conversational prompt/completion) and `trajectory` (the whole
// record). Every row carries provenance columns. docs/formats.md, "Export rows", shows each shape.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"
#include "kforge/dataset/trajectory.h"

namespace kforge::exporter {

struct FormatOptions {
  /// Keep the recorded reasoning of assistant turns as `reasoning_content`. Default off.
  bool with_reasoning = false;
};

/// The provenance columns: id, run_id, task, level, tags, task_source, task_license,
/// teacher_provider, teacher_model, kforge_version, protocol, correct, speedup, turns.
nlohmann::json Provenance(const dataset::Trajectory& record);

/// `{"messages": [...], "tools": [...] (when tools were offered), provenance...}`. Messages are in
/// OpenAI/TRL form: tool calls as `{"id", "type": "function", "function": {"name", "arguments":
/// JSON text}}`, tool results with `tool_call_id` and `name`; Anthropic thinking blocks are dropped.
/// The conversation ends with the assistant turn of the best attempt (all of it without one).
/// InvalidArgument naming the record when a message cannot be read.
StatusOr<nlohmann::json> MessagesRow(const dataset::Trajectory& record, const FormatOptions& options);

/// `{"prompt": [the messages before the first assistant turn], "completion": [the assistant turn of the
/// best attempt, else the last one], "tools"?, provenance...}`.
StatusOr<nlohmann::json> PairsRow(const dataset::Trajectory& record, const FormatOptions& options);

/// The whole record (kforge.trajectory/1), with Anthropic thinking blocks dropped and, unless
/// `with_reasoning`, without reasoning.
nlohmann::json TrajectoryRow(const dataset::Trajectory& record, const FormatOptions& options);

}  // namespace kforge::exporter
