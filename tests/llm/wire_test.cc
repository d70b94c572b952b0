#include "llm/wire.h"

#include <gtest/gtest.h>

namespace kforge::llm {
namespace {

using nlohmann::json;

ChatRequest ToolConversation() {
  ChatRequest r;
  r.model = "m";
  r.max_tokens = 100;
  r.messages = {Message::System("sys"), Message::User("task"),
                Message::Assistant("trying", {ToolCall{"c1", "submit", json{{"source", "k"}}}}),
                Message::ToolResult("c1", "mismatch", true), Message::User("again")};
  r.tools = {ToolSpec{"submit", "submit a kernel", json{{"type", "object"}}}};
  r.stop = {"STOP"};
  return r;
}

TEST(AnthropicWireTest, RequestBody) {
  json b = AnthropicRequestBody(ToolConversation(), /*stream=*/false);
  EXPECT_EQ(b["system"][0]["text"], "sys");
  EXPECT_EQ(b["system"][0]["cache_control"]["type"], "ephemeral");
  ASSERT_EQ(b["messages"].size(), 3u);  // user, assistant, user(tool_result + text)
  EXPECT_EQ(b["messages"][1]["content"][1]["type"], "tool_use");
  EXPECT_EQ(b["messages"][1]["content"][1]["input"]["source"], "k");
  const json& last = b["messages"][2]["content"];
  EXPECT_EQ(last[0]["type"], "tool_result");
  EXPECT_EQ(last[0]["tool_use_id"], "c1");
  EXPECT_EQ(last[0]["is_error"], true);
  EXPECT_EQ(last[1]["text"], "again");
  EXPECT_EQ(last[1]["cache_control"]["type"], "ephemeral");
  EXPECT_EQ(b["tools"][0]["input_schema"]["type"], "object");
  EXPECT_EQ(b["stop_sequences"][0], "STOP");
  EXPECT_EQ(b["max_tokens"], 100);
}

TEST(AnthropicWireTest, ToolCallArgumentsThatWereNotJsonGoBackAsWritten) {
  ChatRequest r = ToolConversation();
  r.messages[2].tool_calls[0].arguments = json("{\"source\": \"k\"");  // cut: kept as the text written
  json b = AnthropicRequestBody(r, false);
  EXPECT_EQ(b["messages"][1]["content"][1]["input"], json({{"unparsed_input", "{\"source\": \"k\""}}))
      << "not an empty input the model never sent";
}

TEST(AnthropicWireTest, ParsesToolUseReply) {
  HttpResult http;
  http.status = 200;
  http.body = R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-x",
    "content":[{"type":"text","text":"Here."},{"type":"tool_use","id":"toolu_1","name":"submit","input":{"a":1}}],
    "stop_reason":"tool_use","stop_sequence":null,
    "usage":{"input_tokens":11,"output_tokens":22,"cache_read_input_tokens":33,"cache_creation_input_tokens":44}})";
  Attempt a = AnthropicAttempt(http, 0, {});
  ASSERT_TRUE(a.response.ok()) << a.response.error.message;
  EXPECT_EQ(a.response.message.content, "Here.");
  EXPECT_EQ(a.response.message.tool_calls.at(0).id, "toolu_1");
  EXPECT_EQ(a.response.message.tool_calls.at(0).arguments["a"], 1);
  EXPECT_EQ(a.response.stop_reason, StopReason::kToolUse);
  EXPECT_EQ(a.response.usage.input_tokens, 11);
  EXPECT_EQ(a.response.usage.cache_read_tokens, 33);
  EXPECT_EQ(a.response.usage.cache_write_tokens, 44);
}

TEST(OpenAiWireTest, RequestBody) {
  OpenAiDialect dialect;
  dialect.max_tokens_field = "max_completion_tokens";
  json b = OpenAiRequestBody(ToolConversation(), dialect, /*stream=*/false);
  ASSERT_EQ(b["messages"].size(), 5u);
  EXPECT_EQ(b["messages"][0]["role"], "system");
  EXPECT_EQ(b["messages"][2]["tool_calls"][0]["function"]["arguments"], R"({"source":"k"})");
  EXPECT_EQ(b["messages"][3]["role"], "tool");
  EXPECT_EQ(b["messages"][3]["tool_call_id"], "c1");
  EXPECT_EQ(b["tools"][0]["function"]["parameters"]["type"], "object");
  EXPECT_EQ(b["max_completion_tokens"], 100);
  EXPECT_FALSE(b.contains("max_tokens"));
}

