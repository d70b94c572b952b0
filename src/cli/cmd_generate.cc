// `kforge generate`: the teacher loop over a task tree; trajectories in RUN_DIR, progress and a summary
// on stderr; exit 0 when every episode ran, 1 when the batch stopped early, 2 for bad usage.
#include <signal.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/teacher_flag.h"
#include "kforge/generate/generate.h"
#include "kforge/llm/prices.h"
#include "kforge/skill/context.h"

namespace kforge::cli {
namespace {

/// What generate says when SIGINT or SIGTERM ends it, written by the handler (no allocation there).
char g_interrupted_note[640];

void SayInterrupted(int sig) {
  const ssize_t written = write(2, g_interrupted_note, std::strlen(g_interrupted_note));
  (void)written;
  signal(sig, SIG_DFL);  // then end as the signal would have
  raise(sig);
}

/// On Ctrl-C (or SIGTERM), a line saying that finished episodes are kept and a rerun resumes.
void NoteOnInterrupt(const std::filesystem::path& out) {
  std::snprintf(g_interrupted_note, sizeof g_interrupted_note,
                "\nkforge generate: interrupted; the episodes finished so far are kept in %s, and the same "
                "command resumes the run\n",
                out.c_str());
  struct sigaction action = {};
  action.sa_handler = SayInterrupted;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

/// A value of a closed set named by `flag`; InvalidArgument naming the flag and the choices.
template <typename E, size_t N>
StatusOr<E> ParseNamed(const char* flag, const std::string& text, const common::NameTable<E, N>& names) {
  if (std::optional<E> value = names.Parse(text)) return *value;
  return Status::InvalidArgument(std::string(flag) + " " + text.substr(0, 20) + ": expected " +
                                 names.Spellings());
}

StatusOr<llm::StreamMode> ParseStream(const std::string& text) {
  return ParseNamed("--stream", text, llm::kStreamModeNames);
}

StatusOr<llm::ReasoningEcho> ParseEcho(const std::string& text) {
  return ParseNamed("--reasoning-echo", text, llm::kReasoningEchoNames);
}

/// --header "Name: value" (repeatable) -> name/value pairs.
Status ParseHeaders(const std::vector<std::string>& texts, std::vector<std::pair<std::string, std::string>>& out) {
  for (const std::string& text : texts) {
    size_t colon = text.find(':');
    std::string name = text.substr(0, colon);
    bool token = !name.empty();
    for (char c : name) token = token && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
    if (colon == std::string::npos || !token)
      return Status::InvalidArgument("--header " + text.substr(0, 40) + ": expected NAME:VALUE");
    size_t start = text.find_first_not_of(" \t", colon + 1);
    std::string value = start == std::string::npos ? "" : text.substr(start);
    if (value.find_first_of("\r\n") != std::string::npos)
      return Status::InvalidArgument("--header " + name + ": the value has a line break");
    out.emplace_back(name, value);
  }
  return Status::Ok();
}

/// --extra-body: a JSON object.
Status ParseExtraBody(const std::string& text, nlohmann::json& out) {
  if (text.empty()) return Status::Ok();
  out = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!out.is_object()) return Status::InvalidArgument("--extra-body: expected a JSON object, e.g. '{\"top_k\": 20}'");
  return Status::Ok();
}

Status ParseViews(const std::vector<std::string>& names, std::vector<generate::View>& views) {
  views.clear();
  for (const std::string& name : names) {
    std::optional<generate::View> view = generate::kViewNames.Parse(name);
    if (!view)
      return Status::InvalidArgument("--views: view \"" + name.substr(0, 40) + "\": expected " +
                                     generate::kViewNames.Spellings());
    views.push_back(*view);
  }
  return Status::Ok();
}

Status ParseProtocol(const std::string& text, dataset::Protocol& protocol) {
  KFORGE_ASSIGN_OR_RETURN(protocol, ParseNamed("--protocol", text, dataset::kProtocolNames));
  return Status::Ok();
}

/// generate's flags: options bound directly, and the texts and counts turned into options once parsed.
struct GenerateFlags {
  generate::GenerateOptions options;
  GpuRunFlags gpu;
  std::string teacher, shard, stream = "auto", echo = "auto", prices, extra_body, reasoning_model, protocol;
  std::vector<std::string> views;
  std::vector<std::string> headers, skills;
  double temperature = 0, max_cost = 0, bench_time = 2;
  bool torch_compile = false;
  std::string torch_compile_mode = "default";
  CLI::Option* temperature_option = nullptr;
  CLI::Option* max_cost_option = nullptr;
};

/// The tasks, the run folder, what the teacher sees and how many episodes: --tasks ... --views.
void AddRunFlags(CLI::App& sub, GenerateFlags& f) {
  generate::GenerateOptions& o = f.options;
  AddTasksRootOption(sub, o.tasks_root);
  sub.add_option(
         "--filter", o.filter,
         "Only tasks whose id matches one of these comma-separated globs, e.g. 'kernelbench/level1/*'")
      ->check(NonEmptyFilter, "GLOBS");
  sub.add_flag("--include-degenerate", o.include_unjudgeable,
               "Also run tasks the import found degenerate, nondeterministic or ill-conditioned");
  sub.add_option("--out", o.out, "Run folder: run.json, trajectories.jsonl, generate.log")->required();
  sub.add_option("--samples", o.samples, "Episodes per task")->default_val(1)->check(CLI::Range(1, 100000));
  sub.add_option("--concurrency", o.concurrency, "Episodes in flight")
      ->default_val(16)
      ->check(CLI::Range(1, 4096));
  sub.add_option("--cache-warmup", o.cache_warmup_s,
                 "Seconds the other samples of a task wait for its first sample's first reply, so that they "
                 "read its prompt from the provider's cache (0: start them together)")
      ->default_val(60)
      ->check(CLI::Range(0.0, 3600.0));
  sub.add_option("--max-turns", o.max_turns, "Teacher turns per episode")
      ->default_val(4)
      ->check(CLI::Range(1, 1000));
  sub.add_option("--protocol", f.protocol, "text (cuda + json blocks) or tools (run and submit)")
      ->default_val(std::string(dataset::ProtocolName(dataset::Protocol::kText)));
  sub.add_option("--views", f.views, "What the teacher sees, comma-separated: " + generate::kViewNames.Spellings())
      ->delimiter(',')
      ->default_val("code");
  sub.add_option("--target-speedup", o.target_speedup, "Stop an episode once correct and this much faster")
      ->default_val(1.0)
      ->check(FiniteRange(0, 1000), "[0, 1000]");
  sub.add_option("--shard", f.shard, "Run shard i of n (i/n, 0-based) of the task list");
  sub.add_flag("--compile-only", o.compile_only, "Compile and check plans only; no GPU needed");
  sub.add_option("--prompts", o.prompts_dir, "Prompt templates folder")->default_val(DefaultPromptsDir());
  sub.add_option("--skill", f.skills,
                 "A skill folder (SKILL.md) in the teacher's context: its body in the system prompt (text), or a "
                 "catalog line and the read_skill_file tool (tools); repeatable")
      ->take_all();
  sub.add_flag("--force", o.force, "Start a new run id in a RUN_DIR that holds another configuration");
  sub.add_flag("--retry-errors", o.retry_errors, "Run again the episodes recorded with stop llm_error");
  sub.add_flag("--dry-run", o.dry_run, "Print the first request's body as sent and exit");
}

/// The teacher and what each request sends: --teacher, --model ... --reasoning-echo.
void AddTeacherFlags(CLI::App& sub, GenerateFlags& f) {
  generate::GenerateOptions& o = f.options;
  sub.add_option("--teacher", f.teacher, "anthropic, openai, replay:CASSETTE or exec:COMMAND")->required();
  sub.add_option("--model", o.model, "Model name sent to the teacher");
  sub.add_option("--base-url", o.provider.base_url,
                 "API endpoint (default from ANTHROPIC_BASE_URL/OPENAI_BASE_URL)");
  sub.add_option("--api-key-env", o.provider.api_key_env, "Environment variable holding the API key");
  f.temperature_option =
      sub.add_option("--temperature", f.temperature, "Sampling temperature (default: the server's)")
          ->check(FiniteRange(0, 2), "[0, 2]");
  sub.add_option("--max-tokens", o.max_tokens, "Output cap per reply")
      ->default_val(8192)
      ->check(CLI::Range(1, 1000000));
  sub.add_option("--thinking-budget", o.thinking_budget_tokens, "Anthropic extended thinking budget (tokens)")
      ->default_val(0)
      ->check(CLI::Range(0, 1000000));
  sub.add_option("--reasoning-effort", o.reasoning_effort, "OpenAI-compatible reasoning_effort");
  sub.add_flag("--adaptive-thinking", o.adaptive_thinking, "Anthropic adaptive thinking (Claude 4.6 and later)");
  sub.add_option("--effort", o.effort, "Anthropic output_config.effort: low, medium, high, xhigh (Opus 4.7), max");
  sub.add_option("--thinking-display", o.thinking_display,
                 "Anthropic thinking.display: summarized or omitted (default: summarized where a model omits it, "
                 "Claude Opus 4.7)");
  sub.add_option("--reasoning-echo", f.echo,
                 "Which turns carry reasoning back: " + llm::kReasoningEchoNames.Spellings())
      ->default_val("auto");
  sub.add_option("--header", f.headers, "Extra HTTP header NAME:VALUE for every request (repeatable)")
      ->take_all();
  sub.add_option("--extra-body", f.extra_body, "JSON object merged into every request body");
  sub.add_option("--max-tokens-field", o.provider.openai_max_tokens_field,
                 "OpenAI-compatible: the output cap's field, max_tokens or max_completion_tokens (default: by model)");
  sub.add_option("--reasoning-model", f.reasoning_model,
                 "OpenAI-compatible: yes to send only reasoning-model parameters (no temperature), no for none "
                 "(default: by model)");
  sub.add_option("--reasoning-field", o.provider.openai_reasoning_field,
                 "OpenAI-compatible: the field reasoning goes back in, reasoning_content or reasoning")
      ->default_val("reasoning_content");
  sub.add_flag("--no-probe{false}", o.probe, "Skip the one-token request that checks the model at start");
}

/// Spending, pacing and the batch API: --max-cost ... --record.
void AddSpendingFlags(CLI::App& sub, GenerateFlags& f) {
  generate::GenerateOptions& o = f.options;
  f.max_cost_option =
      sub.add_option("--max-cost", f.max_cost, "Stop starting episodes once this many USD are spent")
          ->check(FiniteRange(0, 1e9), "[0, 1e9]");
  sub.add_option("--prices", f.prices, "Price table (JSON)")->default_val(DefaultPromptsDir() + "/prices.json");
  sub.add_flag("--allow-unpriced", o.allow_unpriced, "With --max-cost, run a model the price table lacks");
  sub.add_flag("--batch-api", o.provider.batch_api, "Send each turn's requests as one batch (Anthropic Message Batches, OpenAI Batch API): half price");
  sub.add_option("--batch-window", o.provider.batch_window_s, "Seconds without a new request that close a batch")
      ->default_val(2)
      ->check(FiniteRange(0, 3600), "[0, 3600]");
  sub.add_option("--batch-poll", o.provider.batch_poll_s, "Seconds between two polls of a batch")
      ->default_val(30)
      ->check(FiniteRange(0, 3600), "[0, 3600]");
  sub.add_option("--max-in-flight", o.client.max_in_flight, "Teacher requests in flight, at most")
      ->default_val(64)
      ->check(CLI::Range(1, 4096));
  sub.add_option("--rpm", o.client.requests_per_minute, "Requests per minute, at most (0: no limit)")
      ->default_val(0)
      ->check(FiniteRange(0, 1e9), "[0, 1e9]");
  sub.add_option("--tpm", o.client.tokens_per_minute, "Tokens per minute, at most (0: no limit)")
      ->default_val(0)
      ->check(FiniteRange(0, 1e12), "[0, 1e12]");
  sub.add_option("--llm-cache", o.client.cache_dir, "Cache teacher replies in this folder (off by default)");
  sub.add_option("--record", o.client.record_path, "Append every teacher reply to this cassette");
}

/// Timeouts, streaming and retries of teacher requests: --timeout ... --max-identical-errors.
void AddRequestFlags(CLI::App& sub, GenerateFlags& f) {
  generate::GenerateOptions& o = f.options;
  sub.add_option("--timeout", o.provider.timeout_s, "Seconds a reply that is not streamed may take")
      ->default_val(600)
      ->check(FiniteRange(1, 86400), "[1, 86400]");
  sub.add_option("--idle-timeout", o.provider.idle_timeout_s, "Seconds a streamed reply may stay silent")
      ->default_val(300)
      ->check(FiniteRange(1, 86400), "[1, 86400]");
  sub.add_option("--stream-timeout", o.provider.stream_timeout_s,
                 "Seconds a streamed reply may take in all (endless pings or text end)")
      ->default_val(3600)
      ->check(FiniteRange(1, 86400), "[1, 86400]");
  sub.add_option("--stream", f.stream, "Stream replies: " + llm::kStreamModeNames.Spellings())->default_val("auto");
  sub.add_option("--max-attempts", o.client.max_attempts, "Attempts per request, retries included")
      ->default_val(8)
      ->check(CLI::Range(1, 100));
  sub.add_option("--backoff-initial", o.client.initial_backoff_s, "Seconds before the first retry (doubling)")
      ->default_val(1)
      ->check(FiniteRange(0, 3600), "[0, 3600]");
  sub.add_option("--backoff-max", o.client.max_backoff_s, "Most seconds between two retries")
      ->default_val(60)
      ->check(FiniteRange(0, 3600), "[0, 3600]");
  sub.add_option("--max-retry-after", o.client.max_retry_after_s, "Longest retry-after waited for, seconds")
      ->default_val(600)
      ->check(FiniteRange(0, 86400), "[0, 86400]");
  sub.add_option("--outage", o.client.outage_s,
                 "Stop the batch after this many seconds of transient teacher failures without a success (0: never)")
      ->default_val(600)
      ->check(FiniteRange(0, 1e7), "[0, 1e7]");
  sub.add_option("--max-identical-errors", o.client.max_identical_errors,
                 "Stop the batch after this many requests in a row fail with the same error (0: never)")
      ->default_val(5)
      ->check(CLI::Range(0, 1000000));
}

/// How candidates are judged: --trials, --bench-time, --torch-compile and the GPU flags.
void AddJudgingFlags(CLI::App& sub, GenerateFlags& f) {
  generate::GenerateOptions& o = f.options;
  sub.add_option("--trials", o.bench.verify.trials, "Verification trials per candidate")
      ->default_val(3)
      ->check(CLI::Range(1, 1000));
  sub.add_option("--bench-time", f.bench_time, "Most seconds of timing per correct candidate")
      ->default_val(2)
      ->check(FiniteRange(0.01, 3600.0), "[0.01, 3600]");
  sub.add_flag("--torch-compile", f.torch_compile,
               "Time each task's reference under torch.compile once before the episodes (GPU runs) and keep it "
               "on every timed attempt's record");
  sub.add_option("--torch-compile-mode", f.torch_compile_mode, "torch.compile's mode for --torch-compile")
      ->default_val("default");
  AddGpuRunFlags(sub, f.gpu, o.bench.verify.arch);
  f.gpu.seed_option->description("Run seed (default 0, not random: it is part of the run id, so reruns "
                                 "resume; recorded)");
}

/// --prices: the installed table, with a user's table merged over it (it adds models, or replaces
/// their prices); a user's table alone where none is installed.
StatusOr<llm::PriceTable> LoadPrices(const std::string& path) {
  const std::string installed = DefaultPromptsDir() + "/prices.json";
  auto prices = llm::PriceTable::Load(installed);
  if (prices.ok() && path != installed) {
    auto own = llm::PriceTable::Load(path);
    if (!own.ok()) return own.status().WithContext("--prices");
    prices->MergeOver(*own);
  } else if (!prices.ok() && path != installed) {
    prices = llm::PriceTable::Load(path);
  }
  if (!prices.ok()) return prices.status().WithContext("--prices");
  return prices;
}

/// Turns the flags' texts into `f.options`: the parsed teacher, shard, protocol, views, headers, the
/// skills and prices read. The checks that span options are the library's (CheckGenerateOptions).
Status ToOptions(GenerateFlags& f) {
  generate::GenerateOptions& options = f.options;
  KFORGE_RETURN_IF_ERROR(ApplyGpuRunFlags(f.gpu, options.bench.verify));
  KFORGE_RETURN_IF_ERROR(ParseTeacher(f.teacher, options.teacher));
  KFORGE_RETURN_IF_ERROR(ParseShard(f.shard, options.shard_index, options.shard_count));
  KFORGE_RETURN_IF_ERROR(ParseProtocol(f.protocol, options.protocol));
  KFORGE_RETURN_IF_ERROR(ParseViews(f.views, options.views));
  KFORGE_ASSIGN_OR_RETURN(options.provider.stream, ParseStream(f.stream));
  KFORGE_ASSIGN_OR_RETURN(options.provider.openai_reasoning_echo, ParseEcho(f.echo));
  KFORGE_RETURN_IF_ERROR(CheckTasksRoot(options.tasks_root));
  KFORGE_RETURN_IF_ERROR(ParseHeaders(f.headers, options.provider.extra_headers));
  KFORGE_RETURN_IF_ERROR(ParseExtraBody(f.extra_body, options.provider.extra_body));
  if (!f.reasoning_model.empty()) {
    if (f.reasoning_model != "yes" && f.reasoning_model != "no")
      return Status::InvalidArgument("--reasoning-model " + f.reasoning_model.substr(0, 20) + ": expected yes or no");
    options.provider.openai_reasoning_model = f.reasoning_model == "yes";
  }
  if (options.provider.batch_api) options.provider.batch_state_path = (options.out / "batches.jsonl").string();
  KFORGE_ASSIGN_OR_RETURN(options.skills, skill::LoadContextSkills(f.skills, "--skill"));
  KFORGE_ASSIGN_OR_RETURN(options.client.prices, LoadPrices(f.prices));
  options.provider.max_in_flight = options.client.max_in_flight;
  if (f.temperature_option->count() > 0) options.temperature = f.temperature;
  if (f.max_cost_option->count() > 0) options.max_cost_usd = f.max_cost;
  options.seed = options.bench.verify.seed.value_or(0);
  options.bench.measure.max_seconds = f.bench_time;
  options.bench.measure.min_samples = 5;
  if (f.torch_compile) {
    options.torch_compile.emplace();
    options.torch_compile->script = ScriptPath("torch_compile_baseline.py");
    options.torch_compile->mode = f.torch_compile_mode;
  }
  return Status::Ok();
}

/// The summary lines of a run, and its exit code.
int ReportSummary(const generate::GenerateSummary& s) {
  std::fprintf(stderr,
               "generate: %d episode%s written (%d skipped, already done): %d correct, %d faster than the "
               "reference, %d compiled, %d teacher errors, %d harness errors, $%.4f%s\n",
               s.finished, s.finished == 1 ? "" : "s", s.skipped, s.correct, s.faster, s.compiled,
               s.llm_errors, s.harness_errors, s.cost_usd,
               s.compile_only ? " (compile-only: nothing ran on a GPU)" : "");
  if (s.usage.cache_read + s.usage.cache_write > 0)
    std::fprintf(stderr,
                 "generate: prompt cache: %.0f%% of prompt tokens read from the cache (%lld read, %lld written, "
                 "%lld not cached)\n",
                 100 * s.usage.CacheReadShare(), static_cast<long long>(s.usage.cache_read),
                 static_cast<long long>(s.usage.cache_write), static_cast<long long>(s.usage.input));
  if (!s.fatal.ok()) return Fail("generate", "stopped: " + s.fatal.message());
  if (s.stopped_by_budget) {
    std::fprintf(stderr,
                 "generate: --max-cost reached ($%.4f spent in this run folder); rerun the same command with "
                 "a higher budget to go on\n",
                 s.spent_before_usd + s.cost_usd);
    return kExitFailed;
  }
  if (s.finished > 0 && s.llm_errors == s.finished) {
    std::fprintf(stderr,
                 "generate: every episode written ended in a teacher error (llm_error; see \"error\" in "
                 "trajectories.jsonl); fix the cause, then rerun with --retry-errors\n");
    return kExitFailed;
  }
  if (s.deferred > 0) {
    std::fprintf(stderr,
                 "generate: %d episode%s ended on a transient teacher error (kept in unfinished.jsonl); rerun "
                 "the same command to run them\n",
                 s.deferred, s.deferred == 1 ? "" : "s");
    return kExitFailed;
  }
  return kExitOk;
}

int RunGenerateCommand(GenerateFlags& flags) {
  if (Status usage = ToOptions(flags); !usage.ok()) return Fail("generate", usage);
  NoteOnInterrupt(flags.options.out);
  auto summary = generate::RunGenerate(flags.options);
  if (!summary.ok()) return Fail("generate", summary.status());
  if (summary->dry_run) return kExitOk;
  return ReportSummary(*summary);
}

}  // namespace

Runner AttachGenerate(CLI::App& sub) {
  auto flags = std::make_shared<GenerateFlags>();
  AddRunFlags(sub, *flags);
  AddTeacherFlags(sub, *flags);
  AddSpendingFlags(sub, *flags);
  AddRequestFlags(sub, *flags);
  AddJudgingFlags(sub, *flags);
  return [flags] { return RunGenerateCommand(*flags); };
}

}  // namespace kforge::cli
