// Streamed replies (server-sent events) and the reasoning round trip, against a real HTTP server on
// 127.0.0.1 that sends what the Anthropic and OpenAI APIs send, in timed chunks.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "fakes/http_server.h"
#include "kforge/llm/client.h"

namespace kforge::llm {
namespace {

using fakes::FakeChunk;
using fakes::FakeHttpServer;
using fakes::FakeReply;
using nlohmann::json;

constexpr const char* kThinking = "Plan: \"tile\" 32x32 \\ then \xc3\xa9 \xf0\x9f\x9a\x80\nend";
constexpr const char* kSignature = "EqQBCkgIARABGAIiQL+/sig==";

std::string Event(const std::string& type, const json& data) {
  return "event: " + type + "\ndata: " + data.dump() + "\n\n";
}

json Delta(int index, const json& delta) {
  return {{"type", "content_block_delta"}, {"index", index}, {"delta", delta}};
}

/// An Anthropic streamed reply: thinking (in two deltas, then its signature), a redacted block,
/// text, and a tool use whose input arrives in pieces.
std::vector<std::string> AnthropicThinkingStream() {
  const std::string thinking = kThinking;
  return {
      Event("message_start", {{"type", "message_start"},
                              {"message",
                               {{"id", "msg_s"},
                                {"type", "message"},
                                {"role", "assistant"},
                                {"model", "claude-sonnet-4-5-20250929"},
                                {"content", json::array()},
                                {"stop_reason", nullptr},
                                {"usage",
                                 {{"input_tokens", 120},
                                  {"output_tokens", 1},
                                  {"cache_read_input_tokens", 1000},
                                  {"cache_creation_input_tokens", 0}}}}}}),
      Event("ping", {{"type", "ping"}}),
      Event("content_block_start",
            {{"type", "content_block_start"},
             {"index", 0},
             {"content_block", {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}}}),
      Event("content_block_delta",
            Delta(0, {{"type", "thinking_delta"}, {"thinking", thinking.substr(0, 9)}})),
      Event("content_block_delta", Delta(0, {{"type", "thinking_delta"}, {"thinking", thinking.substr(9)}})),
      Event("content_block_delta", Delta(0, {{"type", "signature_delta"}, {"signature", kSignature}})),
      Event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}),
      Event("content_block_start",
            {{"type", "content_block_start"},
             {"index", 1},
             {"content_block", {{"type", "redacted_thinking"}, {"data", "EmwKAhgBEgy3va3pzix"}}}}),
      Event("content_block_stop", {{"type", "content_block_stop"}, {"index", 1}}),
      Event("content_block_start", {{"type", "content_block_start"},
                                    {"index", 2},
                                    {"content_block", {{"type", "text"}, {"text", ""}}}}),
      Event("content_block_delta", Delta(2, {{"type", "text_delta"}, {"text", "Submit"}})),
      Event("content_block_delta", Delta(2, {{"type", "text_delta"}, {"text", "ting."}})),
      Event("content_block_stop", {{"type", "content_block_stop"}, {"index", 2}}),
      Event("content_block_start",
            {{"type", "content_block_start"},
             {"index", 3},
             {"content_block",
              {{"type", "tool_use"}, {"id", "toolu_s"}, {"name", "submit"}, {"input", json::object()}}}}),
      Event("content_block_delta", Delta(3, {{"type", "input_json_delta"}, {"partial_json", ""}})),
      Event("content_block_delta", Delta(3, {{"type", "input_json_delta"}, {"partial_json", "{\"sou"}})),
      Event("content_block_delta",
            Delta(3, {{"type", "input_json_delta"}, {"partial_json", "rce\": \"k\"}"}})),
      Event("content_block_stop", {{"type", "content_block_stop"}, {"index", 3}}),
      Event("message_delta", {{"type", "message_delta"},
                              {"delta", {{"stop_reason", "tool_use"}, {"stop_sequence", nullptr}}},
                              {"usage", {{"output_tokens", 321}}}}),
      Event("message_stop", {{"type", "message_stop"}}),
  };
}

/// The blocks of that reply as the API expects them back.
json ExpectedAnthropicBlocks() {
  return json::array(
      {{{"type", "thinking"}, {"thinking", kThinking}, {"signature", kSignature}},
       {{"type", "redacted_thinking"}, {"data", "EmwKAhgBEgy3va3pzix"}},
       {{"type", "text"}, {"text", "Submitting."}},
       {{"type", "tool_use"}, {"id", "toolu_s"}, {"name", "submit"}, {"input", {{"source", "k"}}}}});
}