TEST(OpenAiWireTest, ParsesToolCallsAndCachedUsage) {
  HttpResult http;
  http.status = 200;
  http.body = R"({"id":"chatcmpl-1","object":"chat.completion","model":"gpt-x","choices":[{"index":0,
    "message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
    "function":{"name":"submit","arguments":"{\"a\": 2}"}}]},"finish_reason":"tool_calls"}],
    "usage":{"prompt_tokens":100,"completion_tokens":7,"total_tokens":107,"prompt_tokens_details":{"cached_tokens":60}}})";
  Attempt a = OpenAiAttempt(http, 0, {});
  ASSERT_TRUE(a.response.ok()) << a.response.error.message;
  EXPECT_EQ(a.response.message.tool_calls.at(0).arguments["a"], 2);
  EXPECT_EQ(a.response.stop_reason, StopReason::kToolUse);
  EXPECT_EQ(a.response.usage.input_tokens, 40);
  EXPECT_EQ(a.response.usage.cache_read_tokens, 60);
  EXPECT_EQ(a.response.usage.output_tokens, 7);
}

TEST(WireTest, ClassifiesFailures) {
  struct Case {
    int status;
    std::string body;
    bool openai;
    ErrorKind expected;
  };
  const Case cases[] = {
      {429, R"({"type":"error","error":{"type":"rate_limit_error","message":"slow"}})", false,
       ErrorKind::kRateLimited},
      {529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})", false,
       ErrorKind::kOverloaded},
      {200, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})", false,
       ErrorKind::kOverloaded},
      {500, R"({"type":"error","error":{"type":"api_error","message":"x"}})", false, ErrorKind::kServer},
      {408, "", false, ErrorKind::kServer},
      {409, "", true, ErrorKind::kServer},
      {503, "<html>", true, ErrorKind::kServer},
      {401, R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}})",
       false, ErrorKind::kAuth},
      {403, R"({"type":"error","error":{"type":"permission_error","message":"no"}})", false,
       ErrorKind::kAuth},
      {400,
       R"({"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low"}})",
       false, ErrorKind::kBilling},
      {400, R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}})",
       false, ErrorKind::kInvalidRequest},
      {429,
       R"({"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}})",
       true, ErrorKind::kQuota},
      {429, R"({"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}})",
       true, ErrorKind::kRateLimited},
      {401,
       R"({"error":{"message":"Incorrect API key provided: sk-abc12345678","type":"invalid_request_error","code":"invalid_api_key"}})",
       true, ErrorKind::kAuth},
      {404, R"({"error":"model 'x' not found"})", true, ErrorKind::kNotFound},
      {200, "not json", true, ErrorKind::kMalformedResponse},
      {200, R"({"choices":[]})", true, ErrorKind::kMalformedResponse},
      {200, R"({"content":"nope"})", false, ErrorKind::kMalformedResponse},
  };
  for (const Case& c : cases) {
    HttpResult http;
    http.status = c.status;
    http.body = c.body;
    Attempt a = c.openai ? OpenAiAttempt(http, 0, {}) : AnthropicAttempt(http, 0, {});
    EXPECT_EQ(ErrorKindName(a.response.error.kind), std::string(ErrorKindName(c.expected)))
        << c.status << " " << c.body;
    EXPECT_EQ(a.response.error.message.find("sk-abc12345678"), std::string::npos) << a.response.error.message;
  }
  HttpResult dropped;
  dropped.transport_error = "Empty reply from server";
  EXPECT_EQ(OpenAiAttempt(dropped, 0, {}).response.error.kind, ErrorKind::kTransport);
  HttpResult slow;
  slow.transport_error = "Operation timed out";
  slow.timed_out = true;
  EXPECT_EQ(AnthropicAttempt(slow, 0, {}).response.error.kind, ErrorKind::kTimeout);
}

