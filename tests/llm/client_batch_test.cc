// Client for batch work against a real HTTP server on 127.0.0.1: an outage ridden out with scaled
// time, a sustained outage and a storm of identical 400s stopping the batch, a spending cap that
// holds with requests in flight, and a response cache that keeps samples apart.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>

#include "fakes/http_server.h"
#include "kforge/llm/client.h"

namespace kforge::llm {
namespace {

using fakes::FakeHttpServer;
using fakes::FakeReply;
using nlohmann::json;

std::string BatchAnthropicText(const std::string& text) {
  return json{{"id", "msg_01"},
              {"type", "message"},
              {"role", "assistant"},
              {"model", "claude-sonnet-4-5"},
              {"content", json::array({{{"type", "text"}, {"text", text}}})},
              {"stop_reason", "end_turn"},
              {"usage", {{"input_tokens", 100}, {"output_tokens", 50}}}}
      .dump();
}

std::string BatchAnthropicError(const std::string& type, const std::string& message) {
  return json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}}.dump();
}

ChatRequest BatchRequest(const std::string& text) {
  ChatRequest r;
  r.model = "claude-sonnet-4-5";
  r.messages = {Message::System("You write CUDA kernels."), Message::User(text)};
  r.max_tokens = 256;
  return r;
}

class ClientBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789", 1);
    dir_ = std::filesystem::temp_directory_path() /
           ("kforge_client_batch_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Client> MakeClient(FakeHttpServer& server, ClientOptions options) {
    ProviderOptions p;
    p.base_url = server.url();
    p.max_in_flight = options.max_in_flight;
    auto provider = MakeProvider(*ParseProviderSpec("anthropic"), p);
    EXPECT_TRUE(provider.ok()) << provider.status().ToString();
    options.prices.Set("claude-sonnet-4-5", ModelPrice{3, 15, 0.3, 3.75});
    auto client = Client::Create(std::move(*provider), std::move(options));
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(*client);
  }

  std::filesystem::path dir_;
};

/// Batch settings at a thousandth of real time: 2 s first backoff up to 60 s, outage after 10 min.
ClientOptions BatchOptions() {
  ClientOptions o;
  o.time_scale = 0.001;
  o.max_attempts = 30;
  o.initial_backoff_s = 2;
  o.max_backoff_s = 60;
  o.max_retry_after_s = 600;
  o.outage_s = 600;
  o.max_identical_errors = 5;
  return o;
}

TEST_F(ClientBatchTest, AnOutageOfTwoMinutesLosesNoRequest) {
  // 529s and 503s (with retry-after) for two simulated minutes, then answers.
  // The outage starts with the first request (so that a loaded machine does not shorten it).
  std::once_flag first;
  std::chrono::steady_clock::time_point start;
  std::atomic<int> failed{0};
  FakeHttpServer server([&](const fakes::HttpExchange&) {
    std::call_once(first, [&] { start = std::chrono::steady_clock::now(); });
    if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(120)) {
      int n = failed++;
      if (n % 2) return FakeReply::Json(503, R"({"error":{"message":"unavailable"}})", {{"retry-after", "5"}});
      return FakeReply::Json(529, BatchAnthropicError("overloaded_error", "Overloaded"));
    }
    return FakeReply::Json(200, BatchAnthropicText("ok"));
  });
  auto client = MakeClient(server, BatchOptions());
  std::vector<ChatRequest> batch;
  for (int i = 0; i < 12; ++i) batch.push_back(BatchRequest("task " + std::to_string(i)));
  std::vector<ChatResponse> out = client->CompleteAll(batch);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_TRUE(out[i].ok()) << i << ": " << out[i].error.message;
  EXPECT_GT(failed.load(), 1) << "the outage was seen";
  EXPECT_GE(client->stats().retries, failed.load());
  EXPECT_TRUE(client->fatal_status().ok()) << client->fatal_status().message();
}

