// One episode of the kernel-writing loop.
#include "generate/episode.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "generate/attempt.h"
#include "generate/reply.h"
#include "generate/skill_context.h"
#include "generate/task_view.h"
#include "generate/teacher_setup.h"
#include "kforge/bench/report.h"
#include "kforge/common/verdict.h"

namespace kforge::generate {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void AddUsage(dataset::UsageInfo& total, const llm::ChatResponse& response) {
  total.input_tokens += response.usage.input_tokens;
  total.output_tokens += response.usage.output_tokens;
  total.cache_read_tokens += response.usage.cache_read_tokens;
  total.cache_write_tokens += response.usage.cache_write_tokens;
  total.reasoning_tokens += response.usage.reasoning_tokens;
  total.requests += 1;
  total.cost_usd += response.cost_usd;
  if (!response.cost_known && !response.from_cache) total.cost_known = false;
}

/// A candidate as an attempt of the record: compiled, checked and (when correct, on a GPU) timed by the
/// run's bench::Judge.
dataset::Attempt JudgeCandidate(const EpisodeContext& context, const EpisodeSpec& spec, const Candidate& candidate,
                       int turn, double& judge_s) {
  dataset::Attempt attempt = StartAttempt(candidate, turn);
  if (!candidate.solution.ok()) return attempt;
  auto start = Clock::now();
  FinishAttempt(attempt,
                context.judge.Submit({spec.id + " turn " + std::to_string(turn), *candidate.solution}).get(),
                context.compile_only);
  if (attempt.bench && context.torch_compile) {
    if (auto it = context.torch_compile->find(spec.task->id); it != context.torch_compile->end())
      attempt.bench->torch_compile = it->second;
  }
  judge_s += Seconds(start);
  return attempt;
}

/// The record of an episode before its first turn: the task, the teacher, the run's settings.
dataset::Trajectory NewTrajectory(const EpisodeContext& context, const EpisodeSpec& spec) {
  const GenerateOptions& options = context.options;
  const common::Task& task = *spec.task;
  dataset::Trajectory t;
  t.id = spec.id;
  t.run_id = context.run_id;
  t.sample = spec.sample;
  t.task.id = task.id;
  t.task.level = task.level;
  t.task.tags = task.tags;
  t.task.view = ViewName(spec.view);
  t.task.source = task.id.substr(0, task.id.find('/'));
  // Imports made before task.json had a licence field: KernelBench's is MIT.
  t.task.license = !task.license.empty() ? task.license : t.task.source == "kernelbench" ? "MIT" : "";
  t.task.reference_hash = dataset::TextHash(spec.reference_source);
  t.task.reference_source = spec.reference_source;
  t.task.unjudgeable = std::string(task.UnjudgeableReason());
  t.teacher.provider = llm::ProviderKindName(options.teacher->kind);
  t.teacher.model = options.model;
  t.teacher.params = context.sent_params;
  t.teacher.params["max_turns"] = options.max_turns;
  t.teacher.params["target_speedup"] = options.target_speedup;
  t.protocol = options.protocol;
  t.compile_only = context.compile_only;
  t.device = context.device;
  t.kforge_version = KFORGE_VERSION;
  t.created_at = UtcNow();
  t.tools = context.tools;
  for (const ContextSkill& skill : options.skills) t.skills.push_back({skill.name, skill.hash});
  return t;
}

/// A teacher request that failed after its retries: the episode's stop and error, and how it ends.
EpisodeEnd FailedRequest(const EpisodeContext& context, const llm::ChatResponse& response, dataset::Trajectory& t) {
  t.stop = dataset::StopReason::kLlmError;
  t.error = std::string(llm::ErrorKindName(response.error.kind)) + ": " + response.error.message;
  // A request that stopped the batch (a fatal error, a circuit breaker) does not end its episode.
  if (response.error.kind == llm::ErrorKind::kAborted || llm::IsFatal(response.error.kind) ||
      !context.client.fatal_status().ok())
    return EpisodeEnd::kAborted;
  return llm::IsRetryable(response.error.kind) ? EpisodeEnd::kTransient : EpisodeEnd::kFinished;
}

/// Answers the reply's reads of a skill's files (appended to `messages`, counted in `skill_reads`);
/// returns the reply with the other calls, which carry candidates.
common::Message AnswerSkillReads(const EpisodeContext& context, const common::Message& reply,
                                 std::vector<common::Message>& messages, int& skill_reads) {
  const bool offers_skill_reads =
      std::any_of(context.tools.begin(), context.tools.end(),
                  [](const common::ToolSpec& tool) { return tool.name == kReadSkillFile; });
  common::Message solution_calls = reply;
  if (!offers_skill_reads) return solution_calls;
  solution_calls.tool_calls.clear();
  for (const common::ToolCall& call : reply.tool_calls) {
    if (call.name != kReadSkillFile) {
      solution_calls.tool_calls.push_back(call);
      continue;
    }
    SkillFileAnswer answer = ReadSkillFile(context.options.skills, call.arguments);
    messages.push_back(common::Message::ToolResult(call.id, std::move(answer.text), answer.error));
    ++skill_reads;
  }
  return solution_calls;
}

/// A reply cut at the output limit: each candidate that did not parse says so.
void NoteCutReply(const llm::ChatResponse& response, int max_tokens, std::vector<Candidate>& candidates) {
  const int64_t cut_at = response.usage.output_tokens > 0 ? response.usage.output_tokens : max_tokens;
  for (Candidate& c : candidates)
    if (!c.solution.ok())
      c.solution = Status::InvalidArgument(
          "your reply was cut at " + std::to_string(cut_at) +
          " tokens (the output limit) before its solution was complete (" + c.solution.status().message() +
          "); write less prose and reasoning and send the whole solution");
}

/// Judges a reply's candidates in order, until one ends the episode (a submit, the target reached):
/// each becomes an attempt of `t`, and its feedback a tool result (tools protocol) or `feedback`
/// (text protocol). Every tool call gets its result. Returns whether the episode ended.
bool TryCandidates(const EpisodeContext& context, const EpisodeSpec& spec, int turn,
                   const std::vector<Candidate>& candidates, dataset::Trajectory& t,
                   std::vector<common::Message>& messages, std::string& feedback) {
  const GenerateOptions& options = context.options;
  bool done = false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& candidate = candidates[i];
    if (done || i >= kMaxCandidatesPerReply) {  // not judged; every tool call still gets its result
      if (options.protocol == dataset::Protocol::kTools)
        messages.push_back(
            common::Message::ToolResult(candidate.tool_call_id,
                                        done ? "Not run: an earlier call of this reply ended the episode."
                                             : "Not run: at most " + std::to_string(kMaxCandidatesPerReply) +
                                                   " tool calls of one reply are run.",
                                        true));
      continue;
    }
    dataset::Attempt attempt = JudgeCandidate(context, spec, candidate, turn, t.judge_s);
    bool reached = ReachedTarget(attempt, context.compile_only, options.target_speedup);
    if (candidate.submit) {
      t.stop = dataset::StopReason::kSubmitted;
      done = true;
    } else if (reached) {
      t.stop = context.compile_only ? dataset::StopReason::kCompiled : dataset::StopReason::kTargetReached;
      done = true;
    }
    if (attempt.Is(common::VerdictStatus::kHarnessError) && !done) {
      t.error = attempt.verdict ? attempt.verdict->message : "";
    }
    std::string rendered =
        AttemptFeedback(context.prompts, attempt, done, options.target_speedup, context.compile_only);
    if (options.protocol == dataset::Protocol::kTools) {
      messages.push_back(
          common::Message::ToolResult(candidate.tool_call_id, rendered, !attempt.correct && !reached));
    } else {
      feedback = rendered;
    }
    t.attempts.push_back(std::move(attempt));
  }
  return done;
}

