// Chat requests and responses: names and JSON conversion.
#include <cstdint>

#include "kforge/llm/chat.h"

#include "kforge/common/hash.h"
#include "kforge/common/json_fields.h"

namespace kforge::llm {

using nlohmann::json;

Usage& Usage::operator+=(const Usage& o) {
  input_tokens += o.input_tokens;
  output_tokens += o.output_tokens;
  cache_read_tokens += o.cache_read_tokens;
  cache_write_tokens += o.cache_write_tokens;
  reasoning_tokens += o.reasoning_tokens;
  return *this;
}

bool IsRetryable(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kTransport:
    case ErrorKind::kTimeout:
    case ErrorKind::kRateLimited:
    case ErrorKind::kOverloaded:
    case ErrorKind::kServer:
      return true;
    default:
      return false;
  }
}

bool IsFatal(ErrorKind kind) {
  return kind == ErrorKind::kAuth || kind == ErrorKind::kQuota || kind == ErrorKind::kBilling ||
         kind == ErrorKind::kNotFound;
}

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone:
      return "none";
    case ErrorKind::kTransport:
      return "transport";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kRateLimited:
      return "rate_limited";
    case ErrorKind::kOverloaded:
      return "overloaded";
    case ErrorKind::kServer:
      return "server";
    case ErrorKind::kMalformedResponse:
      return "malformed_response";
    case ErrorKind::kInvalidRequest:
      return "invalid_request";
    case ErrorKind::kModeration:
      return "moderation";
    case ErrorKind::kNotFound:
      return "not_found";
    case ErrorKind::kAuth:
      return "auth";
    case ErrorKind::kQuota:
      return "quota";
    case ErrorKind::kBilling:
      return "billing";
    case ErrorKind::kReplayMiss:
      return "replay_miss";
    case ErrorKind::kExecFailed:
      return "exec_failed";
    case ErrorKind::kAborted:
      return "aborted";
  }
  return "unknown";
}

namespace {

constexpr ErrorKind kAllErrorKinds[] = {ErrorKind::kNone,
                                        ErrorKind::kTransport,
                                        ErrorKind::kTimeout,
                                        ErrorKind::kRateLimited,
                                        ErrorKind::kOverloaded,
                                        ErrorKind::kServer,
                                        ErrorKind::kMalformedResponse,
                                        ErrorKind::kInvalidRequest,
                                        ErrorKind::kModeration,
                                        ErrorKind::kNotFound,
                                        ErrorKind::kAuth,
                                        ErrorKind::kQuota,
                                        ErrorKind::kBilling,
                                        ErrorKind::kReplayMiss,
                                        ErrorKind::kExecFailed,
                                        ErrorKind::kAborted};

constexpr StopReason kAllStopReasons[] = {StopReason::kEndTurn, StopReason::kMaxTokens,
                                          StopReason::kToolUse, StopReason::kStopSequence,
                                          StopReason::kRefusal, StopReason::kOther};

}  // namespace

const char* StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kEndTurn:
      return "end_turn";
    case StopReason::kMaxTokens:
      return "max_tokens";
    case StopReason::kToolUse:
      return "tool_use";
    case StopReason::kStopSequence:
      return "stop_sequence";
    case StopReason::kRefusal:
      return "refusal";
    case StopReason::kOther:
      return "other";
  }
  return "other";
}

std::optional<StopReason> ParseStopReason(std::string_view name) {
  for (StopReason r : kAllStopReasons)
    if (name == StopReasonName(r)) return r;
  return std::nullopt;
}

json ToJson(const Usage& u) {
  return json{{"input_tokens", u.input_tokens},
              {"output_tokens", u.output_tokens},
              {"cache_read_tokens", u.cache_read_tokens},
              {"cache_write_tokens", u.cache_write_tokens},
              {"reasoning_tokens", u.reasoning_tokens}};
}

json ToJson(const ChatRequest& r) {
  json messages = json::array();
  for (const Message& m : r.messages) messages.push_back(common::MessageToJson(m));
  json tools = json::array();
  for (const ToolSpec& t : r.tools) tools.push_back(common::ToolSpecToJson(t));
  json j{{"model", r.model},
         {"messages", std::move(messages)},
         {"tools", std::move(tools)},
         {"max_tokens", r.max_tokens},
         {"stop", r.stop},
         {"prompt_cache", r.prompt_cache}};
  if (r.temperature) j["temperature"] = *r.temperature;
  if (r.top_p) j["top_p"] = *r.top_p;
  if (r.thinking_budget_tokens > 0) j["thinking_budget_tokens"] = r.thinking_budget_tokens;
  if (!r.reasoning_effort.empty()) j["reasoning_effort"] = r.reasoning_effort;
  if (r.adaptive_thinking) j["adaptive_thinking"] = true;
  if (!r.effort.empty()) j["effort"] = r.effort;
  if (!r.thinking_display.empty()) j["thinking_display"] = r.thinking_display;
  if (!r.tag.empty()) j["tag"] = r.tag;
  return j;
}

