// Every billed token is counted, against a real HTTP server on 127.0.0.1 that answers as the Anthropic
// and OpenAI APIs do: a stream cut after message_start keeps its input usage, an OpenAI stream with a
// finish_reason but neither its usage chunk nor [DONE] is not a reply, a reply or timeout without a
// usage has an unknown cost whose worst case counts against the cap, and the cap waits for the
// reservations of requests in flight instead of refusing the next request.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <vector>

#include "fakes/http_server.h"
#include "kforge/llm/client.h"

namespace kforge::llm {
namespace {

using fakes::FakeHttpServer;
using fakes::FakeReply;
using nlohmann::json;

// claude-sonnet-4-5 and gpt-4o at $3 in / $15 out per million tokens.
constexpr double kInput = 3e-6, kOutput = 15e-6;

std::string Event(const std::string& type, const json& data) {
  return "event: " + type + "\ndata: " + data.dump() + "\n\n";
}

std::vector<std::string> AnthropicStreamStart() {
  return {Event("message_start",
                {{"type", "message_start"},
                 {"message",
                  {{"id", "msg_cut"},
                   {"type", "message"},
                   {"role", "assistant"},
                   {"model", "claude-sonnet-4-5"},
                   {"content", json::array()},
                   {"usage", {{"input_tokens", 2000}, {"output_tokens", 1}}}}}}),
          Event("content_block_start", {{"type", "content_block_start"},
                                        {"index", 0},
                                        {"content_block", {{"type", "text"}, {"text", ""}}}}),
          Event("content_block_delta", {{"type", "content_block_delta"},
                                        {"index", 0},
                                        {"delta", {{"type", "text_delta"}, {"text", "__global__ void k("}}}})};
}

std::string OpenAiChunk(const json& delta, const json& finish = nullptr) {
  return "data: " +
         json{{"id", "chatcmpl-b"},
              {"object", "chat.completion.chunk"},
              {"model", "gpt-4o"},
              {"choices", json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}})}}
             .dump() +
         "\n\n";
}

std::string OpenAiUsageChunk() {
  return "data: " +
         json{{"id", "chatcmpl-b"}, {"choices", json::array()}, {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 40}}}}
             .dump() +
         "\n\n";
}

std::string OpenAiWhole(bool with_usage) {
  json body = {{"id", "chatcmpl-w"},
               {"object", "chat.completion"},
               {"model", "gpt-4o"},
               {"choices", json::array({{{"index", 0},
                                         {"message", {{"role", "assistant"}, {"content", "ok"}}},
                                         {"finish_reason", "stop"}}})}};
  if (with_usage) body["usage"] = {{"prompt_tokens", 1000}, {"completion_tokens", 40}};
  return body.dump();
}

ChatRequest BillRequest(const std::string& model, int max_tokens = 1000) {
  ChatRequest r;
  r.model = model;
  r.messages = {Message::System("You write CUDA kernels."), Message::User("write a relu kernel")};
  r.max_tokens = max_tokens;
  return r;
}

class BillingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("ANTHROPIC_API_KEY", "sk-ant-bill-test-0123456789", 1);
    setenv("OPENAI_API_KEY", "sk-bill-test-9876543210", 1);
  }

  std::unique_ptr<Client> MakeClient(const std::string& spec, ClientOptions o = {}, bool stream = false,
                                     double timeout_s = 10) {
    ProviderOptions p;
    p.base_url = server_.url() + (spec == "openai" ? "/v1" : "");
    p.stream = stream ? StreamMode::kAlways : StreamMode::kNever;
    p.timeout_s = timeout_s;
    p.max_in_flight = o.max_in_flight;
    StatusOr<std::unique_ptr<Provider>> provider = MakeProvider(*ParseProviderSpec(spec), p);
    EXPECT_TRUE(provider.ok()) << provider.status().ToString();
    o.initial_backoff_s = 0.01;
    o.max_backoff_s = 0.02;
    o.prices.Set("claude-sonnet-4-5", ModelPrice{3, 15, 0.3, 3.75});
    o.prices.Set("gpt-4o", ModelPrice{3, 15, 1.5, 3});
    StatusOr<std::unique_ptr<Client>> client = Client::Create(std::move(*provider), std::move(o));
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(*client);
  }

  FakeHttpServer server_;
};