TEST_F(ClientBatchTest, ASustainedOutageStopsTheBatchWithTheError) {
  FakeHttpServer server([](const fakes::HttpExchange&) {
    return FakeReply::Json(529, BatchAnthropicError("overloaded_error", "Overloaded"));
  });
  ClientOptions o = BatchOptions();
  o.outage_s = 60;  // 60 ms here
  o.max_attempts = 100;
  o.max_in_flight = 2;
  auto client = MakeClient(server, o);
  std::vector<ChatRequest> batch;
  for (int i = 0; i < 6; ++i) batch.push_back(BatchRequest("task " + std::to_string(i)));
  std::vector<ChatResponse> out = client->CompleteAll(batch);
  Status fatal = client->fatal_status();
  ASSERT_FALSE(fatal.ok());
  EXPECT_NE(fatal.message().find("transient errors for"), std::string::npos) << fatal.message();
  EXPECT_NE(fatal.message().find("overloaded"), std::string::npos) << fatal.message();
  for (const ChatResponse& r : out) EXPECT_FALSE(r.ok());
  EXPECT_EQ(client->Complete(BatchRequest("later")).get().error.kind, ErrorKind::kAborted);
}

TEST_F(ClientBatchTest, TheOutageBreakerTripsOnTimeNotAtTheNextRetry) {
  FakeHttpServer server([](const fakes::HttpExchange&) {
    return FakeReply::Json(529, BatchAnthropicError("overloaded_error", "Overloaded"));
  });
  ClientOptions o;
  o.outage_s = 0.5;
  o.max_attempts = 100;
  o.initial_backoff_s = 2;  // the first retry would come at 1.5 to 2 s
  o.max_backoff_s = 4;
  auto client = MakeClient(server, o);
  const auto start = std::chrono::steady_clock::now();
  ChatResponse r = client->Complete(BatchRequest("task")).get();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(client->fatal_status().ok());
  EXPECT_LT(seconds, 1.2) << "tripped at the retry, a backoff late";
  EXPECT_EQ(server.request_count(), 1);
}

TEST_F(ClientBatchTest, FiveIdenticalBadRequestsStopTheBatchAndDifferentOnesDoNot) {
  {
    FakeHttpServer server([](const fakes::HttpExchange&) {
      return FakeReply::Json(400, BatchAnthropicError("invalid_request_error", "temperature: not supported"));
    });
    ClientOptions o = BatchOptions();
    o.max_in_flight = 1;
    auto client = MakeClient(server, o);
    std::vector<ChatRequest> batch;
    for (int i = 0; i < 9; ++i) batch.push_back(BatchRequest("task " + std::to_string(i)));
    std::vector<ChatResponse> out = client->CompleteAll(batch);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(out[i].error.kind, ErrorKind::kInvalidRequest) << i;
    for (int i = 5; i < 9; ++i) EXPECT_EQ(out[i].error.kind, ErrorKind::kAborted) << i;
    EXPECT_EQ(server.request_count(), 5) << "400s are not retried, and the sixth is not sent";
    Status fatal = client->fatal_status();
    ASSERT_FALSE(fatal.ok());
    EXPECT_NE(fatal.message().find("5 requests in a row"), std::string::npos) << fatal.message();
    EXPECT_NE(fatal.message().find("temperature: not supported"), std::string::npos) << fatal.message();
  }
  {
    // The same error, each naming its own request id: the same error all the same.
    std::atomic<int> n{0};
    FakeHttpServer server([&](const fakes::HttpExchange&) {
      return FakeReply::Json(400, BatchAnthropicError("invalid_request_error",
                                                      "temperature: not supported (request_id: req_011CSHoEeqs" +
                                                          std::to_string(1000 + n++) + "Fy)"));
    });
    ClientOptions o = BatchOptions();
    o.max_in_flight = 1;
    auto client = MakeClient(server, o);
    std::vector<ChatRequest> batch;
    for (int i = 0; i < 9; ++i) batch.push_back(BatchRequest("task " + std::to_string(i)));
    client->CompleteAll(batch);
    EXPECT_EQ(server.request_count(), 5);
    EXPECT_FALSE(client->fatal_status().ok());
  }
  {
    // Each request wrong in its own way (a prompt too long for the model): the batch goes on.
    std::atomic<int> n{0};
    FakeHttpServer server([&](const fakes::HttpExchange&) {
      return FakeReply::Json(
          400, BatchAnthropicError("invalid_request_error", "prompt is too long: " + std::to_string(200001 + n++)));
    });
    ClientOptions o = BatchOptions();
    o.max_in_flight = 1;
    auto client = MakeClient(server, o);
    std::vector<ChatRequest> batch;
    for (int i = 0; i < 7; ++i) batch.push_back(BatchRequest("task " + std::to_string(i)));
    client->CompleteAll(batch);
    EXPECT_EQ(server.request_count(), 7);
    EXPECT_TRUE(client->fatal_status().ok()) << client->fatal_status().message();
  }
}

