// `kforge skill eval`'s output read back and shown: the eval.json reader (a folder or the file), the
// terminal table, a one-line summary, and the HTML section that both the eval's own page and
// `kforge report --html` show (docs/formats.md, kforge.skill_eval/1).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"

namespace kforge::skill {

/// The eval.json that `argument` names: a file called eval.json, or eval.json inside a folder. Empty
/// otherwise (a run folder, a trajectories file), so a run is not taken for an eval or the reverse.
std::optional<std::filesystem::path> EvalFileOf(const std::filesystem::path& argument);

/// Reads and checks an eval's output: a folder holding eval.json, or a JSON file of schema
/// kforge.skill_eval/1 (any name). Every field the table, the summary and the HTML section read must
/// have its type. Errors are one line naming the file and the JSON path.
StatusOr<nlohmann::json> ReadEvalReport(const std::filesystem::path& argument);

/// Checks that `eval` has every field the renderers read, with its type; `where` starts the error.
Status CheckEvalReport(const nlohmann::json& eval, const std::string& where);

/// The eval as a table for the terminal.
std::string EvalTable(const nlohmann::json& eval);

/// One line: the skill, its tasks and each model's verdict with the skill's lift over no skill.
std::string EvalSummaryLine(const nlohmann::json& eval);

/// CSS rules the section uses besides plain tables (the verdict's colours).
extern const char* const kEvalHtmlStyle;

/// The eval as an HTML fragment: a heading of `level` (1 or 2) naming the skill, its setup, the
/// tasks left out, and per model a heading one level down with the verdict, the arms table and the
/// lifts table. Every string from the file is escaped.
std::string EvalHtmlSection(const nlohmann::json& eval, int level);

/// A standalone page holding EvalHtmlSection(eval, 1).
std::string EvalHtml(const nlohmann::json& eval);

}  // namespace kforge::skill
