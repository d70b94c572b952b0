// RunFinetune: the steps of a launch, each refusing bad input before anything starts.
#include "kforge/finetune/run.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

#include "finetune/data_source.h"
#include "finetune/manifest.h"
#include "finetune/process.h"
#include "kforge/common/files.h"
#include "kforge/common/json_fields.h"
#include "kforge/finetune/hub.h"

namespace kforge::finetune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// Where the trainer keeps its checkpoints: TRL's output_dir, or axolotl's (the model folder).
fs::path CheckpointFolder(const LaunchOptions& o) {
  return o.out / (o.backend == Backend::kTrl ? "checkpoints" : "model");
}

bool HasCheckpoint(const fs::path& folder) {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec) && it->path().filename().string().rfind("checkpoint-", 0) == 0) return true;
  return false;
}

Status CheckOut(const LaunchOptions& o, bool force) {
  const fs::path& out = o.out;
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    return Status::InvalidArgument("--out " + out.string() + ": not a folder");
  if (force && o.resume) return Status::InvalidArgument("--force and --resume: choose one");
  if (o.resume) {
    if (!HasCheckpoint(CheckpointFolder(o)))
      return Status::InvalidArgument("--resume: no checkpoint-* folder in " + CheckpointFolder(o).string() +
                                     " to continue from");
    return Status::Ok();
  }
  if (fs::exists(out / kManifestFile, ec) && !force)
    return Status::InvalidArgument(
        "--out " + out.string() +
        " holds a previous run (manifest.json); pass --resume to continue it, --force to replace it, or "
        "choose another folder");
  return Status::Ok();
}

/// --force: what a previous run wrote into OUT, removed once every check has passed.
Status ClearPreviousRun(const fs::path& out) {
  std::error_code ec;
  for (const char* folder : {"model", "checkpoints", "adapter", "axolotl-prepared"}) {
    fs::remove_all(out / folder, ec);
    if (ec) return Status::IoError((out / folder).string() + ": " + ec.message());
  }
  std::vector<fs::path> files = {out / "train.log", out / kManifestFile};
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("slurm-", 0) == 0 && it->path().extension() == ".log") files.push_back(it->path());
  }
  for (const fs::path& file : files) fs::remove(file, ec);
  return Status::Ok();
}

std::string Describe(const DatasetStats& s, const fs::path& data) {
  std::ostringstream text;
  text << "dataset " << data.string() << ": " << s.records << " records (" << DatasetFormatName(s.format)
       << "), " << s.messages << " messages, " << s.assistant_turns << " assistant turns, " << s.tool_calls
       << " tool calls, " << s.records_with_tools << " with tools; sha256 " << s.sha256.substr(0, 16)
       << "...";
  return text.str();
}

std::string Histogram(const DatasetStats& s) {
  std::string text = "approximate tokens per record (characters / 3.5):";
  for (size_t i = 0; i < s.histogram.size(); ++i) {
    if (s.histogram[i] == 0) continue;
    text += i < kHistogramBounds.size() ? " <=" + std::to_string(kHistogramBounds[i])
                                        : " >" + std::to_string(kHistogramBounds.back());
    text += ": " + std::to_string(s.histogram[i]) + ",";
  }
  text.pop_back();
  return text;
}

/// The character estimate, when no tokenizer measured the rows.
/// The manifests of the runs a --resume continues, oldest first: the previous manifest's own
/// `segments`, then the previous manifest without them.
json EarlierSegments(const fs::path& out) {
  json segments = json::array();
  StatusOr<std::string> text = common::ReadFile(out / kManifestFile);
  json previous = text.ok() ? json::parse(*text, nullptr, false) : json();
  if (!previous.is_object()) return segments;
  if (previous.contains("segments") && previous["segments"].is_array()) segments = previous["segments"];
  previous.erase("segments");
  segments.push_back(std::move(previous));
  return segments;
}

