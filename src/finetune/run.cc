// RunFinetune: the steps of a launch, each refusing bad input before anything starts.
#include "kforge/finetune/run.h"

#include <regex>
#include <sstream>

#include "kforge/common/files.h"
#include "kforge/finetune/manifest.h"
#include "kforge/finetune/process.h"

namespace kforge::finetune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Status CheckOut(const fs::path& out, bool force) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    return Status::InvalidArgument("--out " + out.string() + ": not a folder");
  if (fs::exists(out / kManifestFile, ec) && !force)
    return Status::InvalidArgument(
        "--out " + out.string() +
        " holds a previous run (manifest.json); pass --force to replace it, or choose "
        "another folder");
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

std::string CutNote(const DatasetStats& s, const TrainingSettings& t) {
  return "max_seq_len " + std::to_string(MaxSeqLen(t, s)) + (t.max_seq_len > 0 ? "" : " (from the data)") +
         ": the longest record is about " + std::to_string(ApproxTokens(s.max_chars)) + " tokens; " +
         std::to_string(RecordsCut(t, s)) + " of " + std::to_string(s.records) +
         " records are longer and will be cut";
}

/// What the template check found; a warning when a rendered record is longer than max_seq_len
/// (the character estimate was low for this tokenizer).
std::string TemplateNote(const json& rendered, const LaunchOptions& o, int64_t cap) {
  const int64_t longest = rendered.value("longest_tokens", int64_t{0});
  std::string note = "chat template of " + o.model + ": rendered " +
                     std::to_string(rendered.value("rendered", 0)) + " records with " +
                     std::to_string(rendered.value("tool_calls", 0)) + " tool calls; the longest is " +
                     std::to_string(longest) + " tokens";
  if (longest > cap)
    note += "; warning: more than max_seq_len " + std::to_string(cap) + " (line " +
            std::to_string(rendered.value("longest_line", 0)) + " will be cut)";
  return note;
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

StatusOr<int> RunFinetune(RunRequest request, const RunOutput& output) {
  LaunchOptions& o = request.launch;
  KFORGE_RETURN_IF_ERROR(CheckOut(o.out, request.force));
  KFORGE_ASSIGN_OR_RETURN(o.model, ResolveModel(o.model));
  DatasetCheckOptions check;
  check.cut_at = o.training.max_seq_len;
  KFORGE_ASSIGN_OR_RETURN(DatasetStats stats, CheckDataset(o.data, check));
  output.note(Describe(stats, o.data));
  output.note(Histogram(stats));
  output.note(CutNote(stats, o.training));
  KFORGE_ASSIGN_OR_RETURN(LaunchPlan plan, PlanLaunch(o, stats));

  json versions = json::object(), rendered;
  if (!request.dry_run) {
    KFORGE_ASSIGN_OR_RETURN(versions, ProbeVersions(o));
    // What the GPUs here can do decides precision, except for Slurm, whose nodes are elsewhere.
    if (o.launcher != Launcher::kSlurm && versions.value("bf16", json()).is_boolean()) {
      o.bf16 = versions["bf16"].get<bool>();
      KFORGE_ASSIGN_OR_RETURN(plan, PlanLaunch(o, stats));
    }
    if (stats.plain_text) {
      output.note("plain-text prompt/completion records: trained without a chat template");
    } else {
      const bool assistant_only =
          o.backend == Backend::kTrl && plan.trainer_config.value("assistant_only_loss", false);
      KFORGE_ASSIGN_OR_RETURN(rendered, CheckChatTemplate(o, assistant_only));
      output.note(TemplateNote(rendered, o, MaxSeqLen(o.training, stats)));
    }
  }
  KFORGE_RETURN_IF_ERROR(WriteFiles(plan, o.out));
  for (const auto& [path, contents] : plan.files) output.note("wrote " + path.string());
  if (request.dry_run) {
    if (!plan.sbatch.empty()) output.print(plan.sbatch);
    output.print(ShellJoin(plan.argv) + "\n");
    return 0;
  }
  if (o.launcher == Launcher::kSlurm && !OnPath("sbatch"))
    return Status::Unavailable("sbatch is not on PATH: submit " + (o.out / "launch.sbatch").string() +
                               " where Slurm runs, or use --dry-run to print it");

  json manifest = NewManifest(o, stats, plan, versions);
  manifest["chat_template_check"] = rendered;
  KFORGE_RETURN_IF_ERROR(WriteManifest(o.out, manifest));
  output.note("running: " + ShellJoin(plan.argv));
  KFORGE_ASSIGN_OR_RETURN(ProcessResult result, RunLogged(plan.argv, o.out / "train.log", plan.environment));
  FinishManifest(manifest, result);
  KFORGE_RETURN_IF_ERROR(WriteManifest(o.out, manifest));
  output.note(std::string(BackendName(o.backend)) + " " +
              (result.signal ? "killed by signal " + std::to_string(result.signal)
                             : "exited with status " + std::to_string(result.exit_code)) +
              "; manifest " + (o.out / kManifestFile).string());
  return result.exit_code;
}

}  // namespace kforge::finetune
