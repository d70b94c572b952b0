// The generate run as a list of steps: select and shard the tasks, make the teacher, start the judge,
// open the run folder, plan the episodes, run them, summarise. The system prompt and the run's
// configuration (its hash is the run id) are made here too.
#include "kforge/generate/generate.h"

#include <sys/resource.h>

#include <cstdio>
#include <memory>

#include <spdlog/spdlog.h>

#include "generate/episode.h"
#include "generate/episode_batch.h"
#include "generate/prompts.h"
#include "generate/run_dir.h"
#include "generate/skill_context.h"
#include "generate/task_selection.h"
#include "generate/teacher_setup.h"
#include "kforge/common/files.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/library_ops.h"
#include "kforge/cuda/versions.h"
#include "kforge/llm/prices.h"

namespace kforge::generate {
namespace {

/// The prompt part that explains `protocol` to the teacher.
const std::string& ProtocolPrompt(const PromptSet& prompts, dataset::Protocol protocol) {
  switch (protocol) {
    case dataset::Protocol::kText:
      return prompts.protocol_text;
    case dataset::Protocol::kTools:
      return prompts.protocol_tools;
  }
  return prompts.protocol_text;  // not reached: the switch names every protocol
}

std::vector<std::string> ViewNames(const std::vector<View>& views) {
  std::vector<std::string> names;
  for (View view : views) names.emplace_back(ViewName(view));
  return names;
}

/// What decides the records of a run: its hash is the run id. Selection (filter, shard, samples),
/// pacing and budgets are left out, so that a rerun with more samples or another shard extends it.
nlohmann::json RunConfig(const GenerateOptions& o, const PromptSet& prompts, bool compile_only) {
  nlohmann::json config = {{"tasks", std::filesystem::absolute(o.tasks_root).lexically_normal().string()},
                           {"teacher", o.teacher->Text()},
                           {"model", o.model},
                           {"base_url", llm::UrlWithoutCredentials(o.provider.base_url)},
                           {"protocol", dataset::ProtocolName(o.protocol)},
                           {"views", ViewNames(o.views)},
                           {"max_turns", o.max_turns},
                           {"temperature", o.temperature ? nlohmann::json(*o.temperature) : nlohmann::json()},
                           {"max_tokens", o.max_tokens},
                           {"thinking_budget_tokens", o.thinking_budget_tokens},
                           {"reasoning_effort", o.reasoning_effort},
                           {"target_speedup", o.target_speedup},
                           {"compile_only", compile_only},
                           {"arch", o.bench.verify.arch},
                           {"trials", o.bench.verify.trials},
                           {"seed", o.seed},
                           {"prompts", prompts.hash}};
  // Settings added later are part of the id only when set, so runs made before them resume.
  if (o.adaptive_thinking) config["adaptive_thinking"] = true;
  if (!o.effort.empty()) config["effort"] = o.effort;
  // A candidate's verdict depends on the judge's timeouts: set ones are part of the id, so that a rerun
  // with others is refused rather than mixing verdicts judged two ways.
  if (o.bench.verify.kernel_timeout != verify::kDefaultKernelTimeout)
    config["kernel_timeout_ms"] = o.bench.verify.kernel_timeout.count();
  if (o.bench.verify.compile_timeout != verify::VerifyOptions().compile_timeout)
    config["compile_timeout_ms"] = o.bench.verify.compile_timeout.count();
  if (!o.thinking_display.empty()) config["thinking_display"] = o.thinking_display;
  // Only a policy other than the default is part of the id, so runs made before it existed resume.
  if (o.bench.verify.op_policy != common::OpPolicy::kLibrary)
    config["allow_ops"] = common::kOpPolicyNames.Name(o.bench.verify.op_policy);
  // The skills' contents decide what the teacher reads: a changed byte is another run.
  for (const ContextSkill& skill : o.skills) config["skills"].push_back(nlohmann::json{{"name", skill.name}, {"hash", skill.hash}});
  return config;
}

std::string Number(double v, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

/// The GPU, for the system prompt: what a kernel engineer looks up first.
std::string DescribeDevice(const std::optional<verify::HelloReply>& hello, bool compile_only) {
  if (compile_only || !hello || !hello->device)
    return "No GPU in this run: solutions are compiled and their plans checked, not run. Write for an "
           "NVIDIA H100/H200 class GPU (sm_90).";
  const common::DeviceRecord& d = *hello->device;
  // A figure the worker did not send is "?".
  auto figure = [&d](const char* key, double value, const char* format) {
    return d.Has(key) ? Number(value, format) : std::string("?");
  };
  std::string text = (d.Has("name") ? d.name : "GPU") + " (compute capability " + (d.Has("cc") ? d.cc : "?") +
                     "): " + figure("sm_count", d.sm_count, "%.0f") + " SMs, " +
                     figure("memory_bytes", static_cast<double>(d.memory_bytes) / (1 << 30), "%.0f") +
                     " GiB memory, " + figure("l2_bytes", static_cast<double>(d.l2_bytes) / (1 << 20), "%.0f") +
                     " MiB of L2.";
  if (const std::optional<common::DevicePeak>& peak = hello->peak) {
    auto peak_figure = [](double value, const char* format) {
      return value > 0 ? Number(value, format) : std::string("?");
    };
    text += " Measured DRAM bandwidth " + peak_figure(peak->dram_gbps, "%.0f") + " GB/s; peak FP32 " +
            peak_figure(peak->fp32_tflops, "%.1f") + " TFLOP/s, FP16/BF16 tensor cores " +
            peak_figure(peak->fp16_tflops, "%.0f") + " TFLOP/s (dense).";
  }
  return text;
}

/// The verifier and timer of a run's candidates, and what its worker said of the device. Without a
/// GPU the run is compile-only, and says so.
struct StartedJudge {
  std::unique_ptr<bench::ServiceJudge> judge;
  std::optional<verify::HelloReply> hello;
  bool compile_only = false;
};

StartedJudge StartJudge(const GenerateOptions& options) {
  StartedJudge started;
  started.compile_only = options.compile_only;
  bench::BenchOptions bench_options = options.bench;
  bench_options.verify.seed = options.seed;
  bench_options.verify.tasks_root = options.tasks_root;
  bench_options.verify.peak_at_start = true;  // the device's peaks go in the system prompt
  if (!started.compile_only) {
    started.judge = std::make_unique<bench::ServiceJudge>(bench_options, bench::ServiceJudge::Mode::kTimed);
    started.hello = started.judge->Hello();
    const std::optional<verify::HelloReply>& hello = started.hello;
    if (!hello || hello->status != common::VerdictStatus::kOk) {
      spdlog::warn("generate: no GPU ({}): compile-only feedback",
                   hello && !hello->message.empty() ? hello->message : std::string("worker did not start"));
      started.judge.reset();
      started.compile_only = true;
    }
  }
  if (started.compile_only)
    started.judge = std::make_unique<bench::ServiceJudge>(bench_options, bench::ServiceJudge::Mode::kCompileOnly);
  return started;
}

/// --dry-run: the first request's wire body on stdout, nothing sent.
StatusOr<GenerateSummary> PrintFirstRequest(const GenerateOptions& options, const PromptSet& prompts,
                                            const Teacher& teacher, const TaskSelection& tasks) {
  std::fputs(teacher.startup_line.c_str(), stderr);
  KFORGE_ASSIGN_OR_RETURN(std::string system_prompt,
                          RenderSystemPrompt(prompts, options.protocol, std::nullopt, true,
                                             options.bench.verify.arch, options.bench.verify.op_policy));
  system_prompt += SkillSection(options.skills, options.protocol == dataset::Protocol::kTools);
  const common::Task& first = *tasks.shard.front();
  KFORGE_ASSIGN_OR_RETURN(llm::ChatRequest request,
                          OpeningRequest(options, prompts, system_prompt, teacher.tools,
                                         {&first, options.views.front(), 0, tasks.references.at(first.id), "", {}}));
  std::optional<nlohmann::json> body = teacher.provider->WireBody(request);
  nlohmann::json shown = body ? *body : llm::ToJson(request);
  std::printf("%s\n", teacher.provider->Redact(common::JsonText(shown, 2)).c_str());
  GenerateSummary dry;
  dry.dry_run = true;
  return dry;
}

/// What the model probe was billed (HTTP teachers, not with the batch API, unless --no-probe).
struct ProbeCost {
  llm::Usage usage;
  double usd = 0;
};

/// Opens the run folder under `lock` for this run's configuration, keeps the probe's cost there, and
/// says what a rerun moved or kept.
StatusOr<std::unique_ptr<RunDir>> OpenRunFolder(const GenerateOptions& options, const PromptSet& prompts,
                                                 const StartedJudge& judge, const ProbeCost& probe,
                                                 common::FolderLock lock) {
  const std::optional<verify::HelloReply>& hello = judge.hello;
  nlohmann::json about = {
      {"kforge", KFORGE_VERSION},
      {"nvrtc", cuda::NvrtcVersion()},
      {"device", common::DeviceRecordToJson(hello ? hello->device : std::nullopt)},
      {"peak", hello && hello->peak ? hello->peak->ToJson() : nlohmann::json()},
      {"filter", options.filter},
      {"samples", options.samples},
      {"shard", std::to_string(options.shard_index) + "/" + std::to_string(options.shard_count)}};
  KFORGE_ASSIGN_OR_RETURN(
      auto run, RunDir::Open(options.out, std::move(lock), RunConfig(options, prompts, judge.compile_only), about,
                             options.force, options.retry_errors));
  if (probe.usd > 0) {  // paid: kept for the run folder's spend, like an episode that is not final
    nlohmann::json usage = llm::ToJson(probe.usage);
    usage["cost_usd"] = probe.usd;
    usage["requests"] = 1;
    KFORGE_RETURN_IF_ERROR(run->AppendUnfinished({{"id", run->run_id() + "/probe"}, {"probe", true}, {"usage", usage}}));
    run->Log("model probe: $" + Number(probe.usd, "%.6f"));
  }
  if (run->moved_errors() > 0)
    std::fprintf(stderr, "generate: --retry-errors: %d episode%s that ended in llm_error run again\n",
                 run->moved_errors(), run->moved_errors() == 1 ? "" : "s");
  if (run->kept_errors() > 0)
    std::fprintf(stderr,
                 "generate: %d episode%s written earlier ended in llm_error and stay%s final (not counted below); "
                 "--retry-errors runs them again\n",
                 run->kept_errors(), run->kept_errors() == 1 ? "" : "s", run->kept_errors() == 1 ? "s" : "");
  if (run->trajectories().torn_lines() > 0)
    spdlog::warn("generate: dropped a torn last line in {} (an episode cut short; it runs again)",
                 (options.out / "trajectories.jsonl").string());
  return run;
}

/// The teacher's client, its budget counting what the run folder spent before and the probe.
StatusOr<std::unique_ptr<llm::Client>> ConnectTeacher(const GenerateOptions& options, Teacher& teacher,
                                                      double spent_usd) {
  llm::ClientOptions client_options = options.client;
  client_options.max_cost_usd = options.max_cost_usd;
  client_options.spent_before_usd = spent_usd;
  return llm::Client::Create(std::move(teacher.provider), client_options);
}

/// The torch.compile baseline of each task, measured one after another before any episode uses the GPU;
/// a task whose baseline cannot be measured is logged and left without one.
std::map<std::string, common::TorchCompileBaseline> MeasureTorchCompileBaselines(
    const bench::TorchCompileOptions& options, const std::vector<const common::Task*>& tasks, RunDir& run) {
  bench::TorchCompileBaselines measure(options);
  std::map<std::string, common::TorchCompileBaseline> out;
  double took = 0;
  for (const common::Task* task : tasks) {
    StatusOr<common::TorchCompileBaseline> baseline = measure.For(task->dir);
    if (!baseline.ok()) {
      run.Log("torch.compile baseline of " + task->id + ": none: " + baseline.status().message());
      std::fprintf(stderr, "generate: %s: no torch.compile baseline: %s\n", task->id.c_str(),
                   baseline.status().message().c_str());
      continue;
    }
    took += baseline->took_seconds;
    out.emplace(task->id, *baseline);
  }
  run.Log("torch.compile baselines: " + std::to_string(out.size()) + " of " + std::to_string(tasks.size()) +
          " tasks in " + Number(took, "%.1f") + " s");
  std::fprintf(stderr, "generate: torch.compile baselines of %zu of %zu tasks took %.1f s\n", out.size(),
               tasks.size(), took);
  return out;
}

/// This process's CPU time (every thread; the compiler and GPU worker processes are children, not
/// counted): what the loop itself costs per turn. Then the run log's last line.
void Summarise(RunDir& run, const llm::Client& client, GenerateSummary& summary) {
  if (summary.fatal.ok() && !client.fatal_status().ok()) summary.fatal = client.fatal_status();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  summary.cpu_s = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
                  1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  run.Log("end: " + std::to_string(summary.finished) + " written, " + std::to_string(summary.correct) +
          " correct, " + std::to_string(summary.turns) + " turns, generate CPU " +
          Number(summary.turns ? 1000 * summary.cpu_s / summary.turns : 0, "%.2f") + " ms per turn" +
          (summary.fatal.ok() ? "" : ", stopped: " + summary.fatal.message()));
}

}  // namespace

StatusOr<std::string> RenderSystemPrompt(const PromptSet& prompts, dataset::Protocol protocol,
                                         const std::optional<verify::HelloReply>& hello, bool compile_only,
                                         const std::string& arch, common::OpPolicy op_policy) {
  return Render(prompts.system,
                {{"device", DescribeDevice(hello, compile_only)},
                 {"arch", arch},
                 {"library_ops", prompts.LibraryOps(op_policy)},
                 {"protocol", ProtocolPrompt(prompts, protocol)}},
                "system.md");
}

StatusOr<GenerateSummary> RunGenerate(const GenerateOptions& options) {
  KFORGE_RETURN_IF_ERROR(CheckGenerateOptions(options));
  KFORGE_ASSIGN_OR_RETURN(PromptSet prompts, PromptSet::Load(options.prompts_dir));
  KFORGE_ASSIGN_OR_RETURN(std::vector<common::Task> all_tasks, common::LoadTaskTree(options.tasks_root));
  KFORGE_ASSIGN_OR_RETURN(TaskSelection tasks, SelectTasks(options, all_tasks));
  if (tasks.shard.empty()) return GenerateSummary{};
  KFORGE_ASSIGN_OR_RETURN(Teacher teacher, MakeTeacher(options));
  if (options.dry_run) return PrintFirstRequest(options, prompts, teacher, tasks);

  // One writer per run folder, taken before anything is sent, the judge starts or anything is read
  // from the folder: a second generate there costs nothing and says one line.
  KFORGE_ASSIGN_OR_RETURN(common::FolderLock lock, RunDir::Lock(options.out));
  std::fputs(teacher.startup_line.c_str(), stderr);
  ProbeCost probe;
  if (options.probe && teacher.http && !options.provider.batch_api)
    KFORGE_RETURN_IF_ERROR(ProbeModel(*teacher.provider, options, probe.usage, probe.usd));
  StartedJudge judge = StartJudge(options);
  KFORGE_ASSIGN_OR_RETURN(std::unique_ptr<RunDir> run, OpenRunFolder(options, prompts, judge, probe, std::move(lock)));
  GenerateSummary summary;
  summary.compile_only = judge.compile_only;
  summary.spent_before_usd = run->spent_usd();
  summary.cost_usd = probe.usd;
  KFORGE_ASSIGN_OR_RETURN(std::unique_ptr<llm::Client> client,
                          ConnectTeacher(options, teacher, run->spent_usd() + probe.usd));

  const std::vector<PlannedEpisode> planned = PlanEpisodes(options, tasks.shard, *run, summary.skipped);
  summary.episodes = static_cast<int>(planned.size());
  KFORGE_ASSIGN_OR_RETURN(std::string system_prompt,
                          RenderSystemPrompt(prompts, options.protocol, judge.hello, judge.compile_only,
                                             options.bench.verify.arch, options.bench.verify.op_policy));
  system_prompt += SkillSection(options.skills, options.protocol == dataset::Protocol::kTools);
  const std::map<std::string, common::TorchCompileBaseline> baselines =
      options.torch_compile && !judge.compile_only
          ? MeasureTorchCompileBaselines(*options.torch_compile, tasks.shard, *run)
          : std::map<std::string, common::TorchCompileBaseline>();
  const EpisodeContext context{options,
                               prompts,
                               *client,
                               *judge.judge,
                               system_prompt,
                               teacher.tools,
                               judge.compile_only,
                               judge.hello ? judge.hello->device : std::nullopt,
                               run->run_id(),
                               nullptr,
                               teacher.sent_params,
                               options.torch_compile ? &baselines : nullptr};
  std::fprintf(stderr, "generate: run %s, %d episode%s to run (%d already done), %zu task%s, %s%s\n",
               run->run_id().c_str(), summary.episodes, summary.episodes == 1 ? "" : "s", summary.skipped,
               tasks.shard.size(), tasks.shard.size() == 1 ? "" : "s",
               std::string(dataset::ProtocolName(options.protocol)).c_str(),
               judge.compile_only ? ", compile-only" : "");
  run->Log("start run " + run->run_id() + ": " + std::to_string(summary.episodes) + " episodes");

  // Samples of a task warm the provider's prompt cache once: the first goes alone, the others wait
  // for its first reply (at most --cache-warmup seconds) while other tasks' episodes start.
  const bool warm_cache = teacher.http && !options.provider.batch_api && options.cache_warmup_s > 0;
  RunEpisodes(context, planned, tasks.references, warm_cache, *run, summary);
  Summarise(*run, *client, summary);
  return summary;
}

}  // namespace kforge::generate