TEST(WireTest, RetryAfter) {
  const std::time_t now = 1700000000;  // 2023-11-14T22:13:20Z
  EXPECT_DOUBLE_EQ(*ParseRetryAfter({{"retry-after", "7"}}, now), 7);
  EXPECT_DOUBLE_EQ(*ParseRetryAfter({{"retry-after", "7"}, {"retry-after-ms", "1500"}}, now), 1.5);
  EXPECT_DOUBLE_EQ(*ParseRetryAfter({{"retry-after", "Tue, 14 Nov 2023 22:13:50 GMT"}}, now), 30);
  EXPECT_FALSE(ParseRetryAfter({{"retry-after", "soon"}}, now).has_value());
  EXPECT_FALSE(ParseRetryAfter({}, now).has_value());
}

TEST(WireTest, RateLimitHeaders) {
  const std::time_t now = 1700000000;
  RateLimitInfo a = ParseRateLimits({{"anthropic-ratelimit-requests-limit", "50"},
                                     {"anthropic-ratelimit-requests-remaining", "49"},
                                     {"anthropic-ratelimit-requests-reset", "2023-11-14T22:13:21Z"},
                                     {"anthropic-ratelimit-tokens-limit", "80000"},
                                     {"anthropic-ratelimit-tokens-remaining", "0"},
                                     {"anthropic-ratelimit-tokens-reset", "2023-11-14T22:13:32.5Z"}},
                                    now);
  EXPECT_EQ(*a.requests_limit, 50);
  EXPECT_EQ(*a.requests_remaining, 49);
  EXPECT_DOUBLE_EQ(*a.requests_reset_s, 1);
  EXPECT_EQ(*a.tokens_remaining, 0);
  EXPECT_DOUBLE_EQ(*a.tokens_reset_s, 12.5);
  RateLimitInfo o = ParseRateLimits({{"x-ratelimit-limit-requests", "500"},
                                     {"x-ratelimit-remaining-requests", "499"},
                                     {"x-ratelimit-reset-requests", "120ms"},
                                     {"x-ratelimit-limit-tokens", "30000"},
                                     {"x-ratelimit-reset-tokens", "6m0s"}},
                                    now);
  EXPECT_EQ(*o.requests_limit, 500);
  EXPECT_DOUBLE_EQ(*o.requests_reset_s, 0.12);
  EXPECT_EQ(*o.tokens_limit, 30000);
  EXPECT_DOUBLE_EQ(*o.tokens_reset_s, 360);
  EXPECT_FALSE(o.tokens_remaining.has_value());
}

TEST(WireTest, GoDurationsAndSanitizing) {
  EXPECT_DOUBLE_EQ(*ParseGoDuration("1h2m3s"), 3723);
  EXPECT_DOUBLE_EQ(*ParseGoDuration("1.5s"), 1.5);
  EXPECT_DOUBLE_EQ(*ParseGoDuration("2"), 2);
  EXPECT_FALSE(ParseGoDuration("3 days").has_value());
  EXPECT_EQ(SanitizeMessage("bad key sk-ant-api03-abcdefgh_XYZ\nline", {}), "bad key sk-*** line");
  std::string text = "key=SECRETKEY1 and SECRETKEY1";
  MaskSecret(text, "SECRETKEY1");
  EXPECT_EQ(text, "key=*** and ***");
}

// ---- Reasoning ----

// A reply as the API sends it: thinking (with text the JSON must keep exactly: quotes, escapes,
// non-ASCII), a redacted block, text and a tool use.
const char* kThinkingReply = R"({"id":"msg_t","type":"message","role":"assistant","model":"claude-sonnet-4-5",
  "content":[
    {"type":"thinking","thinking":"Plan: \"tile\" 32x32\nthen \u00e9 \ud83d\ude80 \\ done","signature":"EqQBCkgIARABGAIiQL+sig/==\n"},
    {"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},
    {"type":"text","text":"Submitting."},
    {"type":"tool_use","id":"toolu_1","name":"submit","input":{"source":"k"}}],
  "stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":9}})";

