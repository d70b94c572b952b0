// The generate batch: tasks x samples episodes, run `concurrency` at a time, each written to the run
// folder as it finishes; a rerun skips what is there.
#include "kforge/generate/generate.h"

#include <fnmatch.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>

#include <spdlog/spdlog.h>

#include <map>

#include "generate/episode.h"
#include "generate/episode_queue.h"
#include "generate/prompts.h"
#include "generate/reply.h"
#include "generate/run_dir.h"
#include "generate/skill_context.h"
#include "generate/task_view.h"
#include "generate/teacher_setup.h"
#include "kforge/common/files.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/library_ops.h"
#include "kforge/common/thread_pool.h"
#include "kforge/cuda/versions.h"
#include "kforge/llm/prices.h"

namespace kforge::generate {
namespace {

using Clock = std::chrono::steady_clock;

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

Status CheckOptions(const GenerateOptions& o) {
  if (!o.teacher)
    return Status::InvalidArgument("--teacher is required (anthropic, openai, replay:FILE, exec:CMD)");
  if (o.out.empty()) return Status::InvalidArgument("--out is required");
  if (o.views.empty()) return Status::InvalidArgument("--views: name at least one view");
  for (size_t i = 0; i < o.views.size(); ++i) {
    if (std::find(o.views.begin(), o.views.begin() + static_cast<std::ptrdiff_t>(i), o.views[i]) !=
        o.views.begin() + static_cast<std::ptrdiff_t>(i))
      return Status::InvalidArgument("--views: " + std::string(ViewName(o.views[i])) + " is named twice");
  }
  if (o.samples < 1) return Status::InvalidArgument("--samples must be at least 1");
  if (o.concurrency < 1) return Status::InvalidArgument("--concurrency must be at least 1");
  if (!(o.cache_warmup_s >= 0)) return Status::InvalidArgument("--cache-warmup must be >= 0 seconds");
  if (o.max_turns < 1) return Status::InvalidArgument("--max-turns must be at least 1");
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count)
    return Status::InvalidArgument("--shard i/n needs 0 <= i < n");
  if (o.max_cost_usd && !(*o.max_cost_usd >= 0)) return Status::InvalidArgument("--max-cost must be >= 0");
  for (size_t i = 0; i < o.skills.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (o.skills[i].name == o.skills[j].name)
        return Status::InvalidArgument("--skill: two skills are named " + o.skills[i].name);
  // --record appends: never to what the run reads (a replayed cassette) nor inside the run folder it
  // keeps, compared by name (a file not created yet counts) and by device and inode.
  if (!o.client.record_path.empty()) {
    if (common::IsInside(o.client.record_path, o.out))
      return Status::InvalidArgument("--record " + o.client.record_path + " is inside the run folder " +
                                     o.out.string() + ", which this run keeps; record to a file outside it");
    if (o.teacher->kind == llm::ProviderKind::kReplay && common::SameFile(o.client.record_path, o.teacher->argument))
      return Status::InvalidArgument("--record " + o.client.record_path + " is " + o.teacher->argument +
                                     ", which this run reads; record to another file");
  }
  return CheckTeacherOptions(o);
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
                           {"arch", o.judge.verify.arch},
                           {"trials", o.judge.verify.trials},
                           {"seed", o.seed},
                           {"prompts", prompts.hash}};
  // Settings added later are part of the id only when set, so runs made before them resume.
  if (o.adaptive_thinking) config["adaptive_thinking"] = true;
  if (!o.effort.empty()) config["effort"] = o.effort;
  // A candidate's verdict depends on the judge's timeouts: set ones are part of the id, so that a rerun
  // with others is refused rather than mixing verdicts judged two ways.
  if (o.judge.verify.kernel_timeout != verify::kDefaultKernelTimeout)
    config["kernel_timeout_ms"] = o.judge.verify.kernel_timeout.count();
  if (o.judge.verify.compile_timeout != verify::VerifyOptions().compile_timeout)
    config["compile_timeout_ms"] = o.judge.verify.compile_timeout.count();
  if (!o.thinking_display.empty()) config["thinking_display"] = o.thinking_display;
  // Only a policy other than the default is part of the id, so runs made before it existed resume.
  if (o.judge.verify.op_policy != common::OpPolicy::kLibrary)
    config["allow_ops"] = common::kOpPolicyNames.Name(o.judge.verify.op_policy);
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

/// Whether `id` matches one of the comma-separated globs of `filter` (all ids when it is empty).
bool MatchesFilter(const std::string& filter, const std::string& id) {
  if (filter.empty()) return true;
  size_t start = 0;
  while (start <= filter.size()) {
    size_t comma = std::min(filter.find(',', start), filter.size());
    std::string glob = filter.substr(start, comma - start);
    if (!glob.empty() && fnmatch(glob.c_str(), id.c_str(), 0) == 0) return true;
    start = comma + 1;
  }
  return false;
}

/// The most of a task's reference program the teacher is sent; a longer one is cut with a note.
constexpr size_t kMaxReferenceBytes = size_t{256} << 10;

/// Masks the teacher's secrets in every string (and key) of a record: a key the teacher echoes
/// reaches neither the run folder nor anything exported from it.
void RedactStrings(nlohmann::json& value, const llm::Client& client) {
  if (value.is_string()) {
    std::string& text = value.get_ref<std::string&>();
    text = client.Redact(std::move(text));
  } else if (value.is_array()) {
    for (nlohmann::json& item : value) RedactStrings(item, client);
  } else if (value.is_object()) {
    nlohmann::json masked = nlohmann::json::object();
    for (auto& [key, item] : value.items()) {
      RedactStrings(item, client);
      masked[client.Redact(key)] = std::move(item);
    }
    value = std::move(masked);
  }
}

struct Planned {
  const common::Task* task;
  View view;
  int sample;
  std::string id;
};

/// Progress on stderr: one line per finished episode (a rewritten line on a terminal).
class Progress {
 public:
  Progress(int total, Clock::time_point start) : total_(total), start_(start), tty_(isatty(2)) {}
  void Finished(const dataset::Trajectory& t, const GenerateSummary& s) {
    double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    int done = s.finished;
    double eta = done > 0 ? elapsed / done * (total_ - done) : 0;
    char line[512];
    std::string what = t.correct() ? "correct" : std::string(dataset::StopReasonName(t.stop));
    if (t.speedup()) what += " " + Number(*t.speedup(), "%.2f") + "x";
    std::snprintf(
        line, sizeof(line),
        "[%d/%d] %s#%d: %s in %d turn%s | correct %d, faster %d, tokens %lld, $%.2f, ETA %.0fs", done, total_,
        t.task.id.c_str(), t.sample, what.c_str(), t.turns(), t.turns() == 1 ? "" : "s", s.correct, s.faster,
        static_cast<long long>(tokens_ += t.usage.input_tokens + t.usage.output_tokens), s.cost_usd, eta);
    std::fprintf(stderr, tty_ ? "\r\033[K%s" : "%s\n", line);
    if (tty_ && done == total_) std::fputc('\n', stderr);
  }

