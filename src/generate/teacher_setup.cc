// The teacher side of a run's setup (generate/teacher_setup.h).
#include "generate/teacher_setup.h"

#include "generate/episode.h"
#include "generate/reply.h"
#include "generate/skill_context.h"

#include <algorithm>
#include <future>
#include <memory>

#include <spdlog/spdlog.h>

namespace kforge::generate {

namespace {

/// The reasoning flags the teacher's API has no field for.
Status CheckReasoningFlagsSent(const GenerateOptions& o) {
  switch (o.teacher->kind) {
    case llm::ProviderKind::kAnthropic:
      if (!o.reasoning_effort.empty())
        return Status::InvalidArgument(
            "--reasoning-effort: --teacher anthropic does not send it; use --thinking-budget (or --extra-body)");
      return Status::Ok();
    case llm::ProviderKind::kOpenAi:
      if (o.thinking_budget_tokens > 0)
        return Status::InvalidArgument(
            "--thinking-budget: --teacher openai does not send it; use --reasoning-effort (or --extra-body)");
      if (o.adaptive_thinking || !o.effort.empty())
        return Status::InvalidArgument(std::string(o.adaptive_thinking ? "--adaptive-thinking" : "--effort") +
                                       ": only --teacher anthropic sends it; use --reasoning-effort");
      return Status::Ok();
    case llm::ProviderKind::kReplay:
    case llm::ProviderKind::kExec:
      return Status::Ok();  // the canonical request goes as it is
  }
  return Status::Ok();  // not reached: the switch names every provider
}

/// The provider's own flags: their values, and whether the teacher sends them at all.
Status CheckProviderFlags(const GenerateOptions& o) {
  const llm::ProviderOptions& p = o.provider;
  const std::string& field = p.openai_max_tokens_field;
  if (!field.empty() && field != "max_tokens" && field != "max_completion_tokens")
    return Status::InvalidArgument("--max-tokens-field " + field.substr(0, 30) +
                                   ": expected max_tokens or max_completion_tokens");
  const std::string& reasoning_field = p.openai_reasoning_field;
  if (reasoning_field != "reasoning_content" && reasoning_field != "reasoning")
    return Status::InvalidArgument("--reasoning-field " + reasoning_field.substr(0, 30) +
                                   ": expected reasoning_content or reasoning");
  if (o.teacher->kind != llm::ProviderKind::kOpenAi && (!field.empty() || p.openai_reasoning_model))
    return Status::InvalidArgument(std::string(field.empty() ? "--reasoning-model" : "--max-tokens-field") +
                                   ": only --teacher openai sends it");
  const bool http = llm::SendsJsonBody(o.teacher->kind);
  if (p.batch_api && !http)
    return Status::InvalidArgument("--batch-api: only --teacher anthropic (Message Batches) or openai (Batch API)");
  if (!http && (!p.extra_headers.empty() || !p.extra_body.empty()))
    return Status::InvalidArgument(std::string(p.extra_headers.empty() ? "--extra-body" : "--header") +
                                   ": only --teacher anthropic or openai sends it");
  return Status::Ok();
}

/// --effort against the documented levels; --thinking-display against its values and thinking.
Status CheckEffortAndDisplay(const GenerateOptions& o) {
  if (!o.effort.empty()) {
    const std::string& e = o.effort;
    if (e != "low" && e != "medium" && e != "high" && e != "xhigh" && e != "max")
      return Status::InvalidArgument("--effort " + e.substr(0, 20) + ": expected low, medium, high, xhigh or max");
    if (e == "xhigh" && !OmitsThinkingByDefault(o.model))
      return Status::InvalidArgument("--effort xhigh: only Claude Opus 4.7 takes it (" + o.model.substr(0, 60) +
                                     ": low, medium, high or max)");
  }
  if (!o.thinking_display.empty()) {
    if (o.thinking_display != "summarized" && o.thinking_display != "omitted")
      return Status::InvalidArgument("--thinking-display " + o.thinking_display.substr(0, 20) +
                                     ": expected summarized or omitted");
    if (o.teacher->kind != llm::ProviderKind::kAnthropic)
      return Status::InvalidArgument("--thinking-display: only --teacher anthropic sends it");
    if (!o.adaptive_thinking && o.thinking_budget_tokens == 0)
      return Status::InvalidArgument("--thinking-display: thinking is off (--adaptive-thinking or --thinking-budget)");
  }
  return Status::Ok();
}

}  // namespace

int64_t CacheMinimumTokens(llm::ProviderKind kind, const std::string& model) {
  if (kind != llm::ProviderKind::kAnthropic) return 1024;
  for (const char* name : {"claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7", "claude-haiku-4-5"})
    if (model.find(name) != std::string::npos) return 4096;
  for (const char* name : {"claude-sonnet-4-6", "claude-3-5-haiku", "claude-3-haiku", "claude-haiku-3"})
    if (model.find(name) != std::string::npos) return 2048;
  return 1024;
}

int64_t PrefixTokens(const llm::ChatRequest& request) {
  size_t bytes = 0;
  for (const common::Message& m : request.messages) bytes += m.content.size();
  for (const common::ToolSpec& t : request.tools)
    bytes += t.name.size() + t.description.size() + t.parameters.dump().size();
  return static_cast<int64_t>(bytes / 3);
}

bool OmitsThinkingByDefault(const std::string& model) {
  return model.find("claude-opus-4-7") != std::string::npos;
}

Status CheckTeacherOptions(const GenerateOptions& o) {
  // What a provider would refuse on every request, or ignore, is refused here, before any request.
  KFORGE_RETURN_IF_ERROR(CheckProviderFlags(o));
  KFORGE_RETURN_IF_ERROR(CheckReasoningFlagsSent(o));
  KFORGE_RETURN_IF_ERROR(CheckEffortAndDisplay(o));
  if (o.thinking_budget_tokens > 0) {
    if (o.thinking_budget_tokens < 1024)
      return Status::InvalidArgument("--thinking-budget " + std::to_string(o.thinking_budget_tokens) +
                                     ": at least 1024 (0 turns thinking off)");
    if (o.thinking_budget_tokens >= o.max_tokens)
      return Status::InvalidArgument("--thinking-budget " + std::to_string(o.thinking_budget_tokens) +
                                     " must be below --max-tokens " + std::to_string(o.max_tokens) +
                                     " (thinking is part of the output)");
  }
  if (o.adaptive_thinking && o.thinking_budget_tokens > 0)
    return Status::InvalidArgument("--adaptive-thinking: not with --thinking-budget (the model sets its own)");
  return Status::Ok();
}

nlohmann::json SentParams(const GenerateOptions& o, const std::optional<nlohmann::json>& body,
                          std::vector<std::string>& dropped) {
  nlohmann::json params = {
      {"max_tokens", o.max_tokens},
      {"temperature", o.temperature ? nlohmann::json(*o.temperature) : nlohmann::json()},
      {"thinking_budget_tokens", o.thinking_budget_tokens},
      {"reasoning_effort", o.reasoning_effort}};
  if (!body || !body->is_object()) return params;  // replay, exec: the canonical request is what goes
  const nlohmann::json& b = *body;
  if (b.contains("max_completion_tokens")) {
    params["max_tokens"] = b["max_completion_tokens"];
    params["max_tokens_field"] = "max_completion_tokens";
  } else {
    params["max_tokens"] = b.value("max_tokens", nlohmann::json());
  }
  params["temperature"] = b.value("temperature", nlohmann::json());
  if (o.temperature && params["temperature"].is_null()) dropped.push_back("temperature");
  const nlohmann::json thinking = b.value("thinking", nlohmann::json());
  params["thinking_budget_tokens"] =
      thinking.is_object() ? thinking.value("budget_tokens", nlohmann::json(0)) : nlohmann::json(0);
  if (thinking.is_object() && thinking.contains("type") && thinking["type"] != "enabled")
    params["thinking"] = thinking;
  params["reasoning_effort"] = b.value("reasoning_effort", std::string());
  const nlohmann::json output_config = b.value("output_config", nlohmann::json());
  if (output_config.is_object() && output_config.contains("effort")) params["effort"] = output_config["effort"];
  if (!o.effort.empty() && !params.contains("effort")) dropped.push_back("effort");
  if (!o.reasoning_effort.empty() && params["reasoning_effort"] == "") dropped.push_back("reasoning_effort");
  return params;
}

llm::ChatRequest ProbeRequest(const GenerateOptions& o) {
  llm::ChatRequest probe = ParametersRequest(o);
  probe.prompt_cache = false;
  probe.messages = {common::Message::User("Reply with OK.")};
  // Small, but above a thinking budget (the API refuses max_tokens at or below it), and with thinking
  // on (adaptive too) at least above the smallest budget, 1024.
  int64_t budget = o.thinking_budget_tokens;
  if (o.adaptive_thinking) budget = std::max<int64_t>(budget, 1024);
  const nlohmann::json& extra = o.provider.extra_body;
  if (extra.contains("thinking") && extra["thinking"].is_object()) {
    const nlohmann::json& thinking = extra["thinking"];
    if (thinking.contains("budget_tokens") && thinking["budget_tokens"].is_number_integer())
      budget = std::max<int64_t>(budget, thinking["budget_tokens"].get<int64_t>());
    else if (thinking.value("type", std::string()) == "adaptive")
      budget = std::max<int64_t>(budget, 1024);
  }
  constexpr int64_t kProbeTokens = 16;
  probe.max_tokens = static_cast<int>(std::min<int64_t>(o.max_tokens, budget + kProbeTokens));
  return probe;
}

Status ProbeModel(llm::Provider& provider, const GenerateOptions& o, llm::Usage& usage, double& cost_usd) {
  auto promise = std::make_shared<std::promise<llm::Attempt>>();
  std::future<llm::Attempt> result = promise->get_future();
  provider.Send(ProbeRequest(o), [promise](llm::Attempt a) { promise->set_value(std::move(a)); });
  const llm::Attempt attempt = result.get();
  usage = attempt.response.usage;
  std::optional<double> cost = o.client.prices.Cost(provider.Name(), o.model, usage);
  cost_usd = cost.value_or(0) * provider.PriceFactor();
  const llm::ErrorInfo& error = attempt.response.error;
  switch (error.kind) {
    case llm::ErrorKind::kNotFound:
    case llm::ErrorKind::kAuth:
    case llm::ErrorKind::kQuota:
    case llm::ErrorKind::kBilling:
    case llm::ErrorKind::kInvalidRequest:
      return Status::InvalidArgument(provider.Redact("model probe (--no-probe skips it): " +
                                                     std::string(llm::ErrorKindName(error.kind)) + ": " +
                                                     error.message));
    case llm::ErrorKind::kNone:
      return Status::Ok();
    default:
      spdlog::warn("generate: model probe: {}: {} (going on)", llm::ErrorKindName(error.kind),
                   provider.Redact(error.message));
      return Status::Ok();
  }
}

std::string DescribeSent(const nlohmann::json& params, const std::vector<std::string>& dropped) {
  std::string text = params.value("max_tokens_field", std::string("max_tokens")) + " " + params["max_tokens"].dump();
  if (!params["temperature"].is_null()) text += ", temperature " + params["temperature"].dump();
  if (params["thinking_budget_tokens"] != 0) text += ", thinking budget " + params["thinking_budget_tokens"].dump();
  if (params.contains("thinking")) text += ", thinking " + params["thinking"].dump();
  if (params["reasoning_effort"] != "") text += ", reasoning_effort " + params["reasoning_effort"].get<std::string>();
  if (params.contains("effort")) text += ", effort " + params["effort"].dump();
  if (!dropped.empty()) {
    text += "; not sent (the model or provider takes no other value):";
    for (const std::string& d : dropped) text += " " + d;
  }
  return text;
}

StatusOr<Teacher> MakeTeacher(const GenerateOptions& options) {
  Teacher teacher;
  auto provider = llm::MakeProvider(*options.teacher, options.provider);
  if (!provider.ok()) return provider.status().WithContext("--teacher");
  teacher.provider = std::move(*provider);
  if (options.model.empty() && llm::SendsJsonBody(options.teacher->kind))
    return Status::InvalidArgument("--model is required with --teacher " + teacher.provider->Name());
  if (options.max_cost_usd && !options.allow_unpriced &&
      !options.client.prices.Find(teacher.provider->Name(), options.model))
    return Status::InvalidArgument("--max-cost: no price for model \"" + options.model +
                                   "\" in the price table (--prices); add it, or pass --allow-unpriced to count it as 0");
  if (options.protocol == dataset::Protocol::kTools) {
    teacher.tools = SolutionTools();
    if (!options.skills.empty()) teacher.tools.push_back(ReadSkillFileTool(options.skills));
  }
  std::vector<std::string> dropped;
  std::optional<nlohmann::json> body = teacher.provider->WireBody(ParametersRequest(options));
  teacher.sent_params = SentParams(options, body, dropped);
  teacher.http = body.has_value();
  if (body) teacher.startup_line = "generate: sending " + options.model + " " + DescribeSent(teacher.sent_params, dropped) + "\n";
  return teacher;
}

}  // namespace kforge::generate