TEST_F(BillingTest, AnAnthropicStreamCutAfterMessageStartKeepsItsInputUsage) {
  FakeReply cut = FakeReply::Sse(AnthropicStreamStart());
  cut.drop = true;
  server_.Enqueue(cut);
  ClientOptions o;
  o.max_attempts = 1;
  auto client = MakeClient("anthropic", o, /*stream=*/true);
  ChatResponse r = client->Complete(BillRequest("claude-sonnet-4-5")).get();
  ASSERT_EQ(r.error.kind, ErrorKind::kTransport) << r.error.message;
  EXPECT_EQ(r.usage.input_tokens, 2000);
  EXPECT_NEAR(r.cost_usd, 2000 * kInput + 1 * kOutput, 1e-12);
  EXPECT_FALSE(r.cost_known) << "its output until the cut is not known";
  EXPECT_NEAR(client->stats().cost_usd, r.cost_usd, 1e-12);
  EXPECT_EQ(client->stats().usage_missing, 1);
}

TEST_F(BillingTest, ACutAttemptThatIsRetriedStillCountsInTheReply) {
  FakeReply cut = FakeReply::Sse(AnthropicStreamStart());
  cut.drop = true;
  server_.Enqueue(cut);
  std::vector<std::string> whole = AnthropicStreamStart();
  whole.push_back(Event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}));
  whole.push_back(Event("message_delta", {{"type", "message_delta"},
                                          {"delta", {{"stop_reason", "end_turn"}}},
                                          {"usage", {{"output_tokens", 30}}}}));
  whole.push_back(Event("message_stop", {{"type", "message_stop"}}));
  server_.Enqueue(FakeReply::Sse(whole));
  auto client = MakeClient("anthropic", {}, /*stream=*/true);
  ChatResponse r = client->Complete(BillRequest("claude-sonnet-4-5")).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(r.usage.input_tokens, 4000) << "both attempts were billed their prompt";
  EXPECT_NEAR(r.cost_usd, 4000 * kInput + 31 * kOutput, 1e-12);
  EXPECT_NEAR(client->stats().cost_usd, r.cost_usd, 1e-12);
}

TEST_F(BillingTest, AnOpenAiStreamWithAFinishButNoUsageNorDoneIsNotAReply) {
  FakeReply cut = FakeReply::Sse({OpenAiChunk({{"role", "assistant"}, {"content", "__global__ void k() {}"}}),
                                  OpenAiChunk(json::object(), "stop")});
  cut.drop = true;  // no usage chunk, no [DONE]
  server_.Enqueue(cut);
  ClientOptions o;
  o.max_attempts = 1;
  auto client = MakeClient("openai", o, /*stream=*/true);
  ChatResponse r = client->Complete(BillRequest("gpt-4o")).get();
  EXPECT_EQ(r.error.kind, ErrorKind::kTransport) << "accepted as complete";
  EXPECT_FALSE(r.cost_known);
  EXPECT_EQ(client->stats().usage_missing, 1);
  EXPECT_GT(client->stats().usage_missing_worst_usd, 1000 * kOutput) << "its worst case is counted";

  // The same stream with its usage chunk and [DONE] is a reply with a known cost.
  server_.Enqueue(FakeReply::Sse({OpenAiChunk({{"role", "assistant"}, {"content", "__global__ void k() {}"}}),
                                  OpenAiChunk(json::object(), "stop"), OpenAiUsageChunk(), "data: [DONE]\n\n"}));
  ChatResponse whole = client->Complete(BillRequest("gpt-4o")).get();
  ASSERT_TRUE(whole.ok()) << whole.error.message;
  EXPECT_TRUE(whole.cost_known);
  EXPECT_NEAR(whole.cost_usd, 1000 * kInput + 40 * kOutput, 1e-12);
}