std::string Chunk(const json& delta, const json& finish = nullptr) {
  json c = {{"id", "chatcmpl-s"},
            {"object", "chat.completion.chunk"},
            {"model", "deepseek-reasoner"},
            {"choices", json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}})}};
  return "data: " + c.dump() + "\n\n";
}

/// An OpenAI-compatible streamed reply with reasoning, two tool calls whose arguments arrive in
/// pieces, finish_reason "stop" (as some servers send with tool calls), and a usage chunk.
std::vector<std::string> OpenAiToolStream() {
  auto call = [](int index, const json& fn, const std::string& id = "") {
    json c = {{"index", index}, {"function", fn}};
    if (!id.empty()) c["id"] = id, c["type"] = "function";
    return json{{"tool_calls", json::array({c})}};
  };
  return {
      Chunk({{"role", "assistant"}, {"content", ""}}),
      Chunk({{"reasoning_content", "Need to "}}),
      Chunk({{"reasoning_content", "compile."}}),
      Chunk(call(0, {{"name", "run"}, {"arguments", ""}}, "call_a")),
      Chunk(call(0, {{"arguments", "{\"sour"}})),
      Chunk(call(0, {{"arguments", "ce\":\"k\"}"}})),
      Chunk(call(1, {{"name", "submit"}, {"arguments", "{}"}}, "call_b")),
      Chunk(json::object(), "stop"),
      "data: " +
          json{{"id", "chatcmpl-s"},
               {"choices", json::array()},
               {"usage",
                {{"prompt_tokens", 50},
                 {"completion_tokens", 30},
                 {"prompt_tokens_details", {{"cached_tokens", 10}}},
                 {"completion_tokens_details", {{"reasoning_tokens", 12}}}}}}
              .dump() +
          "\n\n",
      "data: [DONE]\n\n",
  };
}

ChatRequest StreamRequest(const std::string& model, int max_tokens = 256) {
  ChatRequest r;
  r.model = model;
  r.messages = {Message::System("You write CUDA kernels."), Message::User("write a relu kernel")};
  r.tools = {ToolSpec{"submit", "submit a kernel", json{{"type", "object"}}}};
  r.max_tokens = max_tokens;
  return r;
}

class StreamingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("ANTHROPIC_API_KEY", "sk-ant-stream-test-0123456789", 1);
    setenv("OPENAI_API_KEY", "sk-stream-test-9876543210", 1);
  }

  std::unique_ptr<Client> MakeClient(const std::string& spec, ProviderOptions p, ClientOptions o = {}) {
    p.base_url = server_.url() + (spec == "openai" ? "/v1" : "");
    StatusOr<std::unique_ptr<Provider>> provider = MakeProvider(*ParseProviderSpec(spec), p);
    EXPECT_TRUE(provider.ok()) << provider.status().ToString();
    o.initial_backoff_s = 0.01;
    o.max_backoff_s = 0.02;
    StatusOr<std::unique_ptr<Client>> client = Client::Create(std::move(*provider), std::move(o));
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(*client);
  }

  static ProviderOptions Streamed() {
    ProviderOptions p;
    p.stream = StreamMode::kAlways;
    return p;
  }

  FakeHttpServer server_;
};

