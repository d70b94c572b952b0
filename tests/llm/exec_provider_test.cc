#include <gtest/gtest.h>

#include "kforge/llm/client.h"

namespace kforge::llm {
namespace {

ChatResponse RunExec(const std::string& command) {
  ProviderOptions p;
  p.timeout_s = 10;
  StatusOr<std::unique_ptr<Provider>> provider = MakeProvider(*ParseProviderSpec("exec:" + command), p);
  EXPECT_TRUE(provider.ok());
  ClientOptions o;
  o.max_attempts = 1;
  auto client = std::move(*Client::Create(std::move(*provider), o));
  ChatRequest r;
  r.model = "local";
  r.messages = {Message::User("hello from stdin")};
  return client->Complete(r).get();
}

TEST(ExecProviderTest, RequestOnStdinPlainTextReply) {
  // The command sees the canonical request and answers with the user's text, uppercased.
  ChatResponse r = RunExec("grep -o 'hello from stdin' | tr a-z A-Z");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.message.content, "HELLO FROM STDIN\n");
  EXPECT_EQ(r.stop_reason, StopReason::kEndTurn);
}

TEST(ExecProviderTest, CanonicalAndOpenAiReplies) {
  ChatResponse canonical = RunExec(
      R"(cat >/dev/null; echo '{"message":{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"submit","arguments":{"x":1}}}]},"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":4}}')");
  ASSERT_TRUE(canonical.ok()) << canonical.error.message;
  EXPECT_EQ(canonical.message.tool_calls.at(0).arguments["x"], 1);
  EXPECT_EQ(canonical.usage.output_tokens, 4);
  ChatResponse openai = RunExec(
      R"(cat >/dev/null; echo '{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"length"}]}')");
  ASSERT_TRUE(openai.ok()) << openai.error.message;
  EXPECT_EQ(openai.message.content, "hi");
  EXPECT_EQ(openai.stop_reason, StopReason::kMaxTokens);
}

TEST(ExecProviderTest, FailuresAreData) {
  ChatResponse failed = RunExec("echo broken >&2; exit 3");
  EXPECT_EQ(failed.error.kind, ErrorKind::kExecFailed);
  EXPECT_NE(failed.error.message.find("exited with status 3"), std::string::npos) << failed.error.message;
  EXPECT_NE(failed.error.message.find("broken"), std::string::npos) << failed.error.message;
  // Exits without reading stdin: must not kill us with SIGPIPE.
  ChatResponse early = RunExec("exit 0");
  EXPECT_TRUE(early.ok()) << early.error.message;
}

}  // namespace
}  // namespace kforge::llm
