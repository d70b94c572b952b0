// The rows of the JSON lines export formats, one per trajectory record: `messages` (TRL's
// conversational format), `pairs` (conversational prompt/completion) and `trajectory` (the whole
// record). Every row of a messages or pairs file has the same columns (null where a record has no
// value), described by RowFeatures, so that Arrow-based loaders read a mixed export as one table.
// docs/formats.md, "Export rows", shows each shape.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/chat.h"
#include "kforge/common/names.h"
#include "kforge/common/status.h"
#include "kforge/dataset/trajectory.h"

namespace kforge::exporter {

/// The formats of `kforge export`: five of JSON lines rows, and KernelBench ModelNew files.
enum class Format { kMessages, kPairs, kTrajectory, kKernelBench, kTurns, kPreference };
inline constexpr common::NameTable<Format, 6> kFormatNames = {{{Format::kMessages, "messages"},
                                                               {Format::kPairs, "pairs"},
                                                               {Format::kTrajectory, "trajectory"},
                                                               {Format::kKernelBench, "kernelbench"},
                                                               {Format::kTurns, "turns"},
                                                               {Format::kPreference, "preference"}}};
static_assert(kFormatNames.MatchesEnum());
inline std::string_view FormatName(Format format) { return kFormatNames.Name(format); }
inline std::optional<Format> ParseFormat(std::string_view name) { return kFormatNames.Parse(name); }
/// True for the formats whose rows are conversations to train on (messages, pairs, turns, preference).
bool IsConversation(Format format);

/// How messages and pairs rows are stored: JSON lines, or Parquet with the pinned schema (RowColumns).
/// The names are the data files' extensions.
enum class FileFormat { kJsonl, kParquet };
inline constexpr common::NameTable<FileFormat, 2> kFileFormatNames = {
    {{FileFormat::kJsonl, "jsonl"}, {FileFormat::kParquet, "parquet"}}};
static_assert(kFileFormatNames.MatchesEnum());
inline std::string_view FileFormatName(FileFormat format) { return kFileFormatNames.Name(format); }

/// How the messages of conversation rows are written (`with_reasoning`, `arguments_as_text`).
using FormatOptions = common::TrlOptions;

/// One column of a messages or pairs file: its name and its type in the Hugging Face `datasets`
/// library's terms: "string", "int64", "float64", "bool", "string_list" (List(Value("string"))),
/// "json_list" (List(Json()): a list of JSON values, each kept exactly as written).
struct Column {
  std::string name;
  std::string type;
};

/// The columns of every row of `format` (a conversation format), in order: the conversation columns,
/// `tools`, then the provenance and measurement columns. Empty for other formats.
std::vector<Column> RowColumns(Format format);

/// The columns as `datasets.Features.to_dict()` writes them ({"messages": {"_type": "List", ...}}).
nlohmann::json FeaturesDict(const std::vector<Column>& columns);

/// The columns as Python source: `Features({"messages": List(Json()), ...})`.
std::string FeaturesPython(const std::vector<Column>& columns);

/// The provenance columns: id, run_id, task, level, tags, task_source, task_license,
/// teacher_provider, teacher_model, kforge_version, protocol, compile_only, correct, speedup, turns.
nlohmann::json Provenance(const dataset::Trajectory& record);

/// True when the record's messages hold an assistant turn (a teacher that failed before answering
/// leaves none): only such records make messages or pairs rows.
bool HasAssistantTurn(const dataset::Trajectory& record);

/// `{"messages": [...], "tools": [...] or null, provenance...}`. Messages and tools are in TRL's form
/// (common::TrlMessagesToJson, common::TrlToolsToJson): tool calls as `{"id", "type": "function",
/// "function": {"name", "arguments": object}}` (JSON text with `arguments_as_text`), tool results with
/// `tool_call_id` and `name`; Anthropic thinking blocks are dropped. The conversation ends with the
/// assistant turn of the best attempt, else the last assistant turn. InvalidArgument naming the record
/// when there is no assistant turn.
StatusOr<nlohmann::json> MessagesRow(const dataset::Trajectory& record, const FormatOptions& options);

/// `{"prompt": [every message before the completion's assistant turn], "completion": [the assistant
/// turn of the best attempt, else the last one], "tools", provenance...}`. InvalidArgument as MessagesRow.
StatusOr<nlohmann::json> PairsRow(const dataset::Trajectory& record, const FormatOptions& options);

/// The record's messages in Hugging Face/TRL form, as MessagesRow writes them, all of them.
std::vector<nlohmann::json> TrlMessages(const dataset::Trajectory& record, const FormatOptions& options);

/// The index in `messages` (TrlMessages) of the assistant message of 1-based `turn`; nullopt when
/// there are fewer assistant turns.
std::optional<size_t> AssistantMessageOf(const std::vector<nlohmann::json>& messages, int turn);

/// What an attempt measured, in absolute terms: `kernel_ms` and `reference_ms` (the bench medians),
/// `bench_mode` (cold or hot), `gpu` (the name of the device that judged it) and `judge_version` (of
/// its verdict); null where it was not measured. `attempt` may be null (a record without attempts).
nlohmann::json Measurements(const dataset::Trajectory& record, const dataset::Attempt* attempt);

/// True when the attempt's timing is suspect: `suspect_timing` (common::kSuspectTimingFlags:
/// `faster_than_light`, `timing_unconfirmed`), or `implausible_speedup` without the re-timing that would
/// confirm it (docs/bench.md, "Flags"). Such an attempt is never the chosen side of a preference pair.
bool SuspectTiming(const dataset::Attempt& attempt);

/// `turns`: one row per attempt, `{"prompt": [every message before its assistant turn], "completion":
/// [that assistant turn], "tools", provenance..., "turn", "status", "correct", "speedup" (the
/// attempt's), measurements...}`. InvalidArgument as MessagesRow.
StatusOr<std::vector<nlohmann::json>> TurnRows(const dataset::Trajectory& record, const FormatOptions& options);

/// The whole record (kforge.trajectory/1), with Anthropic thinking blocks dropped and, unless
/// `with_reasoning`, without reasoning.
nlohmann::json TrajectoryRow(const dataset::Trajectory& record, const FormatOptions& options);

}  // namespace kforge::exporter