TEST(AnthropicWireTest, ThinkingBlocksKeptAndSentBackByteForByte) {
  HttpResult http;
  http.status = 200;
  http.body = kThinkingReply;
  Attempt a = AnthropicAttempt(http, 0, {});
  ASSERT_TRUE(a.response.ok()) << a.response.error.message;
  const Message& m = a.response.message;
  ASSERT_EQ(m.blocks.size(), 4u);
  EXPECT_EQ(m.blocks[0].type, ContentBlock::Type::kThinking);
  EXPECT_EQ(m.blocks[1].data, "EmwKAhgBEgy3va3pzix/LafPsn4a");
  EXPECT_EQ(m.blocks[3].tool_call_id, "toolu_1");
  EXPECT_EQ(m.content, "Submitting.");
  EXPECT_EQ(m.reasoning, json::parse(kThinkingReply)["content"][0]["thinking"].get<std::string>());

  // Through the canonical JSON (cassettes, trajectories) and back into the next request.
  StatusOr<Message> stored = common::MessageFromJson(json::parse(common::MessageToJson(m).dump()));
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->blocks, m.blocks);
  ChatRequest next;
  next.model = "claude-sonnet-4-5";
  next.thinking_budget_tokens = 2048;
  next.max_tokens = 4096;
  next.messages = {Message::User("task"), *stored, Message::ToolResult("toolu_1", "ok")};
  json body = AnthropicRequestBody(next, false);
  EXPECT_EQ(body["messages"][1]["content"].dump(), json::parse(kThinkingReply)["content"].dump());
  EXPECT_EQ(body["thinking"], (json{{"type", "enabled"}, {"budget_tokens", 2048}}));
}

TEST(AnthropicWireTest, EditedTurnKeepsThinkingFirstAndUsesTheEdit) {
  HttpResult http;
  http.status = 200;
  http.body = kThinkingReply;
  Message m = AnthropicAttempt(http, 0, {}).response.message;
  m.content = "Edited.";  // content and tool_calls stay the truth
  m.tool_calls.push_back(ToolCall{"toolu_2", "run", json{{"x", 1}}});
  ChatRequest r;
  r.messages = {Message::User("u"), m};
  r.prompt_cache = false;
  json content = AnthropicRequestBody(r, false)["messages"][1]["content"];
  ASSERT_EQ(content.size(), 5u) << content.dump();
  EXPECT_EQ(content[0]["type"], "thinking");
  EXPECT_EQ(content[1]["type"], "redacted_thinking");
  EXPECT_EQ(content[2]["text"], "Edited.");
  EXPECT_EQ(content[3]["id"], "toolu_1");
  EXPECT_EQ(content[4]["id"], "toolu_2");
}

TEST(AnthropicWireTest, AvoidsKnown400s) {
  ChatRequest r;
  r.model = "m";
  r.messages = {Message::System(" \n"),
                Message::User("task"),
                Message::Assistant("  ", {ToolCall{"c1", "run", json::object()}}),
                Message::ToolResult("c1", "", /*is_error=*/true),
                Message::User(" \t\n"),
                Message::Assistant("Prefill:  \n")};
  r.tools = {ToolSpec{"run", "no type", json{{"properties", {{"x", {{"type", "integer"}}}}}}},
             ToolSpec{"nothing", "not an object", json()}};
  r.temperature = 0.2;
  r.top_p = 0.9;
  json b = AnthropicRequestBody(r, false);
  EXPECT_FALSE(b.contains("system")) << "a blank system prompt is a blank text block";
  const json& msgs = b["messages"];
  ASSERT_EQ(msgs.size(), 4u) << msgs.dump();
  ASSERT_EQ(msgs[1]["content"].size(), 1u) << "the blank text before the tool use is dropped";
  EXPECT_EQ(msgs[1]["content"][0]["type"], "tool_use");
  ASSERT_EQ(msgs[2]["content"].size(), 1u) << "the blank user text is dropped";
  EXPECT_EQ(msgs[2]["content"][0]["content"], "(no output)");
  EXPECT_EQ(msgs[2]["content"][0]["is_error"], true);
  EXPECT_EQ(msgs[3]["content"][0]["text"], "Prefill:") << "a final assistant turn may not end in whitespace";
  EXPECT_EQ(b["tools"][0]["input_schema"]["type"], "object");
  EXPECT_EQ(b["tools"][0]["input_schema"]["properties"]["x"]["type"], "integer");
  EXPECT_EQ(b["tools"][1]["input_schema"], (json{{"type", "object"}}));
  EXPECT_EQ(b["temperature"], 0.2);
  EXPECT_FALSE(b.contains("top_p")) << "temperature and top_p together are rejected";

  ChatRequest only_top_p = r;
  only_top_p.temperature.reset();
  EXPECT_EQ(AnthropicRequestBody(only_top_p, false)["top_p"], 0.9);

  ChatRequest thinking = r;
  thinking.thinking_budget_tokens = 1024;
  thinking.max_tokens = 2000;
  json t = AnthropicRequestBody(thinking, false);
  EXPECT_FALSE(t.contains("temperature")) << "thinking allows only temperature 1";
  EXPECT_FALSE(t.contains("top_p")) << "thinking allows top_p only in [0.95, 1]";
  thinking.temperature.reset();
  thinking.top_p = 0.95;
  EXPECT_EQ(AnthropicRequestBody(thinking, false)["top_p"], 0.95);
  EXPECT_EQ(AnthropicRequestProblem(thinking), "");
  thinking.thinking_budget_tokens = 2000;
  EXPECT_NE(AnthropicRequestProblem(thinking).find("below max_tokens 2000"), std::string::npos);
  thinking.thinking_budget_tokens = 512;
  EXPECT_NE(AnthropicRequestProblem(thinking).find("at least 1024"), std::string::npos);
}

