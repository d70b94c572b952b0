#include "kforge/llm/chat.h"

#include <gtest/gtest.h>

namespace kforge::llm {
namespace {

using nlohmann::json;

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