 private:
  int total_;
  Clock::time_point start_;
  bool tty_;
  int64_t tokens_ = 0;
};

}  // namespace

StatusOr<std::string> ReadTaskReference(const common::Task& task, size_t& total_bytes) {
  // What is sent to the teacher is the task's own file, never one a link points to: neither the
  // file nor a folder on its way from the task's folder may be a link.
  std::error_code ec;
  std::filesystem::path step = task.dir;
  for (const std::filesystem::path& part : task.reference.lexically_relative(task.dir)) {
    step /= part;
    if (std::filesystem::is_symlink(step, ec))
      return Status::InvalidArgument(step.string() +
                                     ": a symbolic link; a task's reference must be a file of its folder");
  }
  KFORGE_ASSIGN_OR_RETURN(std::string text, common::ReadFile(task.reference));
  total_bytes = text.size();
  if (total_bytes > kMaxReferenceBytes) {
    const size_t total = text.size();
    const size_t line_end = text.rfind('\n', kMaxReferenceBytes);
    text.resize(line_end == std::string::npos ? kMaxReferenceBytes : line_end + 1);
    text += "# ... the reference is cut here: " + std::to_string(text.size()) + " of its " +
            std::to_string(total) + " bytes are shown\n";
  }
  return text;
}

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
  KFORGE_RETURN_IF_ERROR(CheckOptions(options));
  KFORGE_ASSIGN_OR_RETURN(PromptSet prompts, PromptSet::Load(options.prompts_dir));
  KFORGE_ASSIGN_OR_RETURN(std::vector<common::Task> all_tasks, common::LoadTaskTree(options.tasks_root));
  std::vector<const common::Task*> tasks;
  std::map<std::string, int> unjudgeable;  // by reason, tasks left out
  for (size_t i = 0; i < all_tasks.size(); ++i) {
    const common::Task& task = all_tasks[i];
    if (!MatchesFilter(options.filter, task.id)) continue;
    if (task.Unjudgeable() && !options.include_unjudgeable) {
      ++unjudgeable[std::string(task.UnjudgeableReason())];
      continue;
    }
    tasks.push_back(&task);
  }
  if (!unjudgeable.empty()) {
    std::string counts;
    int total = 0;
    for (const auto& [reason, n] : unjudgeable) {
      counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + reason;
      total += n;
    }
    spdlog::warn("generate: left out {} task{} that no kernel can be judged on ({}); --include-degenerate runs them",
                 total, total == 1 ? "" : "s", counts);
  }
  std::vector<const common::Task*> shard;
  for (size_t i = 0; i < tasks.size(); ++i)
    if (static_cast<int>(i % options.shard_count) == options.shard_index) shard.push_back(tasks[i]);
  if (tasks.empty())
    return Status::InvalidArgument("no task under " + options.tasks_root.string() +
                                   (options.filter.empty() ? "" : " matches --filter " + options.filter));
  if (shard.empty()) {  // more shards than tasks (a job array sized for a larger set): nothing to do
    spdlog::warn("generate: shard {}/{} holds none of the {} tasks; nothing to do", options.shard_index,
                 options.shard_count, tasks.size());
    return GenerateSummary{};
  }
  std::map<std::string, std::string> references;
  for (const common::Task* task : shard) {
    size_t total = 0;
    auto text = ReadTaskReference(*task, total);
    if (!text.ok()) return text.status();
    if (total > kMaxReferenceBytes)
      spdlog::warn("generate: {}: its reference is {} bytes; the teacher sees the first {} KiB", task->id,
                   total, kMaxReferenceBytes >> 10);
    references[task->id] = std::move(*text);
  }