TEST_F(StreamingTest, AnthropicThinkingTextAndToolUseAssembledAndEchoedBack) {
  server_.Enqueue(FakeReply::Sse(AnthropicThinkingStream(), /*gap_ms=*/2));
  auto client = MakeClient("anthropic", Streamed());
  ChatRequest first = StreamRequest("claude-sonnet-4-5", 8000);
  first.thinking_budget_tokens = 4000;
  ChatResponse r = client->Complete(first).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  json sent = json::parse(server_.requests().at(0).body);
  EXPECT_EQ(sent["stream"], true);
  EXPECT_EQ(sent["thinking"]["budget_tokens"], 4000);
  EXPECT_EQ(r.message.content, "Submitting.");
  EXPECT_EQ(r.message.reasoning, kThinking);
  ASSERT_EQ(r.message.tool_calls.size(), 1u);
  EXPECT_EQ(r.message.tool_calls[0].arguments, (json{{"source", "k"}}));
  EXPECT_EQ(r.stop_reason, StopReason::kToolUse);
  EXPECT_EQ(r.usage.input_tokens, 120);
  EXPECT_EQ(r.usage.output_tokens, 321);
  EXPECT_EQ(r.usage.cache_read_tokens, 1000);
  EXPECT_EQ(r.id, "msg_s");

  // The next turn carries the blocks back unchanged, in their order.
  server_.Enqueue(
      FakeReply::Sse({Event("message_start", {{"type", "message_start"}, {"message", {{"id", "m2"}}}}),
                      Event("message_stop", {{"type", "message_stop"}})}));
  ChatRequest next = first;
  next.messages.push_back(r.message);
  next.messages.push_back(Message::ToolResult("toolu_s", "compiled"));
  ASSERT_TRUE(client->Complete(next).get().ok());
  const std::string body = server_.requests().at(1).body;
  json echoed = json::parse(body)["messages"][1];
  EXPECT_EQ(echoed["role"], "assistant");
  EXPECT_EQ(echoed["content"], ExpectedAnthropicBlocks());
  EXPECT_NE(body.find(json(kThinking).dump()), std::string::npos) << "the thinking text, byte for byte";
  EXPECT_NE(body.find(std::string("\"signature\":\"") + kSignature + "\""), std::string::npos);
}

TEST_F(StreamingTest, AnthropicWholeReplyThinkingEchoedBack) {
  json reply = {{"id", "msg_w"},
                {"type", "message"},
                {"role", "assistant"},
                {"model", "claude-sonnet-4-5"},
                {"content", ExpectedAnthropicBlocks()},
                {"stop_reason", "tool_use"},
                {"usage", {{"input_tokens", 1}, {"output_tokens", 2}}}};
  server_.Enqueue(FakeReply::Json(200, reply.dump()));
  server_.Enqueue(FakeReply::Json(200, reply.dump()));
  ProviderOptions p;
  p.stream = StreamMode::kNever;
  auto client = MakeClient("anthropic", p);
  ChatRequest first = StreamRequest("claude-sonnet-4-5");
  ChatResponse r = client->Complete(first).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_FALSE(json::parse(server_.requests().at(0).body).contains("stream"));
  ChatRequest next = first;
  next.messages.push_back(r.message);
  next.messages.push_back(Message::ToolResult("toolu_s", "compiled"));
  ASSERT_TRUE(client->Complete(next).get().ok());
  EXPECT_EQ(json::parse(server_.requests().at(1).body)["messages"][1]["content"], reply["content"]);
}

TEST_F(StreamingTest, OpenAiReasoningAndToolCallArgumentsAssembledAndEchoedBack) {
  server_.Enqueue(FakeReply::Sse(OpenAiToolStream(), /*gap_ms=*/2));
  ProviderOptions p = Streamed();
  p.openai_reasoning_echo = ReasoningEcho::kToolCalls;  // as for api.deepseek.com
  auto client = MakeClient("openai", p);
  ChatRequest first = StreamRequest("deepseek-reasoner");
  ChatResponse r = client->Complete(first).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  json sent = json::parse(server_.requests().at(0).body);
  EXPECT_EQ(sent["stream"], true);
  EXPECT_EQ(sent["stream_options"]["include_usage"], true);
  EXPECT_EQ(r.message.reasoning, "Need to compile.");
  ASSERT_EQ(r.message.tool_calls.size(), 2u);
  EXPECT_EQ(r.message.tool_calls[0].id, "call_a");
  EXPECT_EQ(r.message.tool_calls[0].name, "run");
  EXPECT_EQ(r.message.tool_calls[0].arguments, (json{{"source", "k"}}));
  EXPECT_EQ(r.message.tool_calls[1].name, "submit");
  EXPECT_EQ(r.stop_reason, StopReason::kToolUse) << "tool calls with finish_reason stop";
  EXPECT_EQ(r.raw_stop_reason, "stop");
  EXPECT_EQ(r.usage.input_tokens, 40);
  EXPECT_EQ(r.usage.cache_read_tokens, 10);
  EXPECT_EQ(r.usage.output_tokens, 30);
  EXPECT_EQ(r.usage.reasoning_tokens, 12);

  server_.Enqueue(FakeReply::Sse({Chunk({{"content", "done"}}, "stop"), "data: [DONE]\n\n"}));
  ChatRequest next = first;
  next.messages.push_back(r.message);
  next.messages.push_back(Message::ToolResult("call_a", "compiled"));
  next.messages.push_back(Message::ToolResult("call_b", "submitted"));
  ChatResponse second = client->Complete(next).get();
  ASSERT_TRUE(second.ok()) << second.error.message;
  EXPECT_EQ(second.message.content, "done");
  json echoed = json::parse(server_.requests().at(1).body)["messages"][2];
  EXPECT_EQ(echoed["reasoning_content"], "Need to compile.");
  EXPECT_EQ(echoed["tool_calls"][0]["function"]["arguments"], R"({"source":"k"})");
}