TEST(OpenAiWireTest, ParametersChosenByModel) {
  struct Case {
    std::string model;
    bool detected;  // by name alone
    std::optional<bool> reasoning_override;
    std::string field_override;
    std::string expected_field;
    bool expect_stop_and_temperature;
  };
  const Case cases[] = {
      {"gpt-4o-mini", false, {}, "", "max_tokens", true},
      {"gpt-5", true, {}, "", "max_completion_tokens", false},
      {"gpt-5-mini-2025-08-07", true, {}, "", "max_completion_tokens", false},
      {"o1", true, {}, "", "max_completion_tokens", false},
      {"o3-mini", true, {}, "", "max_completion_tokens", false},
      {"openai/o4-mini", true, {}, "", "max_completion_tokens", false},
      {"Qwen/Qwen3-8B", false, {}, "", "max_tokens", true},
      {"olmo-2-7b", false, {}, "", "max_tokens", true},
      {"gpt-oss-120b", false, {}, "", "max_tokens", true},
      {"gpt-5", true, false, "", "max_tokens", true},
      {"my-finetune", false, true, "", "max_completion_tokens", false},
      {"gpt-4o", false, {}, "max_completion_tokens", "max_completion_tokens", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model);
    EXPECT_EQ(IsOpenAiReasoningModel(c.model), c.detected);
    ProviderOptions o;
    o.openai_reasoning_model = c.reasoning_override;
    o.openai_max_tokens_field = c.field_override;
    ChatRequest r = ToolConversation();
    r.model = c.model;
    r.temperature = 0.2;
    json b = OpenAiRequestBody(r, ResolveOpenAiDialect(o, "https://api.openai.com/v1", c.model), false);
    EXPECT_EQ(b[c.expected_field], 100);
    EXPECT_EQ(b.contains(c.expected_field == "max_tokens" ? "max_completion_tokens" : "max_tokens"), false);
    EXPECT_EQ(b.contains("stop"), c.expect_stop_and_temperature);
    EXPECT_EQ(b.contains("temperature"), c.expect_stop_and_temperature);
    r.temperature = 1;  // the default is accepted everywhere
    EXPECT_EQ(OpenAiRequestBody(r, ResolveOpenAiDialect(o, "", c.model), false)["temperature"], 1);
  }
}

TEST(OpenAiWireTest, PromptCacheKeyGoesToApiOpenAiComOnly) {
  ProviderOptions o;
  ChatRequest r = ToolConversation();
  r.prompt_cache_key = "core/softmax";
  auto body = [&](const std::string& base_url) {
    return OpenAiRequestBody(r, ResolveOpenAiDialect(o, base_url, r.model), false);
  };
  EXPECT_EQ(body("https://api.openai.com/v1").value("prompt_cache_key", ""), "core/softmax");
  // vLLM, SGLang and other servers may warn about or refuse a field they do not know.
  EXPECT_FALSE(body("http://127.0.0.1:8000/v1").contains("prompt_cache_key"));
  EXPECT_FALSE(body("https://api.deepseek.com/v1").contains("prompt_cache_key"));
  r.prompt_cache = false;
  EXPECT_FALSE(body("https://api.openai.com/v1").contains("prompt_cache_key"));
  r.prompt_cache = true;
  r.prompt_cache_key.clear();
  EXPECT_FALSE(body("https://api.openai.com/v1").contains("prompt_cache_key"));
}

