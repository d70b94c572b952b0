// The batch provider against a real Message Batches server on 127.0.0.1: a batch is created as its
// window closes, while earlier batches are still being processed, and every batch in flight is polled.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "fakes/http_server.h"
#include "kforge/llm/client.h"

namespace kforge::llm {
namespace {

using fakes::FakeReply;
using nlohmann::json;

/// Message Batches: a batch ends once `hold_until_batches` batches exist (or after 4 s), the most
/// batches in flight at once are counted.
struct HeldBatchServer {
  int hold_until_batches = 2;
  std::mutex mu;
  int created = 0;
  std::map<std::string, std::string> results;  // batch id -> JSON lines
  std::map<std::string, bool> ended;
  int in_flight = 0, most_in_flight = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  fakes::FakeHttpServer server{[this](const fakes::HttpExchange& ex) { return Answer(ex); }};

  FakeReply Answer(const fakes::HttpExchange& ex) {
    const std::string batches = "/v1/messages/batches";
    std::lock_guard<std::mutex> lock(mu);
    if (ex.method == "POST" && ex.path == batches) {
      const std::string id = "msgbatch_" + std::to_string(++created);
      std::string lines;
      const json body = json::parse(ex.body);
      for (const json& r : body["requests"]) {
        json message = {{"id", "msg"},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"model", "claude-test"},
                        {"content", {{{"type", "text"}, {"text", "ok"}}}},
                        {"stop_reason", "end_turn"},
                        {"usage", {{"input_tokens", 10}, {"output_tokens", 2}}}};
        lines += json{{"custom_id", r["custom_id"]}, {"result", {{"type", "succeeded"}, {"message", message}}}}.dump() +
                 "\n";
      }
      results[id] = lines;
      ended[id] = false;
      most_in_flight = std::max(most_in_flight, ++in_flight);
      return FakeReply::Json(200, json{{"id", id}, {"processing_status", "in_progress"}}.dump());
    }
    const std::string rest = ex.path.substr(std::min(ex.path.size(), batches.size() + 1));
    if (size_t slash = rest.find('/'); slash != std::string::npos)
      return FakeReply::Json(200, results[rest.substr(0, slash)]);
    const bool done = created >= hold_until_batches || std::chrono::steady_clock::now() - start > std::chrono::seconds(4);
    if (done && !ended[rest]) {
      ended[rest] = true;
      --in_flight;
    }
    json status = {{"id", rest}, {"processing_status", done ? "ended" : "in_progress"}};
    if (done) status["results_url"] = server.url() + batches + "/" + rest + "/results";
    return FakeReply::Json(200, status.dump());
  }
};

TEST(BatchProviderTest, BatchesOfLaterWindowsAreCreatedWhileEarlierOnesAreInFlight) {
  setenv("ANTHROPIC_API_KEY", "sk-ant-batch-test-0123456789", 1);
  HeldBatchServer batch;
  ProviderOptions p;
  p.base_url = batch.server.url();
  p.batch_api = true;
  p.batch_window_s = 0.05;
  p.batch_poll_s = 0.01;
  auto client = std::move(*Client::Create(std::move(*MakeProvider(*ParseProviderSpec("anthropic"), p)), {}));
  auto request = [](const std::string& text) {
    ChatRequest r;
    r.model = "claude-test";
    r.max_tokens = 64;
    r.messages = {Message::User(text)};
    return r;
  };
  const auto start = std::chrono::steady_clock::now();
  std::future<ChatResponse> first = client->Complete(request("first window"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // its window has closed: a batch of its own
  std::future<ChatResponse> second = client->Complete(request("second window"));
  const ChatResponse one = first.get(), two = second.get();
  ASSERT_TRUE(one.ok()) << one.error.message;
  ASSERT_TRUE(two.ok()) << two.error.message;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(batch.created, 2);
  EXPECT_EQ(batch.most_in_flight, 2) << "the second batch waited for the first to end";
  EXPECT_LT(seconds, 3) << "the first batch ends only once the second exists";
  std::fprintf(stderr, "batches in flight at once: %d (2 windows), %.2f s\n", batch.most_in_flight, seconds);
}

}  // namespace
}  // namespace kforge::llm