TEST_F(StreamingTest, LargeMaxTokensAreStreamedSmallOnesAreNot) {
  for (const std::string spec : {"anthropic", "openai"}) {
    SCOPED_TRACE(spec);
    FakeHttpServer server;
    server.Enqueue(spec == "anthropic" ? FakeReply::Sse(AnthropicThinkingStream())
                                       : FakeReply::Sse(OpenAiToolStream()));
    server.Enqueue(FakeReply::Json(
        200,
        spec == "anthropic"
            ? R"({"content":[{"type":"text","text":"short"}],"stop_reason":"end_turn"})"
            : R"({"choices":[{"message":{"role":"assistant","content":"short"},"finish_reason":"stop"}]})"));
    ProviderOptions p;  // kAuto
    p.base_url = server.url();
    auto client = std::move(*Client::Create(std::move(*MakeProvider(*ParseProviderSpec(spec), p)), {}));
    ChatResponse big = client->Complete(StreamRequest("m", 32000)).get();
    ASSERT_TRUE(big.ok()) << big.error.message;
    EXPECT_EQ(big.stop_reason, StopReason::kToolUse);
    ChatResponse small = client->Complete(StreamRequest("m", 1024)).get();
    ASSERT_TRUE(small.ok()) << small.error.message;
    EXPECT_EQ(small.message.content, "short");
    EXPECT_EQ(json::parse(server.requests().at(0).body).value("stream", false), true);
    EXPECT_FALSE(json::parse(server.requests().at(1).body).contains("stream"));
  }
}

TEST_F(StreamingTest, StallTripsTheIdleTimeoutAndIsRetried) {
  std::vector<std::string> events = AnthropicThinkingStream();
  FakeReply stalled = FakeReply::Sse({events.begin(), events.begin() + 3});
  stalled.chunks.push_back(FakeChunk{5000, events[3]});  // then nothing for 5 s
  server_.Enqueue(stalled);
  ProviderOptions p = Streamed();
  p.idle_timeout_s = 0.3;
  ClientOptions one;
  one.max_attempts = 1;
  {
    auto client = MakeClient("anthropic", p, one);
    ChatResponse r = client->Complete(StreamRequest("claude-sonnet-4-5")).get();
    EXPECT_EQ(r.error.kind, ErrorKind::kTimeout) << r.error.message;
    EXPECT_NE(r.error.message.find("idle timeout"), std::string::npos) << r.error.message;
    EXPECT_LT(r.latency_s, 2.0) << "the stall is noticed after the idle timeout, not at the end";
  }
  server_.Enqueue(stalled);
  server_.Enqueue(FakeReply::Sse(events));
  auto client = MakeClient("anthropic", p);  // default attempts
  ChatResponse retried = client->Complete(StreamRequest("claude-sonnet-4-5")).get();
  ASSERT_TRUE(retried.ok()) << retried.error.message;
  EXPECT_EQ(retried.attempts, 2);
  EXPECT_EQ(retried.message.content, "Submitting.");
}

TEST_F(StreamingTest, AStreamThatKeepsSendingOutlivesTheTotalTimeout) {
  std::vector<std::string> events = AnthropicThinkingStream();
  server_.Enqueue(FakeReply::Sse(events, /*gap_ms=*/60));  // about 1.2 s in all
  ProviderOptions p = Streamed();
  p.timeout_s = 0.3;  // would end a reply that is not streamed
  p.idle_timeout_s = 2.0;
  ClientOptions one;
  one.max_attempts = 1;
  auto client = MakeClient("anthropic", p, one);
  ChatResponse r = client->Complete(StreamRequest("claude-sonnet-4-5")).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_GT(r.latency_s, 0.6);
  EXPECT_EQ(r.message.tool_calls.at(0).arguments["source"], "k");
}