TEST(OpenAiWireTest, ReasoningRecordedAndSentBackWhereRequired) {
  HttpResult http;
  http.status = 200;
  http.body = R"({"id":"c","model":"deepseek-reasoner","choices":[{"index":0,"message":{"role":"assistant",
    "content":"","reasoning_content":"I should compile first.","tool_calls":[{"id":"call_1","type":"function",
    "function":{"name":"run","arguments":"{\"source\":\"k\"}"}}]},"finish_reason":"tool_calls"}],
    "usage":{"prompt_tokens":100,"completion_tokens":50,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36,
    "completion_tokens_details":{"reasoning_tokens":40}}})";
  Attempt a = OpenAiAttempt(http, 0, {});
  ASSERT_TRUE(a.response.ok()) << a.response.error.message;
  EXPECT_EQ(a.response.message.reasoning, "I should compile first.");
  EXPECT_EQ(a.response.usage.reasoning_tokens, 40);
  EXPECT_EQ(a.response.usage.cache_read_tokens, 64);
  EXPECT_EQ(a.response.usage.input_tokens, 36);

  http.body = R"({"choices":[{"message":{"role":"assistant","content":"x","reasoning":"via OpenRouter"},
    "finish_reason":"stop"}]})";
  EXPECT_EQ(OpenAiAttempt(http, 0, {}).response.message.reasoning, "via OpenRouter");

  Message plain = Message::Assistant("answer");
  plain.reasoning = "thought about it";
  Message tool_turn = a.response.message;
  Message silent_tool_turn = Message::Assistant("", {ToolCall{"call_2", "run", json::object()}});
  ChatRequest r;
  r.model = "deepseek-reasoner";
  r.messages = {Message::User("u"),
                plain,
                Message::User("again"),
                tool_turn,
                Message::ToolResult("call_1", "ok"),
                silent_tool_turn,
                Message::ToolResult("call_2", "ok")};
  auto sent = [&](ProviderOptions o, const std::string& base_url) {
    return OpenAiRequestBody(r, ResolveOpenAiDialect(o, base_url, r.model), false)["messages"];
  };
  json deepseek = sent({}, "https://api.deepseek.com");
  EXPECT_FALSE(deepseek[1].contains("reasoning_content")) << "turns without tool calls need none";
  EXPECT_EQ(deepseek[3]["reasoning_content"], "I should compile first.");
  EXPECT_EQ(deepseek[5]["reasoning_content"], "") << "DeepSeek wants the field on every tool-call turn";
  json local = sent({}, "http://127.0.0.1:8000/v1");
  EXPECT_FALSE(local[3].contains("reasoning_content")) << "other servers get none unless asked";
  ProviderOptions all;
  all.openai_reasoning_echo = ReasoningEcho::kAll;
  all.openai_reasoning_field = "reasoning";
  json router = sent(all, "https://openrouter.ai/api/v1");
  EXPECT_EQ(router[1]["reasoning"], "thought about it");
  EXPECT_EQ(router[3]["reasoning"], "I should compile first.");
  EXPECT_FALSE(router[3].contains("reasoning_content"));
}

TEST(WireTest, ToolCallsAreToolCallsWhateverTheStopReason) {
  HttpResult http;
  http.status = 200;
  http.body =
      R"({"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function",
    "function":{"name":"submit","arguments":"{}"}}]},"finish_reason":"stop"}]})";
  Attempt o = OpenAiAttempt(http, 0, {});
  EXPECT_EQ(o.response.stop_reason, StopReason::kToolUse);
  EXPECT_EQ(o.response.raw_stop_reason, "stop");
  http.body =
      R"({"content":[{"type":"tool_use","id":"t","name":"submit","input":{}}],"stop_reason":"end_turn"})";
  EXPECT_EQ(AnthropicAttempt(http, 0, {}).response.stop_reason, StopReason::kToolUse);
  http.body =
      R"({"choices":[{"message":{"role":"assistant","content":"cut","tool_calls":[{"id":"c","type":"function",
    "function":{"name":"submit","arguments":"{\"so"}}]},"finish_reason":"length"}]})";
  EXPECT_EQ(OpenAiAttempt(http, 0, {}).response.stop_reason, StopReason::kMaxTokens)
      << "a cut call stays cut";
}