  auto provider = llm::MakeProvider(*options.teacher, options.provider);
  if (!provider.ok()) return provider.status().WithContext("--teacher");
  if (options.model.empty() && llm::SendsJsonBody(options.teacher->kind))
    return Status::InvalidArgument("--model is required with --teacher " + (*provider)->Name());
  if (options.max_cost_usd && !options.allow_unpriced &&
      !options.client.prices.Find((*provider)->Name(), options.model))
    return Status::InvalidArgument("--max-cost: no price for model \"" + options.model +
                                   "\" in the price table (--prices); add it, or pass --allow-unpriced to count it as 0");
  std::vector<llm::ToolSpec> tools =
      options.protocol == dataset::Protocol::kTools ? SolutionTools() : std::vector<llm::ToolSpec>{};
  const bool tools_protocol = !tools.empty();
  if (tools_protocol && !options.skills.empty()) tools.push_back(ReadSkillFileTool(options.skills));
  std::vector<std::string> dropped;
  nlohmann::json sent_params;
  bool http_teacher = false;  // a provider that sends JSON bodies
  std::string startup_line;   // what will be sent, said once the run may start
  {
    std::optional<nlohmann::json> body = (*provider)->WireBody(ParametersRequest(options));
    sent_params = SentParams(options, body, dropped);
    http_teacher = body.has_value();
    if (body) startup_line = "generate: sending " + options.model + " " + DescribeSent(sent_params, dropped) + "\n";
  }
  if (options.dry_run) {
    std::fputs(startup_line.c_str(), stderr);
    KFORGE_ASSIGN_OR_RETURN(std::string system_prompt,
                            RenderSystemPrompt(prompts, options.protocol, std::nullopt, true,
                                               options.judge.verify.arch, options.judge.verify.op_policy));
    system_prompt += SkillSection(options.skills, tools_protocol);
    const common::Task& first = *shard.front();
    KFORGE_ASSIGN_OR_RETURN(llm::ChatRequest request,
                            OpeningRequest(options, prompts, system_prompt, tools,
                                           {&first, options.views.front(), 0, references[first.id], "", {}}));
    std::optional<nlohmann::json> body = (*provider)->WireBody(request);
    nlohmann::json shown = body ? *body : llm::ToJson(request);
    std::printf("%s\n", (*provider)->Redact(common::JsonText(shown, 2)).c_str());
    GenerateSummary dry;
    dry.dry_run = true;
    return dry;
  }
  // One writer per run folder, taken before anything is sent, the judge starts or anything is read
  // from the folder: a second generate there costs nothing and says one line.
  KFORGE_ASSIGN_OR_RETURN(common::FolderLock lock, RunDir::Lock(options.out));
  std::fputs(startup_line.c_str(), stderr);
  llm::Usage probe_usage;
  double probe_usd = 0;
  if (options.probe && http_teacher && !options.provider.batch_api)
    KFORGE_RETURN_IF_ERROR(ProbeModel(**provider, options, probe_usage, probe_usd));

