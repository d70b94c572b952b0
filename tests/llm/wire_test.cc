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

}  // namespace
}  // namespace kforge::llm
