// stats.json and the dataset card.
#include "kforge/export/card.h"

#include <sstream>

namespace kforge::exporter {
namespace {

using nlohmann::json;

void Table(std::ostringstream& out, const char* heading, const char* column,
           const std::map<std::string, int64_t>& counts) {
  if (counts.empty()) return;
  out << "\n### " << heading << "\n\n| " << column << " | records |\n| --- | ---: |\n";
  for (const auto& [name, n] : counts)
    out << "| " << (name.empty() ? "(none)" : name) << " | " << n << " |\n";
}

bool IsJsonLines(const std::string& format) { return format != "kernelbench"; }

const char* Describe(const std::string& format) {
  if (format == "messages")
    return "conversations in TRL's conversational format: a `messages` column (system, user, assistant and "
           "tool "
           "turns; tool calls in OpenAI form with JSON-text arguments) and a `tools` column when the teacher "
           "was "
           "offered tools";
  if (format == "pairs")
    return "prompt/completion pairs in TRL's conversational form: `prompt` holds the messages before the "
           "first "
           "assistant turn (the task as the teacher saw it), `completion` the assistant turn that gave the "
           "best "
           "solution";
  if (format == "trajectory") return "whole kforge.trajectory/1 records (docs/formats.md in kforge)";
  return "KernelBench ModelNew programs, one file per solution, named as KernelBench's runs name them";
}

const char* Schema(const std::string& format) {
  if (format == "messages")
    return "- `messages`: list of `{role, content, tool_calls?, tool_call_id?, name?, reasoning_content?}`; "
           "the "
           "conversation ends with the assistant turn of the best attempt\n"
           "- `tools`: OpenAI-style tool specs (`{type: function, function: {name, description, "
           "parameters}}`), when "
           "tools were offered\n";
  if (format == "pairs")
    return "- `prompt`: list of messages (system, user)\n- `completion`: list of one assistant message\n"
           "- `tools`: as in the messages format, when tools were offered\n";
  if (format == "trajectory")
    return "- every field of kforge.trajectory/1 (task, teacher, messages, tools, attempts with verdicts and "
           "timings, best, outcome, usage, timing); Anthropic thinking blocks are removed\n";
  return "- `level_<L>_problem_<P>_sample_<S>_kernel.py`: a `ModelNew` built with "
         "`torch.utils.cpp_extension.load_inline`\n"
         "- `index.jsonl`: one line per file: `file`, `task`, `problem` (`level<L>/<name>.py` in "
         "KernelBench), "
         "`record`, and kforge's verdict (`correct`, `speedup`, `status`)\n";
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
  with_tools += t.tools.is_array() && !t.tools.empty();
}

json ToJson(const DatasetStats& s) {
  return {{"schema", kExportStatsSchema},
          {"format", s.format},
          {"kforge_version", KFORGE_VERSION},
          {"inputs", s.inputs},
          {"options", s.options},
          {"read", {{"records", s.scan.records}, {"malformed", s.scan.malformed}, {"torn", s.scan.torn}}},
          {"left_out", s.left_out},
          {"exported", s.exported},
          {"correct", s.correct},
          {"with_tools", s.with_tools},
          {"splits", s.splits},
          {"levels", s.levels},
          {"tags", s.tags},
          {"sources", s.sources},
          {"licenses", s.licenses},
          {"teachers", s.teachers},
          {"runs", s.runs},
          {"files", s.files}};
}

std::string DatasetCard(const DatasetStats& s) {
  std::ostringstream out;
  bool lines = IsJsonLines(s.format);
  if (lines) {
    out << "---\nconfigs:\n- config_name: default\n  data_files:\n";
    for (const auto& [split, n] : s.splits)
      out << "  - split: " << split << "\n    path: " << split << ".jsonl\n";
    out << "---\n";
  }
  out << "# kforge dataset (" << s.format << ")\n\n";
  out << "CUDA kernels written by teacher LLMs for PyTorch reference programs and checked by kforge "
      << KFORGE_VERSION << " on a GPU, exported as " << Describe(s.format) << ".\n\n";
  out << s.exported << " records, " << s.correct << " of them verified correct"
      << (s.with_tools ? ", " + std::to_string(s.with_tools) + " with tool calls" : std::string()) << ".\n";
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
      << s.scan.torn << " torn lines skipped)\n";
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
  if (lines)
    out << "- provenance: `id`, `run_id`, `task`, `level`, `tags`, `task_source`, `task_license`, "
           "`teacher_provider`, `teacher_model`, `kforge_version`, `protocol`, `correct`, `speedup` (over "
           "the "
           "PyTorch reference, when timed), `turns`\n";

  out << "\n## Loading\n\n";
  if (lines) {
    out << "```python\nfrom datasets import load_dataset\n\nds = load_dataset(\"json\", data_files={";
    bool first = true;
    for (const auto& [split, n] : s.splits) {
      out << (first ? "" : ", ") << "\"" << split << "\": \"" << split << ".jsonl\"";
      first = false;
    }
    out << "})\n```\n";
    if (s.format != "trajectory")
      out << "\nTRL's `SFTTrainer` takes the `"
          << (s.format == "messages" ? "messages" : "prompt`/`completion") << "` column"
          << (s.format == "messages" ? "" : "s") << " as they are, with the `tools` column when present.\n";
  } else {
    out << "The files follow KernelBench's run layout (`runs/<run "
           "name>/level_<L>_problem_<P>_sample_<S>_kernel.py`): "
           "KernelBench's evaluation scripts read this folder as a run. `scripts/kb-judge.sh` in kforge runs "
           "KernelBench's judge on each file against its problem and writes both verdicts side by side.\n";
  }
  return out.str();
}

}  // namespace kforge::exporter
