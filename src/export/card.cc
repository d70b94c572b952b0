// stats.json and the dataset card.
#include "kforge/export/card.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <string_view>

#include "kforge/common/text.h"
#include "kforge/export/formats.h"

namespace kforge::exporter {
namespace {

using nlohmann::json;

/// `text` from a record (a tag, a teacher's name) as Markdown shows it literally: one line, its
/// markup and HTML escaped, control and bidirectional characters shown, not obeyed.
std::string MarkdownText(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (const size_t bidi = common::BidiControlLength(text, i); bidi > 0) {
      out += "\\" + common::BidiControlText(text, i);  // a Markdown backslash shows the next one
      i += bidi - 1;
    } else if (c < 0x20 || c == 0x7f) {
      out += ' ';
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else if (std::string_view("\\`*_[]|").find(static_cast<char>(c)) != std::string_view::npos) {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void Table(std::ostringstream& out, const char* heading, const char* column,
           const std::map<std::string, int64_t>& counts) {
  if (counts.empty()) return;
  out << "\n### " << heading << "\n\n| " << column << " | records |\n| --- | ---: |\n";
  for (const auto& [name, n] : counts)
    out << "| " << (name.empty() ? "(none)" : MarkdownText(name)) << " | " << n << " |\n";
}

bool IsJsonLines(Format format) {
  switch (format) {
    case Format::kMessages:
    case Format::kPairs:
    case Format::kTrajectory:
    case Format::kTurns:
    case Format::kPreference:
      return true;
    case Format::kKernelBench:
      return false;
  }
  return false;  // not reached: the switch names every format
}

/// The Hub's licence ids that tasks' SPDX identifiers map onto, lowercased.
const std::set<std::string>& HubLicenses() {
  static const std::set<std::string> ids = {
      "apache-2.0", "mit",          "bsd-2-clause", "bsd-3-clause", "bsl-1.0",  "cc0-1.0",
      "cc-by-4.0",  "cc-by-sa-4.0", "cc-by-nc-4.0", "gpl-2.0",      "gpl-3.0",  "lgpl-2.1",
      "lgpl-3.0",   "agpl-3.0",     "mpl-2.0",      "unlicense",    "openrail", "isc",
      "zlib",       "artistic-2.0", "ecl-2.0",      "epl-2.0",      "wtfpl",    "odc-by"};
  return ids;
}

/// How the records were judged, for the card: on a GPU, by compiling only, or both.
std::string Judged(const DatasetStats& s) {
  const std::string version = KFORGE_VERSION;
  if (s.exported == 0) return "no record was exported, so none was judged";
  if (s.compile_only == 0)
    return "GPU-verified: every kernel was compiled with NVRTC and run by kforge " + version +
           " against its PyTorch reference on a GPU; `correct` means its outputs matched the reference";
  if (s.compile_only == s.exported)
    return "compile-only: kforge " + version +
           " ran without a GPU, so every kernel was compiled with NVRTC and checked statically but never "
           "run; `correct` is false throughout and no row is GPU-verified";
  return "mixed: " + std::to_string(s.exported - s.compile_only) +
         " records GPU-verified (compiled and run against the PyTorch reference by kforge " + version +
         ") and " + std::to_string(s.compile_only) +
         " compile-only (compiled, never run; `compile_only` is true on their rows)";
}

std::string DataFile(const DatasetStats& s, const std::string& split) {
  return split + "." + std::string(FileFormatName(s.file_format));
}

/// The features of the rows in the front matter (`dataset_info.features`, as `datasets` writes them
/// with `Features._to_yaml_list`): `load_dataset(ORG/NAME)` and `load_dataset(FOLDER)` read them, so a
/// mix of text and tools rows loads as one table without `features=` whatever the first rows hold.
void DatasetInfo(std::ostringstream& out, const std::vector<Column>& columns) {
  if (columns.empty()) return;
  out << "dataset_info:\n  features:\n";
  for (const Column& c : columns) {
    out << "  - name: " << c.name << "\n";
    if (c.type == "json_list") {
      out << "    list: json\n";
    } else if (c.type == "string_list") {
      out << "    list: string\n";
    } else {
      out << "    dtype: " << c.type << "\n";
    }
  }
}

/// The Hub's YAML front matter.
void FrontMatter(std::ostringstream& out, const DatasetStats& s) {
  std::set<std::string> licenses;
  for (const auto& [license, n] : s.licenses) licenses.insert(HubLicense(license));
  out << "---\n";
  if (licenses.size() == 1) {
    out << "license: " << *licenses.begin() << "\n";
  } else {
    out << "license:\n";
    for (const std::string& id : licenses) out << "- " << id << "\n";
  }
  out << "language:\n- en\n- code\n";
  out << "task_categories:\n- text-generation\n";
  out << "tags:\n- code\n- cuda\n- gpu-kernels\n- kforge\n- synthetic\n";
  if (s.with_tools) out << "- tool-calling\n";
  if (s.exported > 0) out << (s.compile_only == 0 ? "- gpu-verified\n" : "- compile-only\n");
  out << "size_categories:\n- " << SizeCategory(s.exported) << "\n";
  out << "pretty_name: kforge CUDA kernels (" << FormatName(s.format) << ")\n";
  out << "configs:\n- config_name: default\n  data_files:\n";
  for (const auto& [split, n] : s.splits)
    out << "  - split: " << split << "\n    path: " << DataFile(s, split) << "\n";
  DatasetInfo(out, RowColumns(s.format));
  out << "---\n";
}

const char* Describe(Format format) {
  switch (format) {
    case Format::kMessages:
      return "conversations in TRL's conversational format: a `messages` column (system, user, assistant and "
             "tool turns; tool calls with their arguments as JSON objects) and a `tools` column (the tool "
             "specs the teacher was offered, null without tools)";
    case Format::kPairs:
      return "prompt/completion pairs in TRL's conversational form: `completion` is the assistant turn that "
             "gave the best solution, `prompt` every message before it (the task as the teacher saw it, and "
             "the feedback on earlier attempts)";
    case Format::kTurns:
      return "one row per attempt, for multi-turn training: `completion` is the assistant turn that made the "
             "attempt, `prompt` every message before it, with the attempt's verdict (`status`, `correct`) and "
             "`speedup`";
    case Format::kPreference:
      return "preference pairs in TRL's conversational preference format: `prompt`, `chosen` and `rejected` "
             "(one assistant turn each), paired across the attempts and samples of a task that saw the same "
             "prompt by written rules (docs/export.md in kforge, \"Preference pairs\")";
    case Format::kTrajectory:
      return "whole kforge.trajectory/1 records (docs/formats.md in kforge)";
    case Format::kKernelBench:
      return "KernelBench ModelNew programs, one file per solution, named as KernelBench's runs name them";
  }
  return "";  // not reached: the switch names every format
}

const char* Schema(Format format) {
  switch (format) {
    case Format::kMessages:
      return "- `messages`: list of `{role, content, tool_calls?, tool_call_id?, name?, reasoning_content?}`, "
             "each message with only its own keys; tool calls are `{id, type: function, function: {name, "
             "arguments}}` with `arguments` a JSON object (Hugging Face's chat-template convention) unless "
             "exported with `--tool-arguments text`; the conversation ends with the assistant turn of the "
             "best attempt\n"
             "- `tools`: OpenAI-style tool specs (`{type: function, function: {name, description, "
             "parameters}}`), null on rows whose teacher was offered no tools\n";
    case Format::kPairs:
      return "- `prompt`: list of messages (system, user, and the earlier turns with their feedback)\n"
             "- `completion`: list of one assistant message\n"
             "- `tools`: as in the messages format (null without tools)\n";
    case Format::kTurns:
      return "- `prompt`: list of messages before the attempt's assistant turn\n"
             "- `completion`: list of one assistant message, the attempt's\n"
             "- `tools`: as in the messages format (null without tools)\n"
             "- `turn`, `status` (the verdict: `ok`, `compile_error`, `mismatch`, ...), `correct` and "
             "`speedup` are the attempt's; `turns` is the episode's\n";
    case Format::kPreference:
      return "- `prompt`: list of messages before the two attempts' assistant turns (the same for both)\n"
             "- `chosen`, `rejected`: list of one assistant message each\n"
             "- `tools`: as in the messages format (null without tools)\n"
             "- `rule`: `correct_over_incorrect` (the chosen attempt is verified correct, the rejected one "
             "is not) or `faster_over_slower` (both correct; the chosen one's speedup interval lies above the "
             "rejected one's); `chosen_*` and `rejected_*`: each side's record id, turn, speedup and kernel "
             "time, and the rejected side's verdict status; the chosen side never has suspect timing\n";
    case Format::kTrajectory:
      return "- every field of kforge.trajectory/1 (task, teacher, messages, tools, attempts with verdicts and "
             "timings, best, outcome, usage, timing); Anthropic thinking blocks are removed\n";
    case Format::kKernelBench:
      return "- `level_<L>_problem_<P>_sample_<S>_kernel.py`: a `ModelNew` built with "
             "`torch.utils.cpp_extension.load_inline`\n"
             "- `index.jsonl`: one line per file: `file`, `task`, `problem` (`level<L>/<name>.py` in "
             "KernelBench), "
             "`record`, and kforge's verdict (`correct`, `speedup`, `status`)\n";
  }
  return "";  // not reached: the switch names every format
}

/// What TRL's SFTTrainer takes from the rows of `format`; empty when it takes none as they are.
const char* TrainerColumns(Format format) {
  switch (format) {
    case Format::kMessages:
      return "messages` column as it is";
    case Format::kPairs:
    case Format::kTurns:
      return "prompt`/`completion` columns as they are";
    case Format::kPreference:  // DPOTrainer's, not SFTTrainer's: said apart in the card
    case Format::kTrajectory:
    case Format::kKernelBench:
      return "";
  }
  return "";  // not reached: the switch names every format
}

}  // namespace

void DatasetStats::Add(const dataset::Trajectory& t, const std::string& split) {
  ++exported;
  ++splits[split];
  ++levels[t.task.level ? "level " + std::to_string(*t.task.level) : "no level"];
  for (const std::string& tag : t.task.tags) ++tags[tag];
  ++sources[t.task.source];
  ++licenses[t.task.license];
  ++teachers[t.teacher.provider + "/" + t.teacher.model];
  ++runs[t.run_id];
  correct += t.correct();
  correct_general += t.correct() && t.attempts[*t.best].Generalises();
  suspect_timing += std::any_of(t.attempts.begin(), t.attempts.end(),
                                [](const dataset::Attempt& a) { return !a.suspect_timing.empty(); });
  with_tools += !t.tools.empty();
  compile_only += t.compile_only;
}

std::string HubLicense(const std::string& license) {
  std::string id;
  for (char c : license)
    if (!std::isspace(static_cast<unsigned char>(c)))
      id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (id.empty()) return "unknown";
  return HubLicenses().count(id) ? id : "other";
}

std::string SizeCategory(int64_t rows) {
  static const std::pair<int64_t, const char*> kCategories[] = {
      {1000, "n<1K"},         {10000, "1K<n<10K"},       {100000, "10K<n<100K"},   {1000000, "100K<n<1M"},
      {10000000, "1M<n<10M"}, {100000000, "10M<n<100M"}, {1000000000, "100M<n<1B"}};
  for (const auto& [bound, name] : kCategories)
    if (rows < bound) return name;
  return "n>1B";
}

json ToJson(const DatasetStats& s) {
  json read = {{"records", s.scan.records}, {"malformed", s.scan.malformed}, {"torn", s.scan.torn}};
  if (s.scan.duplicates) read["duplicates"] = s.scan.duplicates;
  return {{"schema", kExportStatsSchema},
          {"format", FormatName(s.format)},
          {"kforge_version", KFORGE_VERSION},
          {"inputs", s.inputs},
          {"options", s.options},
          {"read", read},
          {"left_out", s.left_out},
          {"exported", s.exported},
          {"correct", s.correct},
          {"correct_general", s.correct_general},
          {"suspect_timing", s.suspect_timing},
          {"with_tools", s.with_tools},
          {"compile_only", s.compile_only},
          {"file_format", FileFormatName(s.file_format)},
          {"splits", s.splits},
          {"levels", s.levels},
          {"tags", s.tags},
          {"sources", s.sources},
          {"licenses", s.licenses},
          {"teachers", s.teachers},
          {"runs", s.runs},
          {"files", s.files}};
}

namespace {

/// The card's "Loading" section: how `datasets` loads the files, and which trainer takes the columns.
void LoadingSection(std::ostringstream& out, const DatasetStats& s) {
  out << "\n## Loading\n\n";
  if (IsJsonLines(s.format)) {
    const std::vector<Column> columns = RowColumns(s.format);
    const bool pinned = !columns.empty() && s.file_format == FileFormat::kJsonl;
    std::string files;
    for (const auto& [split, n] : s.splits)
      files += (files.empty() ? "" : ", ") + ("\"" + split + "\": \"" + DataFile(s, split) + "\"");
    out << "```python\nfrom datasets import " << (pinned ? "Features, Json, List, Value, " : "")
        << "load_dataset\n\n";
    if (pinned) out << "features = " << FeaturesPython(columns) << "\n";
    const char* builder = s.file_format == FileFormat::kParquet ? "parquet" : "json";
    out << "ds = load_dataset(\"" << builder << "\", data_files={" << files << "}"
        << (pinned ? ", features=features" : "") << ")\n```\n";
    if (!columns.empty())
      out << "\nThe YAML front matter carries the same features (`dataset_info.features`), so the folder, or "
             "its copy on the Hub, also loads by its name alone: `load_dataset(\"PATH/TO/FOLDER\")`, "
             "`load_dataset(\"ORG/NAME\")`.\n";
    if (pinned)
      out << "\nThe features keep every message (and every tool-call argument object) exactly as written: "
             "`List(Json())` columns are not widened into one struct whose missing keys read as null.\n";
    if (s.file_format == FileFormat::kParquet)
      out << "\nThe Parquet files carry these features in their schema (`List(Json())` for the "
             "conversation and `tools` columns), so no `features=` is needed.\n";
    if (*TrainerColumns(s.format) != '\0')
      out << "\nTRL's `SFTTrainer` takes the `" << TrainerColumns(s.format) << ", with the `tools` column.\n";
    if (s.format == Format::kPreference)
      out << "\nTRL's `DPOTrainer` takes the `prompt`/`chosen`/`rejected` columns as they are, with the `tools` "
             "column.\n";
  } else {
    out << "The files follow KernelBench's run layout (`runs/<run "
           "name>/level_<L>_problem_<P>_sample_<S>_kernel.py`): "
           "KernelBench's evaluation scripts read this folder as a run. `scripts/kb-judge.sh` in kforge runs "
           "KernelBench's judge on each file against its problem and writes both verdicts side by side.\n";
  }
}

}  // namespace

std::string DatasetCard(const DatasetStats& s) {
  std::ostringstream out;
  bool lines = IsJsonLines(s.format);
  if (lines) FrontMatter(out, s);
  out << "# kforge dataset (" << FormatName(s.format) << ")\n\n";
  out << "CUDA kernels written by teacher LLMs for PyTorch reference programs and judged by kforge "
      << KFORGE_VERSION << ", exported as " << Describe(s.format) << ".\n\n";
  out << "How the data was judged: " << Judged(s) << ".\n\n";
  out << s.exported << " records, " << s.correct << " of them verified correct"
      << (s.with_tools ? ", " + std::to_string(s.with_tools) + " with tool calls" : std::string()) << ".\n";
  if (s.correct > 0)
    out << "\n`correct` means what KernelBench means: the kernel matched the reference at the task's own sizes. "
        << s.correct_general << " of the " << s.correct
        << " correct records were also correct at sizes kforge derived to probe generality"
        << (s.options.value("require_general", false) ? " (`--require-general`: only those were kept)" : "")
        << ".\n";
  const auto suspect_left_out = s.left_out.find("suspect_timing");
  if (s.suspect_timing > 0)
    out << "\n" << s.suspect_timing
        << " records hold an attempt whose timing kforge refused (faster than light, or not confirmed); "
           "that attempt's `speedup` is null (`--include-suspect-timing`).\n";
  else if (suspect_left_out != s.left_out.end())
    out << "\n" << suspect_left_out->second
        << " records were left out because kforge refused an attempt's timing (faster than light, or not "
           "confirmed).\n";
  out << "\n## Contents\n";
  Table(out, "Splits (by task: a task's records are all in one split)", "split", s.splits);
  Table(out, "Levels", "level", s.levels);
  Table(out, "Tags", "tag", s.tags);
  Table(out, "Teachers", "provider/model", s.teachers);
  Table(out, "Task sources", "source", s.sources);
  Table(out, "Licences of the reference programs", "licence", s.licenses);
  out << "\nEach record keeps its task's source and licence (`task_source`, `task_license`), its teacher and "
         "the "
         "kforge run it comes from (`run_id`). Reference programs stay under their own licences.\n";

  out << "\n## How it was made\n\n";
  out << "- inputs: ";
  for (size_t i = 0; i < s.inputs.size(); ++i) out << (i ? ", " : "") << "`" << s.inputs[i] << "`";
  out << "\n- records read: " << s.scan.records << " (" << s.scan.malformed << " malformed and "
      << s.scan.torn << " torn lines skipped"
      << (s.scan.duplicates ? ", " + std::to_string(s.scan.duplicates) + " duplicate records dropped" : "") << ")\n";
  out << "- options: `" << s.options.dump() << "`\n";
  if (!s.left_out.empty()) {
    out << "- left out:";
    bool first = true;
    for (const auto& [reason, n] : s.left_out) {
      out << (first ? " " : ", ") << n << " " << reason;
      first = false;
    }
    out << "\n";
  }
  out << "- records kforge could not judge (its own harness errors) are never exported as failures.\n";

  out << "\n## Schema\n\n" << Schema(s.format);
  if (lines && s.format != Format::kTrajectory)
    out << "- provenance: `id`, `run_id`, `task`, `level`, `tags`, `task_source`, `task_license`, "
           "`teacher_provider`, `teacher_model`, `kforge_version`, `protocol`, `compile_only`, `correct`, "
           "`speedup` (over the PyTorch reference, when timed), `turns`\n"
           "- measurements (of the attempt the row shows; null where not measured): `kernel_ms` and "
           "`reference_ms` (median times), `bench_mode` (`cold`: L2 flushed before each run, or `hot`), `gpu` "
           "(the device's name), `judge_version` (of the rules that judged it), `torch_compile_ms` (the "
           "reference under torch.compile, timed the same way, when the run measured it: generate "
           "--torch-compile)\n";

  LoadingSection(out, s);
  return out.str();
}

}  // namespace kforge::exporter