  // The judge. Without a GPU the run is compile-only, and says so.
  GenerateSummary summary;
  bool compile_only = options.compile_only;
  bench::BenchOptions judge_options = options.judge;
  judge_options.verify.seed = options.seed;
  judge_options.verify.tasks_root = options.tasks_root;
  judge_options.verify.peak_at_start = true;  // the device's peaks go in the system prompt
  std::unique_ptr<bench::ServiceJudge> judge;
  std::optional<verify::HelloReply> hello;
  if (!compile_only) {
    judge = std::make_unique<bench::ServiceJudge>(judge_options, bench::ServiceJudge::Mode::kTimed);
    hello = judge->Hello();
    if (!hello || hello->status != common::VerdictStatus::kOk) {
      spdlog::warn("generate: no GPU ({}): compile-only feedback",
                   hello && !hello->message.empty() ? hello->message : std::string("worker did not start"));
      judge.reset();
      compile_only = true;
    }
  }
  if (compile_only) judge = std::make_unique<bench::ServiceJudge>(judge_options, bench::ServiceJudge::Mode::kCompileOnly);
  summary.compile_only = compile_only;

  nlohmann::json about = {
      {"kforge", KFORGE_VERSION},
      {"nvrtc", cuda::NvrtcVersion()},
      {"device", common::DeviceRecordToJson(hello ? hello->device : std::nullopt)},
      {"peak", hello && hello->peak ? hello->peak->ToJson() : nlohmann::json()},
      {"filter", options.filter},
      {"samples", options.samples},
      {"shard", std::to_string(options.shard_index) + "/" + std::to_string(options.shard_count)}};
  KFORGE_ASSIGN_OR_RETURN(
      auto run, RunDir::Open(options.out, std::move(lock), RunConfig(options, prompts, compile_only), about,
                             options.force, options.retry_errors));
  if (probe_usd > 0) {  // paid: kept for the run folder's spend, like an episode that is not final
    nlohmann::json usage = llm::ToJson(probe_usage);
    usage["cost_usd"] = probe_usd;
    usage["requests"] = 1;
    KFORGE_RETURN_IF_ERROR(run->AppendUnfinished({{"id", run->run_id() + "/probe"}, {"probe", true}, {"usage", usage}}));
    run->Log("model probe: $" + Number(probe_usd, "%.6f"));
  }
  llm::ClientOptions client_options = options.client;
  client_options.max_cost_usd = options.max_cost_usd;
  client_options.spent_before_usd = run->spent_usd() + probe_usd;
  summary.spent_before_usd = run->spent_usd();
  summary.cost_usd = probe_usd;
  KFORGE_ASSIGN_OR_RETURN(auto client, llm::Client::Create(std::move(*provider), client_options));
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