TEST_F(ClientBatchTest, TheSpendingCapHoldsWithRequestsInFlight) {
  FakeHttpServer server([](const fakes::HttpExchange&) {
    FakeReply reply = FakeReply::Json(200, BatchAnthropicText("ok"));
    reply.delay_ms = 20;
    return reply;
  });
  ClientOptions o;
  o.max_in_flight = 16;
  o.max_cost_usd = 0.02;
  o.spent_before_usd = 0.005;  // an earlier invocation on the same run folder
  auto client = MakeClient(server, o);
  std::vector<ChatRequest> batch;
  for (int i = 0; i < 40; ++i) batch.push_back(BatchRequest("task " + std::to_string(i)));
  std::vector<ChatResponse> out = client->CompleteAll(batch);
  int sent = 0;
  for (const ChatResponse& r : out) sent += r.ok();
  // Each reply costs 100 * 3 + 50 * 15 = 1050 micro-dollars; each request reserves its worst case
  // (256 output tokens at 15 plus its input) before it is sent, so the cap is never passed.
  EXPECT_TRUE(client->budget_reached());
  EXPECT_GT(sent, 0);
  EXPECT_LE(0.005 + client->stats().cost_usd, 0.02 + 1e-12) << sent << " sent";
  EXPECT_EQ(server.request_count(), sent);
  EXPECT_NEAR(client->stats().cost_usd, sent * 0.00105, 1e-9);
}

TEST_F(ClientBatchTest, TheCacheKeepsSamplesApartAndTurnsOfOneSampleTogether) {
  std::atomic<int> n{0};
  FakeHttpServer server([&](const fakes::HttpExchange&) {
    return FakeReply::Json(200, BatchAnthropicText("reply " + std::to_string(n++)));
  });
  ClientOptions o;
  o.cache_dir = (dir_ / "cache").string();
  auto client = MakeClient(server, o);
  ChatRequest sample0 = BatchRequest("same prompt");
  sample0.cache_scope = "sample 0 turn 1";
  ChatRequest sample1 = sample0;
  sample1.cache_scope = "sample 1 turn 1";
  ChatResponse a = client->Complete(sample0).get();
  ChatResponse b = client->Complete(sample1).get();
  ChatResponse again = client->Complete(sample0).get();
  ASSERT_TRUE(a.ok() && b.ok() && again.ok());
  EXPECT_NE(a.message.content, b.message.content) << "two samples, two replies";
  EXPECT_EQ(again.message.content, a.message.content);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(server.request_count(), 2);
  EXPECT_EQ(again.cost_usd, 0) << "a reply from the cache was paid by the run that stored it";
  EXPECT_TRUE(again.cost_known);
  EXPECT_NEAR(client->stats().cost_usd, a.cost_usd + b.cost_usd, 1e-12);
}

}  // namespace
}  // namespace kforge::llm