/// The episode's last stop, best attempt and messages.
void FinishTrajectory(const std::vector<common::Message>& messages, dataset::Trajectory& t) {
  if (t.stop == dataset::StopReason::kNone) t.stop = dataset::StopReason::kMaxTurns;
  // An episode whose every attempt hit kforge's own failure says so: it is not the teacher's.
  if (!t.attempts.empty() && t.attempts.back().Is(common::VerdictStatus::kHarnessError) &&
      t.stop != dataset::StopReason::kLlmError) {
    bool any_judged = false;
    for (const auto& a : t.attempts) any_judged |= !a.Is(common::VerdictStatus::kHarnessError) && a.status.has_value();
    if (!any_judged) t.stop = dataset::StopReason::kHarnessError;
  }
  t.best = BestAttempt(t.attempts);
  t.messages = messages;
}

}  // namespace

std::optional<int> BestAttempt(const std::vector<dataset::Attempt>& attempts) {
  std::optional<int> best;
  for (int i = 0; i < static_cast<int>(attempts.size()); ++i) {
    const dataset::Attempt& a = attempts[i];
    if (!a.correct) continue;
    if (!best || a.speedup.value_or(0) > attempts[*best].speedup.value_or(0)) best = i;
  }
  if (best) return best;
  for (int i = static_cast<int>(attempts.size()) - 1; i >= 0; --i)
    if (attempts[i].compiled) return i;
  if (!attempts.empty()) return static_cast<int>(attempts.size()) - 1;
  return std::nullopt;
}