  std::vector<Planned> planned;
  for (const common::Task* task : shard) {
    for (View view : options.views) {
      for (int s = 0; s < options.samples; ++s) {
        // The view is part of the id only when a run has several, so one-view ids stay short.
        const std::string view_part = options.views.size() > 1 ? "/" + std::string(ViewName(view)) : "";
        std::string id = run->run_id() + "/" + task->id + view_part + "/" + std::to_string(s);
        if (run->trajectories().Contains(id)) {
          ++summary.skipped;
        } else {
          planned.push_back({task, view, s, id});
        }
      }
    }
  }
  summary.episodes = static_cast<int>(planned.size());

  KFORGE_ASSIGN_OR_RETURN(std::string system_prompt,
                          RenderSystemPrompt(prompts, options.protocol, hello, compile_only,
                                             options.judge.verify.arch, options.judge.verify.op_policy));
  system_prompt += SkillSection(options.skills, tools_protocol);
  std::atomic<bool> stopping{false};
  EpisodeContext context{options,
                         prompts,
                         *client,
                         *judge,
                         system_prompt,
                         tools,
                         compile_only,
                         hello ? hello->device : std::nullopt,
                         run->run_id(),
                         &stopping,
                         sent_params};

  std::fprintf(stderr, "generate: run %s, %d episode%s to run (%d already done), %zu task%s, %s%s\n",
               run->run_id().c_str(), summary.episodes, summary.episodes == 1 ? "" : "s", summary.skipped,
               shard.size(), shard.size() == 1 ? "" : "s", std::string(dataset::ProtocolName(options.protocol)).c_str(),
               compile_only ? ", compile-only" : "");
  run->Log("start run " + run->run_id() + ": " + std::to_string(summary.episodes) + " episodes");

