// The trainer's Python seen from kforge: which one, and what it says about itself, the --config
// file and the chat template (through scripts/finetune/sft_trl.py).
#include <sstream>

#include "finetune/process.h"
#include "kforge/common/files.h"
#include "kforge/common/json_fields.h"
#include "kforge/finetune/run.h"

namespace kforge::finetune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kScriptPrefix = "sft_trl: ";

/// The script's own one-line message (its last line starting with "sft_trl: "), else the last
/// line of its stderr.
std::string ScriptMessage(const std::string& err) {
  std::istringstream lines(err);
  std::string found, last;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    last = line;
    if (line.rfind(kScriptPrefix, 0) == 0) found = line.substr(std::string(kScriptPrefix).size());
  }
  return found.empty() ? last : found;
}

}  // namespace

StatusOr<json> ReadOverrides(const std::string& path, const LaunchOptions& o) {
  const std::string ext = fs::path(path).extension().string();
  json value;
  if (ext == ".yaml" || ext == ".yml") {
    KFORGE_ASSIGN_OR_RETURN(ProcessResult run,
                            Capture({o.python, o.trl_script.string(), "--read-config", path}));
    if (run.exit_code != 0) return Status::InvalidArgument("--config " + ScriptMessage(run.err));
    value = json::parse(run.out, nullptr, false);
  } else {
    KFORGE_ASSIGN_OR_RETURN(std::string text, common::ReadFile(path));
    KFORGE_ASSIGN_OR_RETURN(value, common::ParseJson(text, path));
  }
  if (!value.is_object())
    return Status::InvalidArgument(path + ": expected an object of trainer settings, got " +
                                   common::JsonTypeName(value));
  return value;
}

StatusOr<json> ProbeVersions(const LaunchOptions& o) {
  auto run = Capture({o.python, o.trl_script.string(), "--versions"});
  if (!run.ok())
    return Status::Unavailable("python " + run.status().message() + " (set --python or KFORGE_PYTHON)");
  if (run->exit_code != 0)
    return Status::Unavailable(o.python + " " + o.trl_script.string() +
                               " --versions failed: " + ScriptMessage(run->err));
  json versions = json::parse(run->out, nullptr, false);
  if (!versions.is_object()) return Status::Unavailable(o.python + ": --versions printed no JSON object");
  return versions;
}

Status CheckPackages(const LaunchOptions& o, const json& versions) {
  const bool trl = o.backend == Backend::kTrl;
  std::vector<std::string> needed = {trl ? "trl" : "axolotl", "transformers"};
  if (trl && o.training.lora) needed.push_back("peft");
  // The TRL stack is pinned in scripts/requirements-finetune.txt; axolotl lives in an environment of its own.
  const std::string install = trl ? "pip install -r scripts/requirements-finetune.txt (scripts/setup.sh "
                                    "--finetune installs it into kforge's Python)"
                                  : "pip install axolotl";
  for (const std::string& package : needed) {
    if (versions.value(package, json()).is_null())
      return Status::Unavailable("the " + std::string(BackendName(o.backend)) + " backend needs " + package +
                                 ", which " + o.python + " cannot import: " + install);
  }
  // --report-to names a package the trainer imports only once the model is loaded: checked here.
  const std::string& report = o.training.report_to;
  const bool reporter = report == "tensorboard"
                            ? !versions.value("tensorboard", json()).is_null() ||
                                  !versions.value("tensorboardX", json()).is_null()
                            : report == "none" || !versions.value(report, json()).is_null();
  if (!reporter)
    return Status::Unavailable("--report-to " + report + " needs the " + report + " package, which " + o.python +
                               " cannot import: pip install " + report + " (or --report-to none)");
  return Status::Ok();
}

StatusOr<json> CheckChatTemplate(const LaunchOptions& o, bool assistant_only_loss) {
  std::vector<std::string> argv = {o.python, o.trl_script.string(), "--check-template", "--model", o.model,
                                   "--data", o.data.string()};
  if (assistant_only_loss) argv.push_back("--assistant-only-loss");
  if (!o.chat_template.empty()) argv.insert(argv.end(), {"--chat-template", o.chat_template});
  if (!o.eval_data.empty()) argv.insert(argv.end(), {"--eval-data", o.eval_data.string()});
  if (o.training.max_seq_len > 0)
    argv.insert(argv.end(), {"--max-length", std::to_string(o.training.max_seq_len)});
  KFORGE_ASSIGN_OR_RETURN(ProcessResult run, Capture(argv));
  if (run.exit_code != 0) return Status::InvalidArgument(ScriptMessage(run.err));
  json summary = json::parse(run.out, nullptr, false);
  if (!summary.is_object()) return Status::Unavailable("--check-template printed no JSON object");
  return summary;
}

}  // namespace kforge::finetune