llm::ChatRequest ParametersRequest(const GenerateOptions& options) {
  llm::ChatRequest request;
  request.model = options.model;
  request.max_tokens = options.max_tokens;
  request.temperature = options.temperature;
  request.thinking_budget_tokens = options.thinking_budget_tokens;
  request.reasoning_effort = options.reasoning_effort;
  request.adaptive_thinking = options.adaptive_thinking;
  request.effort = options.effort;
  // Thinking is recorded: a model that omits its text by default is asked for the summary.
  const bool thinking = options.adaptive_thinking || options.thinking_budget_tokens > 0;
  request.thinking_display = options.thinking_display;
  if (thinking && request.thinking_display.empty() && OmitsThinkingByDefault(options.model))
    request.thinking_display = "summarized";
  return request;
}

StatusOr<llm::ChatRequest> OpeningRequest(const GenerateOptions& options, const PromptSet& prompts,
                                          const std::string& system_prompt,
                                          const std::vector<common::ToolSpec>& tools,
                                          const EpisodeSpec& spec) {
  const common::Task& task = *spec.task;
  KFORGE_ASSIGN_OR_RETURN(std::string view, RenderTaskView(task, spec.view, spec.reference_source));
  KFORGE_ASSIGN_OR_RETURN(
      std::string user,
      Render(prompts.task, {{"task_id", task.id}, {"task_view", view}, {"tensors", RenderTensorTable(task)}},
             "task.md"));
  llm::ChatRequest request = ParametersRequest(options);
  request.messages = {common::Message::System(system_prompt), common::Message::User(std::move(user))};
  request.tools = tools;
  request.prompt_cache_key = task.id;  // the samples of a task share its prompt's cache (OpenAI)
  return request;
}

dataset::Trajectory RunEpisode(const EpisodeContext& context, const EpisodeSpec& spec, EpisodeEnd& end) {
  const GenerateOptions& options = context.options;
  const common::Task& task = *spec.task;
  auto episode_start = Clock::now();
  end = EpisodeEnd::kFinished;
  dataset::Trajectory t = NewTrajectory(context, spec);
  StatusOr<llm::ChatRequest> opening =
      OpeningRequest(options, context.prompts, context.system_prompt, context.tools, spec);
  if (!opening.ok()) {
    t.stop = dataset::StopReason::kHarnessError;
    t.error = opening.status().message();
    return t;
  }
  llm::ChatRequest request = std::move(*opening);
  std::vector<common::Message> messages = std::move(request.messages);

  // At temperature 0 samples may share cached replies; otherwise each sample has its own.
  const bool per_sample = !options.temperature || *options.temperature > 0;
  for (int turn = 1; turn <= options.max_turns; ++turn) {
    if (context.stopping && context.stopping->load()) {
      end = EpisodeEnd::kAborted;
      return t;
    }
    request.messages = messages;
    request.tag = task.id + " turn " + std::to_string(turn);
    request.cache_scope = (per_sample ? "sample " + std::to_string(spec.sample) + " " : "") + "turn " +
                          std::to_string(turn);
    auto llm_start = Clock::now();
    llm::ChatResponse response = context.client.Complete(request).get();
    if (turn == 1 && spec.on_first_reply) spec.on_first_reply();
    t.llm_s += Seconds(llm_start);
    AddUsage(t.usage, response);
    if (!response.ok()) {
      end = FailedRequest(context, response, t);
      break;
    }
    messages.push_back(response.message);  // a refusal too, empty or not: the history keeps the turn
    if (response.stop_reason == llm::StopReason::kRefusal) {  // asking again gets the same answer
      t.stop = dataset::StopReason::kRefused;
      t.error = "the teacher refused (" + response.raw_stop_reason + ")" +
                (response.message.content.empty() ? "" : ": " + response.message.content.substr(0, 2000));
      break;
    }
    int skill_reads = 0;
    const common::Message solution_calls = AnswerSkillReads(context, response.message, messages, skill_reads);
    std::vector<Candidate> candidates = CandidatesOf(solution_calls, options.protocol, task.id);
    if (response.stop_reason == llm::StopReason::kMaxTokens) NoteCutReply(response, options.max_tokens, candidates);
    const bool last_turn = turn == options.max_turns;
    if (candidates.empty()) {  // tools protocol, no tool call
      if (last_turn) {
        t.stop = dataset::StopReason::kNoSolution;
        break;
      }
      if (skill_reads > 0) continue;  // the files it read are its next turn's input
      std::string why = response.stop_reason == llm::StopReason::kMaxTokens
                            ? "Your reply was cut at the output limit before a tool call. "
                            : "";
      messages.push_back(
          common::Message::User(why + "Call `run` to test a solution or `submit` to hand it in."));
      continue;
    }
    std::string feedback;
    if (TryCandidates(context, spec, turn, candidates, t, messages, feedback)) break;
    if (last_turn) {
      t.stop = dataset::StopReason::kMaxTurns;
      break;
    }
    if (options.protocol == dataset::Protocol::kText) messages.push_back(common::Message::User(feedback));
  }
  FinishTrajectory(messages, t);
  t.wall_s = Seconds(episode_start);
  return t;
}

}  // namespace kforge::generate