/// Without --cpus-per-task a Slurm job asks for kCpusPerGpu per process; a node with fewer CPUs (a small
/// CPU partition) would leave it pending forever. sinfo says how many the partition's nodes have: the
/// default is lowered to the smallest, with a note. Nothing changes where sinfo is not on PATH.
void FitCpusToNodes(LaunchOptions& o, const RunOutput& output) {
  if (!OnPath("sinfo")) return;
  std::vector<std::string> argv = {"sinfo", "-h", "-o", "%c"};
  if (!o.slurm.partition.empty()) argv.insert(argv.end(), {"-p", o.slurm.partition});
  StatusOr<ProcessResult> nodes = Capture(argv);
  if (!nodes.ok() || nodes->exit_code != 0) return;
  int fewest = 0;
  std::istringstream lines(nodes->out);
  for (std::string line; std::getline(lines, line);) {
    const int cpus = std::atoi(line.c_str());  // "2", or "2+" for nodes of several sizes
    if (cpus > 0 && (fewest == 0 || cpus < fewest)) fewest = cpus;
  }
  const int wanted = kCpusPerGpu * std::max(o.gpus_per_node, 1);
  if (fewest == 0 || wanted <= fewest) return;
  o.slurm.cpus_per_task = fewest;
  output.note("--cpus-per-task " + std::to_string(fewest) + ": the nodes" +
              (o.slurm.partition.empty() ? "" : " of partition " + o.slurm.partition) + " have " +
              std::to_string(fewest) + " CPUs (sinfo), fewer than the default " + std::to_string(wanted));
}

/// What a wandb run needs where it runs: a key to reach wandb.ai, or offline mode (a job without network).
std::string WandbNote() {
  const char* mode = std::getenv("WANDB_MODE");
  const std::string m = mode ? mode : "";
  if (m == "offline" || m == "disabled" || m == "dryrun")
    return "wandb: WANDB_MODE=" + m + " (runs are kept under wandb/ in the working folder; `wandb sync` uploads them)";
  if (std::getenv("WANDB_API_KEY"))
    return "wandb: WANDB_API_KEY is set; the job must reach wandb.ai (WANDB_MODE=offline for a job without "
           "network, then `wandb sync`)";
  return "warning: --report-to wandb: neither WANDB_API_KEY nor WANDB_MODE is set; a job needs a login "
         "(`wandb login` or WANDB_API_KEY) to reach wandb.ai, or WANDB_MODE=offline where it has no network "
         "(then `wandb sync` the wandb/ folder)";
}

std::string EstimateNote(const DatasetStats& s, const TrainingSettings& t) {
  return std::string(t.max_seq_len > 0 ? "" : "warning: ") + "max_seq_len " +
         std::to_string(MaxSeqLen(t, s)) +
         (t.max_seq_len > 0
              ? ""
              : " (estimated from characters / 3.5: no tokenizer measured the rows; rows may be "
                "longer in tokens and be cut)") +
         ": the longest record is about " + std::to_string(ApproxTokens(s.max_chars)) + " tokens; about " +
         std::to_string(RecordsCut(t, s)) + " of " + std::to_string(s.records) + " records are longer";
}

/// What the template check found: records rendered, tool calls, tokens per row.
std::string TemplateNote(const json& rendered, const LaunchOptions& o) {
  const json tokens = rendered.value("tokens", json::object());
  std::string note =
      "chat template of " + o.model + (o.chat_template.empty() ? "" : " (" + o.chat_template + ")") + ": " +
      std::to_string(rendered.value("rendered", 0)) + " records checked with " +
      std::to_string(rendered.value("tool_calls", 0)) + " tool calls; tokens per row over " +
      std::to_string(tokens.value("rows", 0)) + " rows: p50 " + std::to_string(tokens.value("p50", 0)) +
      ", p95 " + std::to_string(tokens.value("p95", 0)) + ", p99 " + std::to_string(tokens.value("p99", 0)) +
      ", max " + std::to_string(tokens.value("max", 0)) + " (line " +
      std::to_string(tokens.value("longest_line", 0)) + ")";
  return note;
}

