// `kforge generate`: the teacher loop over a task tree; trajectories in RUN_DIR, progress and a summary
// on stderr; exit 0 when every episode ran, 1 when the batch stopped early, 2 for bad usage.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/options.h"
#include "kforge/generate/generate.h"
#include "kforge/llm/prices.h"

namespace kforge::cli {
namespace {

/// "i/n" -> (i, n).
Status ParseShard(const std::string& text, int& index, int& count) {
  if (text.empty()) return Status::Ok();
  size_t slash = text.find('/');
  char* end = nullptr;
  long i = slash == std::string::npos ? -1 : std::strtol(text.c_str(), &end, 10);
  bool ok_i = slash != std::string::npos && end == text.c_str() + slash;
  long n = ok_i ? std::strtol(text.c_str() + slash + 1, &end, 10) : 0;
  if (!ok_i || *end != '\0' || slash + 1 == text.size() || i < 0 || n < 1 || i >= n || n > 100000)
    return Status::InvalidArgument("--shard " + text.substr(0, 20) + ": expected i/n with 0 <= i < n");
  index = static_cast<int>(i);
  count = static_cast<int>(n);
  return Status::Ok();
}

StatusOr<llm::StreamMode> ParseStream(const std::string& text) {
  if (text == "auto") return llm::StreamMode::kAuto;
  if (text == "always") return llm::StreamMode::kAlways;
  if (text == "never") return llm::StreamMode::kNever;
  return Status::InvalidArgument("--stream " + text.substr(0, 20) + ": expected auto, always or never");
}

StatusOr<llm::ReasoningEcho> ParseEcho(const std::string& text) {
  if (text == "auto") return llm::ReasoningEcho::kAuto;
  if (text == "none") return llm::ReasoningEcho::kNone;
  if (text == "tool-calls") return llm::ReasoningEcho::kToolCalls;
  if (text == "all") return llm::ReasoningEcho::kAll;
  return Status::InvalidArgument("--reasoning-echo " + text.substr(0, 20) +
                                 ": expected auto, none, tool-calls or all");
}

std::string DefaultPromptsDir() {
  const char* env = std::getenv("KFORGE_PROMPTS");
  return env && *env ? env : KFORGE_SOURCE_DIR "/prompts";
}

}  // namespace

Runner AttachGenerate(CLI::App& sub) {
  struct Args {
    generate::GenerateOptions options;
    GpuRunFlags gpu;
    std::string shard, stream = "auto", echo = "auto", prices;
    double temperature = 0, max_cost = 0, bench_time = 2;
    CLI::Option* temperature_option = nullptr;
    CLI::Option* max_cost_option = nullptr;
  };
  auto args = std::make_shared<Args>();
  generate::GenerateOptions& o = args->options;
  AddTasksRootOption(sub, o.tasks_root);
  sub.add_option(
      "--filter", o.filter,
      "Only tasks whose id matches one of these comma-separated globs, e.g. 'kernelbench/level1/*'");
  sub.add_flag("--include-degenerate", o.include_unjudgeable,
               "Also run tasks the import found degenerate, nondeterministic or ill-conditioned");
  sub.add_option("--teacher", o.teacher, "anthropic, openai, replay:CASSETTE or exec:COMMAND")->required();
  sub.add_option("--model", o.model, "Model name sent to the teacher");
  sub.add_option("--base-url", o.provider.base_url,
                 "API endpoint (default from ANTHROPIC_BASE_URL/OPENAI_BASE_URL)");
  sub.add_option("--api-key-env", o.provider.api_key_env, "Environment variable holding the API key");
  sub.add_option("--out", o.out, "Run folder: run.json, trajectories.jsonl, generate.log")->required();
  sub.add_option("--samples", o.samples, "Episodes per task")->default_val(1)->check(CLI::Range(1, 100000));
  sub.add_option("--concurrency", o.concurrency, "Episodes in flight")
      ->default_val(16)
      ->check(CLI::Range(1, 4096));
  sub.add_option("--max-turns", o.max_turns, "Teacher turns per episode")
      ->default_val(4)
      ->check(CLI::Range(1, 1000));
  sub.add_option("--protocol", o.protocol, "text (cuda + json blocks) or tools (run and submit)")
      ->default_val("text");
  sub.add_option("--views", o.views,
                 "What the teacher sees, comma-separated: code, nl, spec, nl+spec, kernelbench")
      ->delimiter(',')
      ->default_val("code");
  args->temperature_option =
      sub.add_option("--temperature", args->temperature, "Sampling temperature (default: the server's)")
          ->check(FiniteRange(0, 2), "[0, 2]");
  sub.add_option("--max-tokens", o.max_tokens, "Output cap per reply")
      ->default_val(8192)
      ->check(CLI::Range(1, 1000000));
  sub.add_option("--thinking-budget", o.thinking_budget_tokens, "Anthropic extended thinking budget (tokens)")
      ->default_val(0)
      ->check(CLI::Range(0, 1000000));
  sub.add_option("--reasoning-effort", o.reasoning_effort, "OpenAI-compatible reasoning_effort");
  sub.add_option("--reasoning-echo", args->echo,
                 "Which turns carry reasoning back: auto, none, tool-calls, all")
      ->default_val("auto");
  sub.add_option("--target-speedup", o.target_speedup, "Stop an episode once correct and this much faster")
      ->default_val(1.0)
      ->check(FiniteRange(0, 1000), "[0, 1000]");
  sub.add_option("--shard", args->shard, "Run shard i of n (i/n, 0-based) of the task list");
  sub.add_flag("--compile-only", o.compile_only, "Compile and check plans only; no GPU needed");
  args->max_cost_option =
      sub.add_option("--max-cost", args->max_cost, "Stop starting episodes once this many USD are spent")
          ->check(FiniteRange(0, 1e9), "[0, 1e9]");
  sub.add_option("--prompts", o.prompts_dir, "Prompt templates folder")->default_val(DefaultPromptsDir());
  sub.add_option("--prices", args->prices, "Price table (JSON)")
      ->default_val(DefaultPromptsDir() + "/prices.json");
  sub.add_flag("--force", o.force, "Start a new run id in a RUN_DIR that holds another configuration");
  sub.add_option("--trials", o.judge.verify.trials, "Verification trials per candidate")
      ->default_val(3)
      ->check(CLI::Range(1, 1000));
  sub.add_option("--bench-time", args->bench_time, "Most seconds of timing per correct candidate")
      ->default_val(2)
      ->check(FiniteRange(0.01, 3600.0), "[0.01, 3600]");
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
  sub.add_option("--stream", args->stream, "Stream replies: auto, always or never")->default_val("auto");
  sub.add_option("--max-attempts", o.client.max_attempts, "Attempts per request, retries included")
      ->default_val(3)
      ->check(CLI::Range(1, 100));
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
  AddGpuRunFlags(sub, args->gpu, o.judge.verify.arch);
  args->gpu.seed_option->description("Run seed (default 0, not random: it is part of the run id, so reruns "
                                     "resume; recorded)");
  return [args]() {
    generate::GenerateOptions& options = args->options;
    Status usage = ApplyGpuRunFlags(args->gpu, options.judge.verify);
    if (usage.ok()) usage = ParseShard(args->shard, options.shard_index, options.shard_count);
    auto stream = ParseStream(args->stream);
    auto echo = ParseEcho(args->echo);
    if (usage.ok() && !stream.ok()) usage = stream.status();
    if (usage.ok() && !echo.ok()) usage = echo.status();
    if (usage.ok()) usage = CheckTasksRoot(options.tasks_root);
    if (usage.ok()) {
      auto prices = llm::PriceTable::Load(args->prices);
      if (prices.ok()) {
        options.client.prices = std::move(*prices);
      } else {
        usage = prices.status().WithContext("--prices");
      }
    }
    if (!usage.ok()) {
      std::fprintf(stderr, "kforge generate: %s\n", usage.message().c_str());
      return kExitUsage;
    }
    options.provider.stream = *stream;
    options.provider.openai_reasoning_echo = *echo;
    options.provider.max_in_flight = options.client.max_in_flight;
    if (args->temperature_option->count() > 0) options.temperature = args->temperature;
    if (args->max_cost_option->count() > 0) options.max_cost_usd = args->max_cost;
    options.seed = options.judge.verify.seed.value_or(0);
    options.judge.measure.max_seconds = args->bench_time;
    options.judge.measure.min_samples = 5;

    auto summary = generate::RunGenerate(options);
    if (!summary.ok()) {
      std::fprintf(stderr, "kforge generate: %s\n", summary.status().message().c_str());
      return kExitUsage;
    }
    const generate::GenerateSummary& s = *summary;
    std::fprintf(stderr,
                 "generate: %d episode%s written (%d skipped, already done): %d correct, %d faster than the "
                 "reference, %d compiled, %d teacher errors, %d harness errors, $%.4f%s\n",
                 s.finished, s.finished == 1 ? "" : "s", s.skipped, s.correct, s.faster, s.compiled,
                 s.llm_errors, s.harness_errors, s.cost_usd,
                 s.compile_only ? " (compile-only: nothing ran on a GPU)" : "");
    if (!s.fatal.ok()) {
      std::fprintf(stderr, "kforge generate: stopped: %s\n", s.fatal.message().c_str());
      return kExitUsage;
    }
    if (s.stopped_by_budget) {
      std::fprintf(stderr,
                   "generate: --max-cost reached; rerun the same command with a higher budget to go on\n");
      return kExitFailed;
    }
    return kExitOk;
  };
}

}  // namespace kforge::cli
