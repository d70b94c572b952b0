#include "kforge/llm/chat.h"

#include <gtest/gtest.h>

namespace kforge::llm {
namespace {

using nlohmann::json;

TEST(ChatJsonTest, MessagesRoundTrip) {
  std::vector<Message> messages = {
      Message::System("be brief"),
      Message::User("write relu"),
      Message::Assistant("", {ToolCall{"call_1", "submit", json{{"source", "x"}}}}),
      Message::ToolResult("call_1", "compile error", /*is_error=*/true),
  };
  json j = json::array();
  for (const Message& m : messages) j.push_back(ToJson(m));
  StatusOr<std::vector<Message>> back = MessagesFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 4u);
  EXPECT_EQ((*back)[0].role, Role::kSystem);
  EXPECT_EQ((*back)[2].tool_calls.at(0).name, "submit");
  EXPECT_EQ((*back)[2].tool_calls.at(0).arguments["source"], "x");
  EXPECT_EQ((*back)[3].tool_call_id, "call_1");
  EXPECT_TRUE((*back)[3].is_error);
  EXPECT_EQ(j[2]["tool_calls"][0]["type"], "function");
  EXPECT_EQ(j[2]["tool_calls"][0]["function"]["name"], "submit");
}

TEST(ChatJsonTest, AcceptsOpenAiMessages) {
  json j = json::parse(R"([
    {"role": "assistant", "content": null,
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
    {"role": "assistant", "content": null,
     "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{not json"}}]},
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
  ])");
  StatusOr<std::vector<Message>> m = MessagesFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)[0].tool_calls[0].arguments["a"], 1);
  EXPECT_EQ((*m)[1].tool_calls[0].arguments, json("{not json"));
  EXPECT_EQ((*m)[2].content, "ab");
}

TEST(ChatJsonTest, ErrorsNameThePath) {
  struct Case {
    const char* json;
    const char* expected;
  };
  const Case cases[] = {
      {R"([{"role": "robot", "content": "x"}])", "messages[0]: role: unknown role 'robot'"},
      {R"([{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}])",
       "messages[1]: tool_call_id"},
      {R"([{"role": "assistant", "tool_calls": [{"id": "c"}]}])", "messages[0]: tool_calls[0].function.name"},
  };
  for (const Case& c : cases) {
    StatusOr<std::vector<Message>> m = MessagesFromJson(json::parse(c.json));
    ASSERT_FALSE(m.ok()) << c.json;
    EXPECT_NE(m.status().message().find(c.expected), std::string::npos) << m.status().message();
  }
}

TEST(ChatJsonTest, RequestRoundTripAndKey) {
  ChatRequest r;
  r.model = "claude-sonnet-4-5";
  r.messages = {Message::System("s"), Message::User("u")};
  r.tools = {ToolSpec{"submit", "submit a kernel", json{{"type", "object"}}}};
  r.temperature = 0.5;
  r.stop = {"END"};
  r.tag = "t1";
  StatusOr<ChatRequest> back = ChatRequestFromJson(ToJson(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ToJson(*back), ToJson(r));
  EXPECT_EQ(RequestKey(*back), RequestKey(r));

  ChatRequest retagged = r;
  retagged.tag = "another";
  EXPECT_EQ(RequestKey(retagged), RequestKey(r));
  ChatRequest other_model = r;
  other_model.model = "claude-haiku-4-5";
  EXPECT_NE(RequestKey(other_model), RequestKey(r));
  ChatRequest other_temp = r;
  other_temp.temperature = 0.7;
  EXPECT_NE(RequestKey(other_temp), RequestKey(r));
}

TEST(ChatJsonTest, ResponseRoundTrip) {
  ChatResponse r;
  r.message = Message::Assistant("hi", {ToolCall{"t", "submit", json{{"k", 2}}}});
  r.stop_reason = StopReason::kToolUse;
  r.raw_stop_reason = "tool_use";
  r.usage = {10, 20, 30, 40};
  r.cost_usd = 0.25;
  r.cost_known = true;
  r.error = {ErrorKind::kRateLimited, 429, "slow down"};
  StatusOr<ChatResponse> back = ChatResponseFromJson(ToJson(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->message.tool_calls[0].arguments["k"], 2);
  EXPECT_EQ(back->stop_reason, StopReason::kToolUse);
  EXPECT_EQ(back->usage.cache_write_tokens, 40);
  EXPECT_EQ(back->error.kind, ErrorKind::kRateLimited);
  EXPECT_EQ(back->error.http_status, 429);
  EXPECT_DOUBLE_EQ(back->cost_usd, 0.25);
}

TEST(ChatJsonTest, ErrorKindPolicy) {
  EXPECT_TRUE(IsRetryable(ErrorKind::kOverloaded));
  EXPECT_TRUE(IsRetryable(ErrorKind::kTimeout));
  EXPECT_FALSE(IsRetryable(ErrorKind::kQuota));
  EXPECT_FALSE(IsRetryable(ErrorKind::kMalformedResponse));
  EXPECT_TRUE(IsFatal(ErrorKind::kAuth));
  EXPECT_TRUE(IsFatal(ErrorKind::kBilling));
  EXPECT_FALSE(IsFatal(ErrorKind::kRateLimited));
}

}  // namespace
}  // namespace kforge::llm