/// Rows of a measured file longer than `cap` tokens: the script's count, else (an older script)
/// what the percentiles tell.
std::string LongerThan(const json& tokens, int64_t cap) {
  const std::string rows = std::to_string(tokens.value("rows", 0));
  if (tokens.value("longer_than_max_length", json()).is_number_integer())
    return std::to_string(tokens["longer_than_max_length"].get<int64_t>()) + " of the " + rows;
  if (tokens.value("p50", int64_t{0}) > cap) return "more than half of the " + rows;
  if (tokens.value("p95", int64_t{0}) > cap) return "more than 5% of the " + rows;
  if (tokens.value("p99", int64_t{0}) > cap) return "more than 1% of the " + rows;
  return "at least 1 of the " + rows;
}

/// Sets max_seq_len from the measured tokens, or refuses a given one that would cut rows.
Status ApplyMeasuredLength(const json& rendered, LaunchOptions& o, const RunOutput& output) {
  TrainingSettings& t = o.training;
  const json tokens = rendered.value("tokens", json::object());
  int64_t longest = tokens.value("max", int64_t{0});
  const json& eval = rendered.value("eval_tokens", json());
  if (eval.is_object()) longest = std::max(longest, eval.value("max", int64_t{0}));
  if (t.max_seq_len > 0) {
    for (const auto& [name, measured] :
         {std::pair<std::string, json>{o.data.string(), tokens}, {o.eval_data.string(), eval}}) {
      if (!measured.is_object() || measured.value("max", int64_t{0}) <= t.max_seq_len) continue;
      return Status::InvalidArgument(
          "--max-seq-len " + std::to_string(t.max_seq_len) + " would cut " +
          LongerThan(measured, t.max_seq_len) + " rows of " + name + " (the longest, line " +
          std::to_string(measured.value("longest_line", 0)) + ", is " +
          std::to_string(measured.value("max", 0)) + " tokens with the chat template): raise it to " +
          std::to_string(MeasuredMaxSeqLen(measured.value("max", int64_t{0}))) + " or leave it unset");
    }
    return Status::Ok();
  }
  t.max_seq_len = MeasuredMaxSeqLen(longest);
  t.max_seq_len_basis = "measured";
  output.note(
      "max_seq_len " + std::to_string(t.max_seq_len) + " (from the data: the longest row's " +
      std::to_string(longest) +
      " measured tokens, percentile 100, rounded up to a multiple of 64): " + "every row trains whole");
  return Status::Ok();
}

/// After sbatch: the job id in the manifest (read again from disk: a short job may already have
/// completed it). The job records its own end; kforge records only a failed submission's.
StatusOr<int> RecordSubmission(const LaunchOptions& o, const ProcessResult& result, const RunOutput& output) {
  KFORGE_ASSIGN_OR_RETURN(std::string text, common::ReadFile(o.out / kManifestFile));
  KFORGE_ASSIGN_OR_RETURN(json manifest, common::ParseJson(text, kManifestFile));
  RecordSubmissionIn(manifest, result);
  KFORGE_RETURN_IF_ERROR(WriteManifest(o.out, manifest));
  if (result.exit_code != 0) {
    output.note("sbatch exited with status " + std::to_string(result.exit_code) + ": nothing was submitted");
    return result.exit_code;
  }
  output.note("sbatch submitted job " + manifest.value("slurm_job_id", std::string("?")) +
              "; the job completes " + (o.out / kManifestFile).string() +
              " when it ends (kforge finetune-launch --status " + o.out.string() + ")");
  return 0;
}

Status WriteFiles(const LaunchPlan& plan, const fs::path& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return Status::IoError("--out " + out.string() + ": " + ec.message());
  for (const auto& [path, contents] : plan.files) {
    if (path.parent_path() != out)
      return Status::Internal(path.string() + " is not directly inside " + out.string());
    KFORGE_RETURN_IF_ERROR(common::WriteFileAtomic(path, contents));
  }
  return Status::Ok();
}