json ToJson(const ChatResponse& r) {
  json j{{"message", common::MessageToJson(r.message)},
         {"stop_reason", StopReasonName(r.stop_reason)},
         {"raw_stop_reason", r.raw_stop_reason},
         {"model", r.model},
         {"id", r.id},
         {"usage", ToJson(r.usage)},
         {"cost_usd", r.cost_usd},
         {"cost_known", r.cost_known},
         {"attempts", r.attempts},
         {"from_cache", r.from_cache},
         {"latency_s", r.latency_s}};
  if (!r.error.ok())
    j["error"] = {{"kind", ErrorKindName(r.error.kind)},
                  {"http_status", r.error.http_status},
                  {"message", r.error.message}};
  return j;
}

namespace {

Status Bad(const std::string& path, const std::string& what) {
  return Status::ParseError(path + ": " + what);
}

}  // namespace

StatusOr<ChatRequest> ChatRequestFromJson(const json& j) {
  if (!j.is_object()) return Bad("request", "must be an object");
  ChatRequest r;
  try {
    r.model = j.value("model", "");
    if (j.contains("messages")) {
      KFORGE_ASSIGN_OR_RETURN(r.messages, common::MessagesFromJson(j["messages"]));
    }
    if (j.contains("tools")) {
      for (size_t i = 0; i < j["tools"].size(); ++i) {
        StatusOr<ToolSpec> t = common::ToolSpecFromJson(j["tools"][i]);
        if (!t.ok()) return t.status().WithContext("tools[" + std::to_string(i) + "]");
        r.tools.push_back(std::move(*t));
      }
    }
    r.max_tokens = j.value("max_tokens", 4096);
    if (j.contains("temperature") && !j["temperature"].is_null())
      r.temperature = j["temperature"].get<double>();
    if (j.contains("top_p") && !j["top_p"].is_null()) r.top_p = j["top_p"].get<double>();
    if (j.contains("stop")) r.stop = j["stop"].get<std::vector<std::string>>();
    r.prompt_cache = j.value("prompt_cache", true);
    r.thinking_budget_tokens = j.value("thinking_budget_tokens", 0);
    r.reasoning_effort = j.value("reasoning_effort", "");
    r.adaptive_thinking = j.value("adaptive_thinking", false);
    r.effort = j.value("effort", "");
    r.thinking_display = j.value("thinking_display", "");
    r.tag = j.value("tag", "");
  } catch (const json::exception& e) {
    return Bad("request", e.what());
  }
  return r;
}

StatusOr<ChatResponse> ChatResponseFromJson(const json& j) {
  if (!j.is_object() || !j.contains("message")) return Bad("response", "must be an object with a message");
  ChatResponse r;
  StatusOr<Message> m = common::MessageFromJson(j["message"]);
  if (!m.ok()) return m.status().WithContext("response.message");
  r.message = std::move(*m);
  try {
    r.stop_reason = ParseStopReason(j.value("stop_reason", "other")).value_or(StopReason::kOther);
    r.raw_stop_reason = j.value("raw_stop_reason", "");
    r.model = j.value("model", "");
    r.id = j.value("id", "");
    if (j.contains("usage")) {
      const json& u = j["usage"];
      r.usage.input_tokens = u.value("input_tokens", int64_t{0});
      r.usage.output_tokens = u.value("output_tokens", int64_t{0});
      r.usage.cache_read_tokens = u.value("cache_read_tokens", int64_t{0});
      r.usage.cache_write_tokens = u.value("cache_write_tokens", int64_t{0});
      r.usage.reasoning_tokens = u.value("reasoning_tokens", int64_t{0});
    }
    r.cost_usd = j.value("cost_usd", 0.0);
    r.cost_known = j.value("cost_known", false);
    r.attempts = j.value("attempts", 0);
    r.from_cache = j.value("from_cache", false);
    r.latency_s = j.value("latency_s", 0.0);
    if (j.contains("error")) {
      const json& e = j["error"];
      std::string kind = e.value("kind", "");
      r.error.kind = ErrorKind::kMalformedResponse;
      for (ErrorKind k : kAllErrorKinds)
        if (kind == ErrorKindName(k)) r.error.kind = k;
      r.error.http_status = e.value("http_status", 0);
      r.error.message = e.value("message", "");
    }
  } catch (const json::exception& e) {
    return Bad("response", e.what());
  }
  return r;
}

std::string RequestKey(const ChatRequest& request) {
  json j = ToJson(request);
  j.erase("tag");
  return common::Sha256Hex(common::JsonText(j));
}

}  // namespace kforge::llm