// ---- Streaming ----

TEST(SseTest, ParsesAnyChunkingAndLineEnd) {
  const std::string stream =
      ": keep-alive\r\n\r\nevent: a\r\ndata: {\"x\":1}\r\n\r\nevent:b\ndata:line1\ndata: line2\n\ndata: "
      "[DONE]\r\r";
  for (size_t piece : {size_t{1}, size_t{2}, size_t{7}, stream.size()}) {
    SCOPED_TRACE(piece);
    SseParser parser;
    std::vector<SseEvent> events;
    for (size_t i = 0; i < stream.size(); i += piece)
      parser.Feed(std::string_view(stream).substr(i, piece),
                  [&](SseEvent e) { events.push_back(std::move(e)); });
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].event, "a");
    EXPECT_EQ(events[0].data, R"({"x":1})");
    EXPECT_EQ(events[1].event, "b");
    EXPECT_EQ(events[1].data, "line1\nline2");
    EXPECT_EQ(events[2].event, "");
    EXPECT_EQ(events[2].data, "[DONE]");
  }
}

TEST(StreamTest, IncompleteOrFailedStreamsAreRetryableErrors) {
  HttpResult http;
  http.status = 200;
  auto anthropic = MakeAnthropicStream();
  anthropic->Feed("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n");
  EXPECT_EQ(anthropic->Finish(http, 0, {}).response.error.kind, ErrorKind::kTransport);
  auto overloaded = MakeAnthropicStream();
  overloaded->Feed(
      "event: error\ndata: "
      "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
  Attempt o = overloaded->Finish(http, 0, {});
  EXPECT_EQ(o.response.error.kind, ErrorKind::kOverloaded);
  EXPECT_NE(o.response.error.message.find("stream"), std::string::npos);
  auto openai = MakeOpenAiStream();
  openai->Feed("data: {\"choices\":[{\"delta\":{\"content\":\"par\"}}]}\n\n");
  http.timed_out = true;
  http.transport_error = "no data for 0.3 s (idle timeout)";
  EXPECT_EQ(openai->Finish(http, 0, {}).response.error.kind, ErrorKind::kTimeout);
  auto router = MakeOpenAiStream();
  router->Feed("data: {\"error\":{\"code\":502,\"message\":\"upstream died\"}}\n\n");
  HttpResult ok;
  ok.status = 200;
  ok.streamed = true;
  EXPECT_EQ(router->Finish(ok, 0, {}).response.error.kind, ErrorKind::kServer);
}

TEST(StreamTest, OddlyTypedEventsAreNeverFatal) {
  const char* events[] = {
      "event: message_start\ndata: {\"type\":5,\"message\":[]}\n\n",
      "event: content_block_start\ndata: "
      "{\"type\":\"content_block_start\",\"index\":\"x\",\"content_block\":1}\n\n",
      "event: content_block_start\ndata: "
      "{\"type\":\"content_block_start\",\"index\":99999999,\"content_block\":{}}\n\n",
      "event: content_block_start\ndata: "
      "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":{}}}\n\n",
      "event: content_block_delta\ndata: "
      "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":[1]}}\n\n",
      "event: content_block_delta\ndata: "
      "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":7}}\n\n",
      "event: message_delta\ndata: "
      "{\"type\":\"message_delta\",\"delta\":\"no\",\"usage\":{\"output_tokens\":\"many\"}}\n\n",
      "event: message_stop\ndata: not json\n\n",
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
  };
  auto anthropic = MakeAnthropicStream();
  auto openai = MakeOpenAiStream();
  for (const char* e : events) {
    anthropic->Feed(e);
    openai->Feed(e);
  }
  openai->Feed(
      "data: "
      "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":-1},{\"function\":5},7]},\"finish_reason\":3}]}"
      "\n\n");
  HttpResult http;
  http.status = 200;
  http.streamed = true;
  EXPECT_EQ(anthropic->Finish(http, 0, {}).response.error.kind, ErrorKind::kMalformedResponse);
  EXPECT_NE(openai->Finish(http, 0, {}).response.error.kind, ErrorKind::kNone);
  http.body =
      R"({"type":7,"content":[{"type":3},{"type":"text","text":[1]},{"type":"thinking","signature":2}],"usage":[]})";
  EXPECT_TRUE(AnthropicAttempt(http, 0, {}).response.ok());
}