  auto start = Clock::now();
  Progress progress(summary.episodes, start);
  // Samples of a task warm the provider's prompt cache once: the first goes alone, the others wait
  // for its first reply (at most --cache-warmup seconds) while other tasks' episodes start.
  const bool warm_cache = http_teacher && !options.provider.batch_api && options.cache_warmup_s > 0;
  // A task whose shared prefix (system prompt, tools, task prompt) is below the model's cache minimum
  // is never cached: its samples are not held back for a warm-up (each gets a prompt of its own).
  std::map<std::string, bool> cacheable;  // task + view -> prefix above the minimum
  const int64_t minimum = CacheMinimumTokens(options.teacher->kind, options.model);
  int64_t longest = 0;
  for (const Planned& p : planned) {
    const std::string key = p.task->id + "\n" + std::string(ViewName(p.view));
    if (!warm_cache || cacheable.count(key)) continue;
    StatusOr<llm::ChatRequest> opening =
        OpeningRequest(options, prompts, system_prompt, tools, {p.task, p.view, 0, references[p.task->id], "", {}});
    const int64_t tokens = opening.ok() ? PrefixTokens(*opening) : minimum;
    longest = std::max(longest, tokens);
    cacheable[key] = tokens >= minimum;
  }
  const auto below = std::count_if(cacheable.begin(), cacheable.end(), [](const auto& c) { return !c.second; });
  if (below > 0)
    std::fprintf(stderr,
                 "generate: --cache-warmup skipped for %ld of %zu prompts: their shared prefix (~%lld tokens at "
                 "most) is below %s's cache minimum of %lld tokens, so no sample could read it; their samples "
                 "start together\n",
                 static_cast<long>(below), cacheable.size(), static_cast<long long>(longest), options.model.c_str(),
                 static_cast<long long>(minimum));
  std::vector<std::string> prompts_of;
  for (size_t i = 0; i < planned.size(); ++i) {
    const Planned& p = planned[i];
    const std::string key = p.task->id + "\n" + std::string(ViewName(p.view));
    prompts_of.push_back(cacheable[key] ? key : key + "\n" + std::to_string(i));
  }
  EpisodeQueue queue(prompts_of, warm_cache ? std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(options.cache_warmup_s))
                                            : Clock::duration::zero());
  std::mutex mu;  // guards summary, stop_starting
  bool stop_starting = false;
  auto worker = [&] {
    while (true) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (stop_starting || stopping) {
          queue.Close();  // wakes the workers waiting for a held episode
          return;
        }
      }
      const std::optional<size_t> index = queue.Take();
      if (!index) return;
      const Planned* item = &planned[*index];
      EpisodeEnd end = EpisodeEnd::kFinished;
      dataset::Trajectory t;
      try {
        t = RunEpisode(context,
                       {item->task, item->view, item->sample, references[item->task->id], item->id,
                        [&queue, i = *index] { queue.FirstReply(i); }},
                       end);
        queue.FirstReply(*index);  // an episode that ended before its first reply
      } catch (const std::exception& e) {  // a bug: this episode, never the batch
        queue.FirstReply(*index);
        t.id = item->id;
        t.task.id = item->task->id;
        t.stop = dataset::StopReason::kHarnessError;
        t.error = std::string("internal error: ") + e.what();
      }
      if (end != EpisodeEnd::kFinished) {
        // Not final: kept apart (for its cost and for diagnosis), run again by a rerun.
        Status kept = end == EpisodeEnd::kTransient || !t.attempts.empty() || t.usage.cost_usd > 0
                          ? run->AppendUnfinished(dataset::ToJson(t))
                          : Status::Ok();
        std::lock_guard<std::mutex> lock(mu);
        if (!kept.ok() && summary.fatal.ok()) summary.fatal = kept;
        summary.cost_usd += t.usage.cost_usd;
        summary.usage.AddTokens(t.usage);
        if (end == EpisodeEnd::kTransient) {
          ++summary.deferred;
          run->Log(t.id + " unfinished: " + t.error);
        }
        if (!client->fatal_status().ok() || !kept.ok()) stopping = true;
        if (client->budget_reached() && !stop_starting) {
          stop_starting = true;
          summary.stopped_by_budget = true;
        }
        continue;
      }
      nlohmann::json record = dataset::ToJson(t);
      RedactStrings(record, *client);
      if (dataset::FitRecord(record, dataset::kMaxLineBytes))
        spdlog::warn("generate: {}: record larger than {} MiB, written with its longest strings cut "
                     "(\"truncated\": true)",
                     t.id, dataset::kMaxLineBytes >> 20);
      Status written = run->trajectories().Append(record);
      std::lock_guard<std::mutex> lock(mu);
      if (!written.ok()) {
        summary.fatal = written;
        stopping = true;
        queue.Close();
        return;
      }
      ++summary.finished;
      summary.turns += t.turns();
      if (t.correct()) ++summary.correct;
      if (t.correct() && t.speedup() && *t.speedup() > 1) ++summary.faster;
      if (t.best && t.attempts[*t.best].compiled) ++summary.compiled;
      if (t.stop == dataset::StopReason::kLlmError) ++summary.llm_errors;
      if (t.stop == dataset::StopReason::kHarnessError) ++summary.harness_errors;
      summary.cost_usd += t.usage.cost_usd;
      summary.usage.AddTokens(t.usage);
      if (options.max_cost_usd && summary.spent_before_usd + summary.cost_usd >= *options.max_cost_usd &&
          !stop_starting) {
        stop_starting = true;
        summary.stopped_by_budget = true;
      }
      run->Log(t.id + " " + std::string(dataset::StopReasonName(t.stop)) + " turns=" + std::to_string(t.turns()) + " correct=" +
               (t.correct() ? "1" : "0") + (t.speedup() ? " speedup=" + Number(*t.speedup(), "%.3f") : ""));
      progress.Finished(t, summary);
    }
  };
  {
    int n = std::min<int>(options.concurrency, static_cast<int>(planned.size()));
    common::ThreadPool episodes(static_cast<size_t>(std::max(n, 1)));
    for (int i = 0; i < n; ++i) episodes.Post(worker);
  }  // every episode has ended
  if (summary.fatal.ok() && !client->fatal_status().ok()) summary.fatal = client->fatal_status();
  // This process's CPU time (every thread; the compiler and GPU worker processes are children, not
  // counted): what the loop itself costs per turn.
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  summary.cpu_s = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
                  1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  run->Log("end: " + std::to_string(summary.finished) + " written, " + std::to_string(summary.correct) +
           " correct, " + std::to_string(summary.turns) + " turns, generate CPU " +
           Number(summary.turns ? 1000 * summary.cpu_s / summary.turns : 0, "%.2f") + " ms per turn" +
           (summary.fatal.ok() ? "" : ", stopped: " + summary.fatal.message()));
  return summary;
}

}  // namespace kforge::generate