TEST_F(BillingTest, AReplyWithoutUsageHasAnUnknownCostThatCountsAgainstTheCap) {
  server_.Enqueue(FakeReply::Json(200, OpenAiWhole(/*with_usage=*/false)));
  ClientOptions o;
  o.max_in_flight = 1;
  // A worst case is about 1000 * $15/M = $0.015: the cap holds two, and the reply without a usage
  // takes one of them for good.
  o.max_cost_usd = 0.025;
  auto client = MakeClient("openai", o);
  ChatResponse first = client->Complete(BillRequest("gpt-4o")).get();
  ASSERT_TRUE(first.ok()) << first.error.message;
  EXPECT_FALSE(first.cost_known) << "a reply without usage was billed an unknown amount";
  EXPECT_EQ(first.cost_usd, 0);
  server_.Enqueue(FakeReply::Json(200, OpenAiWhole(/*with_usage=*/true)));
  ChatResponse second = client->Complete(BillRequest("gpt-4o")).get();
  EXPECT_EQ(second.error.kind, ErrorKind::kAborted) << "the unknown spend was counted as $0";
  EXPECT_NE(second.error.message.find("replies without a usage"), std::string::npos) << second.error.message;
  EXPECT_EQ(server_.request_count(), 1);
}

TEST_F(BillingTest, ATimedOutAttemptCountsItsWorstCase) {
  FakeReply slow = FakeReply::Json(200, OpenAiWhole(true));
  slow.delay_ms = 2000;
  server_.Enqueue(slow);
  ClientOptions o;
  o.max_attempts = 1;
  auto client = MakeClient("openai", o, /*stream=*/false, /*timeout_s=*/0.2);
  ChatResponse r = client->Complete(BillRequest("gpt-4o")).get();
  ASSERT_EQ(r.error.kind, ErrorKind::kTimeout) << r.error.message;
  EXPECT_FALSE(r.cost_known);
  EXPECT_EQ(client->stats().usage_missing, 1);
}

TEST_F(BillingTest, AnAbsurdUsageIsClampedToTheRequestsMaxTokens) {
  json reply = json::parse(OpenAiWhole(true));
  reply["usage"]["completion_tokens"] = 1000000000000LL;
  server_.Enqueue(FakeReply::Json(200, reply.dump()));
  auto client = MakeClient("openai");
  ChatResponse r = client->Complete(BillRequest("gpt-4o", /*max_tokens=*/500)).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.usage.output_tokens, 500);
  EXPECT_NEAR(r.cost_usd, 1000 * kInput + 500 * kOutput, 1e-12);
}

TEST_F(BillingTest, TheCapWaitsForReservationsInsteadOfStopping) {
  FakeHttpServer server([](const fakes::HttpExchange&) {
    FakeReply reply = FakeReply::Json(200, OpenAiWhole(true));
    reply.delay_ms = 30;
    return reply;
  });
  ProviderOptions p;
  p.base_url = server.url() + "/v1";
  p.stream = StreamMode::kNever;
  ClientOptions o;
  o.max_in_flight = 8;
  o.initial_backoff_s = 0.01;
  o.prices.Set("gpt-4o", ModelPrice{3, 15, 1.5, 3});
  // Each reply costs 1000 * 3 + 40 * 15 = $0.0036; each request reserves ~$0.0151 (1000 output
  // tokens and its prompt). The cap holds 3 worst cases at once, and 8 replies.
  o.max_cost_usd = 0.05;
  auto client = std::move(*Client::Create(std::move(*MakeProvider(*ParseProviderSpec("openai"), p)), o));
  std::vector<ChatRequest> batch(8, BillRequest("gpt-4o"));
  std::vector<ChatResponse> out = client->CompleteAll(batch);
  int done = 0;
  for (const ChatResponse& r : out) done += r.ok();
  EXPECT_EQ(done, 8) << "a request that did not fit waited for reservations to come back";
  EXPECT_FALSE(client->budget_reached());
  EXPECT_LE(client->stats().cost_usd, 0.05);
  // Eight more: the cap ends them once nothing is in flight and the next worst case would pass it.
  std::vector<ChatResponse> more = client->CompleteAll(batch);
  int refused = 0;
  for (const ChatResponse& r : more) {
    if (r.ok()) continue;
    ++refused;
    EXPECT_EQ(r.error.kind, ErrorKind::kAborted);
    EXPECT_NE(r.error.message.find("nothing in flight, and this request reserves its worst case, $0.015"),
              std::string::npos)
        << r.error.message;
  }
  EXPECT_GT(refused, 0);
  EXPECT_TRUE(client->budget_reached());
  EXPECT_LE(client->stats().cost_usd, 0.05 + 1e-12);
  EXPECT_EQ(server.request_count(), 16 - refused);
}

}  // namespace
}  // namespace kforge::llm