/// Writes the launch's files (a launch that will run replaces the previous run first; one that cannot,
/// with no sbatch here, leaves it) and, for --dry-run, prints the batch script and the command. The
/// exit code when that ends the launch (a dry run), nullopt when it is to run now.
StatusOr<std::optional<int>> WriteLaunch(const RunRequest& request, const LaunchOptions& o, const LaunchPlan& plan,
                                         const RunOutput& output) {
  const bool no_sbatch = o.launcher == Launcher::kSlurm && !request.dry_run && !OnPath("sbatch");
  if (request.force && !request.dry_run && !no_sbatch) KFORGE_RETURN_IF_ERROR(ClearPreviousRun(o.out));
  KFORGE_RETURN_IF_ERROR(WriteFiles(plan, o.out));
  for (const auto& [path, contents] : plan.files) output.note("wrote " + path.string());
  if (no_sbatch)
    return Status::Unavailable("sbatch is not on PATH: submit " + (o.out / "launch.sbatch").string() +
                               " where Slurm runs, or use --dry-run to print it");
  if (!request.dry_run) return std::optional<int>();
  if (!plan.sbatch.empty()) output.print(plan.sbatch);
  output.print(ShellJoin(plan.argv) + "\n");
  return std::optional<int>(0);
}

/// --trainer grpo: no dataset to check (the prompts come from the judge server), the packages
/// checked, the launch rendered, run and recorded as for SFT.
StatusOr<int> RunGrpo(const RunRequest& request, LaunchOptions& o, const RunOutput& output) {
  if (!request.push_to_hub.empty())
    return Status::InvalidArgument(
        "--push-to-hub with --trainer grpo: upload DIR/model after the run (scripts/hub_push.py)");
  if (o.trainer == Trainer::kGrpo && o.grpo.protocol != "text" && o.grpo.protocol != "tools")
    return Status::InvalidArgument("--rl-protocol " + o.grpo.protocol + ": expected text or tools");
  DatasetStats stats;
  if (!o.data.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(o.data, ec))
      return Status::InvalidArgument("--data " + o.data.string() +
                                     ": no such file (JSON lines with a task_id column)");
  }
  if (o.launcher == Launcher::kSlurm && o.slurm.cpus_per_task == 0) FitCpusToNodes(o, output);
  KFORGE_ASSIGN_OR_RETURN(LaunchPlan plan, PlanLaunch(o, stats));
  json versions = json::object();
  StatusOr<json> probed = ProbeVersions(o);
  const Status packages = probed.ok() ? CheckPackages(o, *probed) : probed.status();
  if (!packages.ok() && !request.dry_run) return packages;
  if (probed.ok()) {
    versions = *probed;
    if (o.launcher != Launcher::kSlurm && versions.value("bf16", json()).is_boolean())
      o.bf16 = versions["bf16"].get<bool>();
    if (o.training.report_to == "wandb") output.note(WandbNote());
  }
  std::string servers;
  for (const std::string& s : o.grpo.servers) servers += (servers.empty() ? "" : ", ") + s;
  output.note("grpo: prompts and rewards from kforge serve at " + servers + "; " +
              std::to_string(o.grpo.num_generations) + " completions per prompt, at most " +
              std::to_string(o.grpo.max_completion_length) + " tokens each");
  KFORGE_ASSIGN_OR_RETURN(plan, PlanLaunch(o, stats));
  KFORGE_ASSIGN_OR_RETURN(const std::optional<int> ended, WriteLaunch(request, o, plan, output));
  if (ended) return *ended;
  json manifest = NewManifest(o, stats, plan, versions);
  if (o.resume) manifest["segments"] = EarlierSegments(o.out);
  KFORGE_RETURN_IF_ERROR(WriteManifest(o.out, manifest));
  output.note("running: " + ShellJoin(plan.argv));
  KFORGE_ASSIGN_OR_RETURN(ProcessResult result, RunLogged(plan.argv, o.out / "train.log", plan.environment));
  if (o.launcher == Launcher::kSlurm) return RecordSubmission(o, result, output);
  FinishManifest(manifest, result);
  KFORGE_RETURN_IF_ERROR(WriteManifest(o.out, manifest));
  output.note(std::string("grpo ") +
              (result.signal ? "killed by signal " + std::to_string(result.signal)
                             : "exited with status " + std::to_string(result.exit_code)) +
              "; manifest " + (o.out / kManifestFile).string());
  return result.exit_code;
}

}  // namespace