TEST_F(StreamingTest, EndlessPingsEndAtTheStreamTimeout) {
  std::vector<std::string> events = AnthropicThinkingStream();
  FakeReply pings = FakeReply::Sse({events.begin(), events.begin() + 2});
  for (int i = 0; i < 100; ++i) pings.chunks.push_back(FakeChunk{50, Event("ping", {{"type", "ping"}})});
  server_.Enqueue(pings);
  ProviderOptions p = Streamed();
  p.idle_timeout_s = 2.0;  // every ping is a byte: the idle timeout never trips
  p.stream_timeout_s = 0.5;
  ClientOptions one;
  one.max_attempts = 1;
  auto client = MakeClient("anthropic", p, one);
  ChatResponse r = client->Complete(StreamRequest("claude-sonnet-4-5")).get();
  EXPECT_EQ(r.error.kind, ErrorKind::kTimeout) << r.error.message;
  EXPECT_LT(r.latency_s, 3.0) << "ended at the stream timeout, not after 5 s of pings";
}

TEST_F(StreamingTest, AnEndlessLineIsCutAtTheReplySizeCap) {
  // One SSE line that never ends: the reply is cut off at max_reply_bytes, memory stays bounded.
  FakeReply endless = FakeReply::Sse({"data: {\"type\": \"message_start\", \"x\": \""});
  const std::string block(64 * 1024, 'x');
  for (int i = 0; i < 64; ++i) endless.chunks.push_back(FakeChunk{0, block});  // 4 MiB
  server_.Enqueue(endless);
  ProviderOptions p = Streamed();
  p.max_reply_bytes = size_t{1} << 20;
  ClientOptions one;
  one.max_attempts = 1;
  auto client = MakeClient("anthropic", p, one);
  ChatResponse r = client->Complete(StreamRequest("claude-sonnet-4-5")).get();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.message.find("reply larger than 1 MiB"), std::string::npos) << r.error.message;
  // Not streamed: the same cap.
  server_.Enqueue(FakeReply::Json(200, "{\"pad\": \"" + std::string(2u << 20, 'y') + "\"}"));
  ProviderOptions whole;
  whole.max_reply_bytes = size_t{1} << 20;
  auto plain = MakeClient("anthropic", whole, one);
  ChatResponse w = plain->Complete(StreamRequest("claude-sonnet-4-5")).get();
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error.message.find("reply larger than 1 MiB"), std::string::npos) << w.error.message;
}

TEST_F(StreamingTest, CutOrFailingStreamsAreRetried) {
  std::vector<std::string> events = OpenAiToolStream();
  FakeReply cut = FakeReply::Sse({events.begin(), events.begin() + 4});
  cut.drop = true;  // the connection closes in the middle of the reply
  server_.Enqueue(cut);
  server_.Enqueue(FakeReply::Sse(
      {"data: " + json{{"error", {{"code", 502}, {"message", "upstream error"}}}}.dump() + "\n\n"}));
  server_.Enqueue(FakeReply::Sse(events));
  auto client = MakeClient("openai", Streamed());
  ChatResponse r = client->Complete(StreamRequest("m")).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(r.message.tool_calls.size(), 2u);

  server_.Enqueue(FakeReply::Sse({Event(
      "error", {{"type", "error"}, {"error", {{"type", "overloaded_error"}, {"message", "Overloaded"}}}})}));
  server_.Enqueue(FakeReply::Sse(AnthropicThinkingStream()));
  auto anthropic = MakeClient("anthropic", Streamed());
  ChatResponse a = anthropic->Complete(StreamRequest("claude-sonnet-4-5")).get();
  ASSERT_TRUE(a.ok()) << a.error.message;
  EXPECT_EQ(a.attempts, 2);
}

TEST_F(StreamingTest, ErrorStatusOnAStreamedRequestIsClassified) {
  server_.Enqueue(
      FakeReply::Json(429, R"({"type":"error","error":{"type":"rate_limit_error","message":"slow down"}})",
                      {{"retry-after", "0"}}));
  server_.Enqueue(FakeReply::Sse(AnthropicThinkingStream()));
  auto client = MakeClient("anthropic", Streamed());
  ChatResponse r = client->Complete(StreamRequest("claude-sonnet-4-5")).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.attempts, 2);
}

}  // namespace
}  // namespace kforge::llm