TEST(StreamTest, WhenToStream) {
  ProviderOptions o;
  ChatRequest r;
  r.model = "claude-sonnet-4-5";
  r.max_tokens = 21333;
  EXPECT_FALSE(ShouldStream(o, r, AnthropicNonStreamingCap(r.model)));
  r.max_tokens = 21334;
  EXPECT_TRUE(ShouldStream(o, r, AnthropicNonStreamingCap(r.model))) << "the SDK refuses a non-streamed call this long";
  EXPECT_TRUE(ShouldStream(o, r));
  r.max_tokens = 8193;
  r.model = "claude-opus-4-1-20250805";
  EXPECT_EQ(AnthropicNonStreamingCap(r.model), 8192);
  EXPECT_TRUE(ShouldStream(o, r, AnthropicNonStreamingCap(r.model))) << "the SDK's lower cap for Opus 4 and 4.1";
  EXPECT_FALSE(ShouldStream(o, r)) << "a provider without its own cap";
  r.model = "claude-opus-4-5";
  EXPECT_EQ(AnthropicNonStreamingCap(r.model), std::nullopt);
  EXPECT_FALSE(ShouldStream(o, r, AnthropicNonStreamingCap(r.model)));
  o.stream = StreamMode::kAlways;
  EXPECT_TRUE(ShouldStream(o, r));
  o.stream = StreamMode::kNever;
  r.max_tokens = 64000;
  EXPECT_FALSE(ShouldStream(o, r, AnthropicNonStreamingCap(r.model)));
}

TEST(WireTest, ModerationNotFoundAndShouldRetry) {
  struct Case {
    int status;
    std::string body;
    bool openai;
    ErrorKind expected;
  };
  const Case cases[] = {
      {403,
       R"({"error":{"code":403,"message":"Input was flagged","metadata":{"reasons":["violence"],"flagged_input":"...","provider_name":"x","model_slug":"y"}}})",
       true, ErrorKind::kModeration},
      {403, R"({"error":{"code":403,"message":"Your request was flagged by moderation"}})", true,
       ErrorKind::kModeration},
      {403, R"({"error":{"message":"Project does not have access to model","type":"invalid_request_error"}})",
       true, ErrorKind::kAuth},
      {404, R"({"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}})", false,
       ErrorKind::kNotFound},
      {404,
       R"({"error":{"message":"The model `gpt-9` does not exist","type":"invalid_request_error","code":"model_not_found"}})",
       true, ErrorKind::kNotFound},
      {200, R"({"error":{"code":429,"message":"Rate limit exceeded upstream"}})", true,
       ErrorKind::kRateLimited},
  };
  for (const Case& c : cases) {
    HttpResult http;
    http.status = c.status;
    http.body = c.body;
    Attempt a = c.openai ? OpenAiAttempt(http, 0, {}) : AnthropicAttempt(http, 0, {});
    EXPECT_EQ(ErrorKindName(a.response.error.kind), std::string(ErrorKindName(c.expected))) << c.body;
  }
  EXPECT_FALSE(IsFatal(ErrorKind::kModeration));
  EXPECT_TRUE(IsFatal(ErrorKind::kNotFound));
  EXPECT_EQ(ParseShouldRetry({{"x-should-retry", "true"}}), true);
  EXPECT_EQ(ParseShouldRetry({{"x-should-retry", "false"}}), false);
  EXPECT_FALSE(ParseShouldRetry({{"x-should-retry", "maybe"}}).has_value());
  EXPECT_FALSE(ParseShouldRetry({}).has_value());
  HttpResult h;
  h.status = 500;
  h.headers = {{"x-should-retry", "false"}};
  EXPECT_EQ(AnthropicAttempt(h, 0, {}).should_retry, false);
  const std::string hint = NotFoundHint("http://h:8000/chat/completions", "qwen", kOpenAiBaseUrlRule);
  EXPECT_NE(hint.find("http://h:8000/chat/completions"), std::string::npos);
  EXPECT_NE(hint.find("/v1"), std::string::npos);
  EXPECT_NE(hint.find("'qwen'"), std::string::npos);
}

}  // namespace
}  // namespace kforge::llm