StatusOr<std::string> ResolveModel(const std::string& model) {
  std::error_code ec;
  const fs::path path(model);
  if (fs::exists(path, ec)) {
    if (!fs::is_directory(path, ec))
      return Status::InvalidArgument("--model " + model + ": not a model folder");
    if (!fs::exists(path / "config.json", ec))
      return Status::InvalidArgument("--model " + model + ": no config.json in it (not a model folder)");
    return fs::absolute(path).lexically_normal().string();
  }
  static const std::regex kHubId(R"([A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})");
  if (std::regex_match(model, kHubId) && model.find("..") == std::string::npos && model.rfind("./", 0) != 0)
    return model;
  return Status::InvalidArgument("--model " + model + ": no such folder (and not a hub id like org/name)");
}

namespace {

/// The Python checks: the packages, then the chat template (which also measures the rows). Required
/// for a launch; a dry run makes them when it can, so that what it renders (precision, sequence length)
/// is what a launch would. `versions` and `rendered` get what the scripts report.
Status RunPythonChecks(const RunRequest& request, LaunchOptions& o, const DatasetStats& stats, const LaunchPlan& plan,
                       const RunOutput& output, json& versions, json& rendered) {
  StatusOr<json> probed = ProbeVersions(o);
  const Status packages = probed.ok() ? CheckPackages(o, *probed) : probed.status();
  if (!packages.ok() && !request.dry_run) return packages;
  // A dry run without the backend (axolotl lives elsewhere) still measures the rows with transformers.
  const bool can_measure = probed.ok() && !probed->value("transformers", json()).is_null();
  if (!packages.ok())
    output.note("warning: " + packages.message() +
                (can_measure ? "; the dry run measures the rows with transformers alone"
                             : "; the dry run renders without the Python checks"));
  if (can_measure) {
    versions = *probed;
    if (o.training.report_to == "wandb") output.note(WandbNote());
    // What the GPUs here can do decides precision, except for Slurm, whose nodes are elsewhere.
    if (o.launcher != Launcher::kSlurm && versions.value("bf16", json()).is_boolean())
      o.bf16 = versions["bf16"].get<bool>();
    if (stats.plain_text) {
      output.note("plain-text prompt/completion records: trained without a chat template");
    } else {
      const bool assistant_only =
          o.backend == Backend::kTrl && plan.trainer_config.value("assistant_only_loss", false);
      // A hub model's tokenizer is fetched: on a machine without network that takes a while, then fails.
      const bool from_hub = !std::filesystem::is_directory(o.model);
      if (from_hub)
        output.note("checking the chat template: loading " + o.model +
                    "'s tokenizer from the Hugging Face Hub (or its cache)...");
      StatusOr<json> checked = CheckChatTemplate(o, assistant_only);
      if (!checked.ok() && from_hub)
        checked = Status::Unavailable(checked.status().message() +
                                      " (no network here? HF_HUB_OFFLINE=1 uses the models already in the "
                                      "Hugging Face cache, or pass --model a local model folder)");
      if (!checked.ok() && !request.dry_run) return checked.status();
      if (checked.ok()) {
        rendered = *checked;
        output.note(TemplateNote(rendered, o));
        KFORGE_RETURN_IF_ERROR(ApplyMeasuredLength(rendered, o, output));
      } else {
        output.note("warning: the chat template check failed (" + checked.status().message() + ")");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<int> RunFinetune(RunRequest request, const RunOutput& output) {
  LaunchOptions& o = request.launch;
  KFORGE_RETURN_IF_ERROR(CheckRunRequest(request));
  KFORGE_RETURN_IF_ERROR(CheckOut(o, request.force));
  KFORGE_ASSIGN_OR_RETURN(o.model, ResolveModel(o.model));
  if (o.trainer == Trainer::kGrpo) return RunGrpo(request, o, output);
  if (o.training.max_seq_len > 0) o.training.max_seq_len_basis = "--max-seq-len";
  // A template named in --config (chat_template_path) is the one the check must render with.
  if (o.chat_template.empty() && o.overrides.value("chat_template_path", json()).is_string())
    o.chat_template = o.overrides["chat_template_path"].get<std::string>();
  if (!o.chat_template.empty() && o.chat_template_text.empty() && o.backend == Backend::kAxolotl) {
    KFORGE_ASSIGN_OR_RETURN(o.chat_template_text, common::ReadFile(o.chat_template));
  }
  KFORGE_RETURN_IF_ERROR(ConvertData(o, output));
  DatasetCheckOptions check;
  check.cut_at = o.training.max_seq_len;
  KFORGE_ASSIGN_OR_RETURN(DatasetStats stats, CheckDataset(o.data, check));
  output.note(Describe(stats, o.data));
  output.note(Histogram(stats));
  if (!o.eval_data.empty()) {
    KFORGE_ASSIGN_OR_RETURN(DatasetStats eval, CheckDataset(o.eval_data, check));
    if (eval.format != stats.format || eval.plain_text != stats.plain_text)
      return Status::InvalidArgument("--eval-data " + o.eval_data.string() + ": its records are " +
                                     DatasetFormatName(eval.format) + ", the training data's " +
                                     DatasetFormatName(stats.format));
    output.note("eval " + Describe(eval, o.eval_data));
  }
  if (o.launcher == Launcher::kSlurm && o.slurm.cpus_per_task == 0) FitCpusToNodes(o, output);
  KFORGE_ASSIGN_OR_RETURN(LaunchPlan plan, PlanLaunch(o, stats));

  json versions = json::object(), rendered;
  KFORGE_RETURN_IF_ERROR(RunPythonChecks(request, o, stats, plan, output, versions, rendered));
  if (o.training.max_seq_len_basis != "measured") output.note(EstimateNote(stats, o.training));
  KFORGE_ASSIGN_OR_RETURN(plan, PlanLaunch(o, stats));
  KFORGE_ASSIGN_OR_RETURN(const std::optional<int> ended, WriteLaunch(request, o, plan, output));
  if (ended) return *ended;

  json manifest = NewManifest(o, stats, plan, versions);
  manifest["chat_template_check"] = rendered;
  if (o.resume) manifest["segments"] = EarlierSegments(o.out);
  KFORGE_RETURN_IF_ERROR(WriteManifest(o.out, manifest));
  output.note("running: " + ShellJoin(plan.argv));
  KFORGE_ASSIGN_OR_RETURN(ProcessResult result, RunLogged(plan.argv, o.out / "train.log", plan.environment));
  if (o.launcher == Launcher::kSlurm) return RecordSubmission(o, result, output);
  FinishManifest(manifest, result);
  if (!request.push_to_hub.empty() && result.exit_code == 0) {
    StatusOr<json> pushed =
        PushToHub({o.python, request.hub_script, request.push_to_hub, "model", o.out / "model"});
    manifest["pushed"] =
        pushed.ok() ? *pushed : json{{"repo", request.push_to_hub}, {"error", pushed.status().message()}};
    output.note(pushed.ok()
                    ? "pushed " + o.out.string() + "/model to " + pushed->value("url", std::string()) +
                          " (commit " + pushed->value("commit", std::string()) + ")"
                    : "warning: " + pushed.status().message() + " (the run is complete)");
  }
  KFORGE_RETURN_IF_ERROR(WriteManifest(o.out, manifest));
  output.note(std::string(BackendName(o.backend)) + " " +
              (result.signal ? "killed by signal " + std::to_string(result.signal)
                             : "exited with status " + std::to_string(result.exit_code)) +
              "; manifest " + (o.out / kManifestFile).string());
  return result.exit_code;
}

}  // namespace kforge::finetune
