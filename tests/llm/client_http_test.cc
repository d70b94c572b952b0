// Client + HTTP providers against a real HTTP server on 127.0.0.1 that replays what the Anthropic
// and OpenAI APIs send.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fakes/http_server.h"
#include "kforge/llm/client.h"

namespace kforge::llm {
namespace {

using fakes::FakeHttpServer;
using fakes::FakeReply;
using nlohmann::json;

constexpr const char* kAnthropicKey = "sk-ant-test-SECRET-0123456789";
constexpr const char* kOpenAiKey = "sk-test-SECRET-9876543210";

std::string AnthropicText(const std::string& text, const std::string& stop = "end_turn") {
  return json{{"id", "msg_01"},
              {"type", "message"},
              {"role", "assistant"},
              {"model", "claude-sonnet-4-5-20250929"},
              {"content", json::array({{{"type", "text"}, {"text", text}}})},
              {"stop_reason", stop},
              {"stop_sequence", nullptr},
              {"usage",
               {{"input_tokens", 100},
                {"output_tokens", 50},
                {"cache_read_input_tokens", 1000},
                {"cache_creation_input_tokens", 0}}}}
      .dump();
}

std::string AnthropicToolUse() {
  return R"({"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
    "content":[{"type":"text","text":"Submitting."},
               {"type":"tool_use","id":"toolu_01A","name":"submit","input":{"source":"extern \"C\" __global__ void k(){}"}}],
    "stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":20}})";
}

std::string AnthropicError(const std::string& type, const std::string& message) {
  return json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}}.dump();
}

std::string OpenAiText(const std::string& text, const std::string& finish = "stop") {
  return json{{"id", "chatcmpl-1"},
              {"object", "chat.completion"},
              {"model", "gpt-4o-mini"},
              {"choices", json::array({{{"index", 0},
                                        {"message", {{"role", "assistant"}, {"content", text}}},
                                        {"finish_reason", finish}}})},
              {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 100}, {"total_tokens", 1100}}}}
      .dump();
}

std::string OpenAiToolCall() {
  return R"({"id":"chatcmpl-2","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,
    "message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function",
    "function":{"name":"submit","arguments":"{\"source\":\"x\"}"}}]},"finish_reason":"tool_calls"}],
    "usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}})";
}

ChatRequest Request(const std::string& model, const std::string& text = "write a relu kernel") {
  ChatRequest r;
  r.model = model;
  r.messages = {Message::System("You write CUDA kernels."), Message::User(text)};
  r.tools = {ToolSpec{"submit", "submit a kernel", json{{"type", "object"}}}};
  r.max_tokens = 256;
  return r;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ClientHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("ANTHROPIC_API_KEY", kAnthropicKey, 1);
    setenv("OPENAI_API_KEY", kOpenAiKey, 1);
    dir_ = std::filesystem::temp_directory_path() /
           ("kforge_llm_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Client> MakeClient(const std::string& spec, ClientOptions options = {},
                                     double timeout_s = 10) {
    ProviderOptions p;
    p.base_url = server_.url() + (spec == "openai" ? "/v1" : "");
    p.timeout_s = timeout_s;
    p.max_in_flight = options.max_in_flight;
    StatusOr<std::unique_ptr<Provider>> provider = MakeProvider(*ParseProviderSpec(spec), p);
    EXPECT_TRUE(provider.ok()) << provider.status().ToString();
    options.initial_backoff_s = 0.01;
    options.max_backoff_s = 0.05;
    if (options.prices.Find("claude-sonnet-4-5") == std::nullopt)
      options.prices.Set("claude-sonnet-4-5", ModelPrice{3, 15, 0.3, 3.75});
    StatusOr<std::unique_ptr<Client>> client = Client::Create(std::move(*provider), std::move(options));
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(*client);
  }

  FakeHttpServer server_;
  std::filesystem::path dir_;
};

TEST_F(ClientHttpTest, AnthropicTextReplyAndWireFormat) {
  server_.Enqueue(FakeReply::Json(200, AnthropicText("Here is the kernel.")));
  auto client = MakeClient("anthropic");
  ChatResponse r = client->Complete(Request("claude-sonnet-4-5")).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.message.content, "Here is the kernel.");
  EXPECT_EQ(r.stop_reason, StopReason::kEndTurn);
  EXPECT_EQ(r.usage.cache_read_tokens, 1000);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_TRUE(r.cost_known);
  EXPECT_DOUBLE_EQ(r.cost_usd, (100 * 3 + 50 * 15 + 1000 * 0.3) / 1e6);

  ASSERT_EQ(server_.request_count(), 1);
  fakes::HttpExchange ex = server_.requests()[0];
  EXPECT_EQ(ex.method, "POST");
  EXPECT_EQ(ex.path, "/v1/messages");
  EXPECT_EQ(ex.headers["x-api-key"], kAnthropicKey);
  EXPECT_EQ(ex.headers["anthropic-version"], "2023-06-01");
  json body = json::parse(ex.body);
  EXPECT_EQ(body["model"], "claude-sonnet-4-5");
  EXPECT_EQ(body["system"][0]["text"], "You write CUDA kernels.");
  EXPECT_EQ(body["messages"][0]["content"][0]["cache_control"]["type"], "ephemeral");
  EXPECT_EQ(client->stats().usage.input_tokens, 100);
}

TEST_F(ClientHttpTest, NegativeOrAbsurdTokenCountsAreClamped) {
  json reply = json::parse(AnthropicText("ok"));
  reply["usage"] = {{"input_tokens", -12000000000LL},
                    {"output_tokens", 9000000000000LL},
                    {"cache_read_input_tokens", -5},
                    {"cache_creation_input_tokens", 0}};
  server_.Enqueue(FakeReply::Json(200, reply.dump()));
  auto client = MakeClient("anthropic");
  ChatResponse r = client->Complete(Request("claude-sonnet-4-5")).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.usage.input_tokens, 0);
  EXPECT_EQ(r.usage.cache_read_tokens, 0);
  EXPECT_EQ(r.usage.output_tokens, 256) << "at most the request's max_tokens";
  EXPECT_GE(r.cost_usd, 0);
  EXPECT_DOUBLE_EQ(r.cost_usd, 256 * 15 / 1e6);
}

TEST_F(ClientHttpTest, OpenAiWireFormatAndBearer) {
  server_.Enqueue(FakeReply::Json(200, OpenAiText("ok")));
  auto client = MakeClient("openai");
  ChatResponse r = client->Complete(Request("gpt-4o-mini")).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.message.content, "ok");
  EXPECT_FALSE(r.cost_known);  // not in this test's table
  fakes::HttpExchange ex = server_.requests().at(0);
  EXPECT_EQ(ex.path, "/v1/chat/completions");
  EXPECT_EQ(ex.headers["authorization"], std::string("Bearer ") + kOpenAiKey);
  EXPECT_EQ(json::parse(ex.body)["messages"][1]["content"], "write a relu kernel");
}

struct Scenario {
  const char* name;
  std::string spec;
  std::vector<FakeReply> replies;
  ErrorKind expected_error;
  StopReason expected_stop;
  int expected_attempts;
};

FakeReply Drop() {
  FakeReply r;
  r.drop = true;
  return r;
}

FakeReply Slow(std::string body) {
  FakeReply r = FakeReply::Json(200, std::move(body));
  r.delay_ms = 3000;
  return r;
}

TEST_F(ClientHttpTest, Scenarios) {
  const std::string kRateLimited =
      AnthropicError("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit");
  const Scenario scenarios[] = {
      {"anthropic tool_use",
       "anthropic",
       {FakeReply::Json(200, AnthropicToolUse())},
       ErrorKind::kNone,
       StopReason::kToolUse,
       1},
      {"anthropic max_tokens",
       "anthropic",
       {FakeReply::Json(200, AnthropicText("partial", "max_tokens"))},
       ErrorKind::kNone,
       StopReason::kMaxTokens,
       1},
      {"openai tool_calls",
       "openai",
       {FakeReply::Json(200, OpenAiToolCall())},
       ErrorKind::kNone,
       StopReason::kToolUse,
       1},
      {"openai length",
       "openai",
       {FakeReply::Json(200, OpenAiText("partial", "length"))},
       ErrorKind::kNone,
       StopReason::kMaxTokens,
       1},
      {"429 retry-after then ok",
       "anthropic",
       {FakeReply::Json(429, kRateLimited, {{"retry-after", "0"}}),
        FakeReply::Json(200, AnthropicText("ok"))},
       ErrorKind::kNone,
       StopReason::kEndTurn,
       2},
      {"529 overloaded twice then ok",
       "anthropic",
       {FakeReply::Json(529, AnthropicError("overloaded_error", "Overloaded")),
        FakeReply::Json(529, AnthropicError("overloaded_error", "Overloaded")),
        FakeReply::Json(200, AnthropicText("ok"))},
       ErrorKind::kNone,
       StopReason::kEndTurn,
       3},
      {"500 then ok",
       "openai",
       {FakeReply::Json(500, R"({"error":{"message":"The server had an error","type":"server_error"}})"),
        FakeReply::Json(200, OpenAiText("ok"))},
       ErrorKind::kNone,
       StopReason::kEndTurn,
       2},
      {"dropped connection then ok",
       "openai",
       {Drop(), FakeReply::Json(200, OpenAiText("ok"))},
       ErrorKind::kNone,
       StopReason::kEndTurn,
       2},
      {"malformed body",
       "anthropic",
       {FakeReply::Json(200, R"({"id": "msg_1", "content": )")},
       ErrorKind::kMalformedResponse,
       StopReason::kOther,
       1},
      {"500 every time",
       "openai",
       {FakeReply::Json(500, "{}"), FakeReply::Json(500, "{}"), FakeReply::Json(500, "{}")},
       ErrorKind::kServer,
       StopReason::kOther,
       3},
      {"invalid request not retried",
       "anthropic",
       {FakeReply::Json(400, AnthropicError("invalid_request_error",
                                            "prompt is too long: 210000 tokens > 200000 maximum"))},
       ErrorKind::kInvalidRequest,
       StopReason::kOther,
       1},
  };
  for (const Scenario& s : scenarios) {
    SCOPED_TRACE(s.name);
    FakeHttpServer server;
    for (const FakeReply& r : s.replies) server.Enqueue(r);
    ProviderOptions p;
    p.base_url = server.url();
    StatusOr<std::unique_ptr<Provider>> provider = MakeProvider(*ParseProviderSpec(s.spec), p);
    ASSERT_TRUE(provider.ok());
    ClientOptions o;
    o.max_attempts = 3;
    o.initial_backoff_s = 0.01;
    o.max_backoff_s = 0.02;
    auto client = std::move(*Client::Create(std::move(*provider), o));
    ChatResponse r = client->Complete(Request("m")).get();
    EXPECT_EQ(ErrorKindName(r.error.kind), std::string(ErrorKindName(s.expected_error))) << r.error.message;
    if (r.ok()) {
      EXPECT_EQ(StopReasonName(r.stop_reason), std::string(StopReasonName(s.expected_stop)));
    }
    EXPECT_EQ(r.attempts, s.expected_attempts);
    EXPECT_EQ(server.request_count(), s.expected_attempts);
    if (s.expected_stop == StopReason::kToolUse) {
      ASSERT_EQ(r.message.tool_calls.size(), 1u);
      EXPECT_EQ(r.message.tool_calls[0].name, "submit");
      EXPECT_TRUE(r.message.tool_calls[0].arguments.contains("source"));
    }
    if (s.expected_error == ErrorKind::kServer) {
      EXPECT_NE(r.error.message.find("gave up after 3 attempts"), std::string::npos);
    }
  }
}

TEST_F(ClientHttpTest, HonoursRetryAfterMs) {
  server_.Enqueue(
      FakeReply::Json(429, R"({"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}})",
                      {{"retry-after-ms", "400"}}));
  server_.Enqueue(FakeReply::Json(200, OpenAiText("ok")));
  auto client = MakeClient("openai");
  ChatResponse r = client->Complete(Request("m")).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_GE(r.latency_s, 0.4);  // lower bound only: the retry waited at least retry-after
  EXPECT_EQ(client->stats().retries, 1);
}

TEST_F(ClientHttpTest, SlowReplyPastTimeout) {
  server_.Enqueue(Slow(AnthropicText("too late")));
  ClientOptions o;
  o.max_attempts = 1;
  auto client = MakeClient("anthropic", o, /*timeout_s=*/0.3);
  ChatResponse r = client->Complete(Request("m")).get();
  EXPECT_EQ(r.error.kind, ErrorKind::kTimeout) << r.error.message;
}

TEST_F(ClientHttpTest, AuthErrorStopsTheBatch) {
  server_.Enqueue(FakeReply::Json(
      401, AnthropicError("authentication_error", std::string("invalid x-api-key ") + kAnthropicKey)));
  ClientOptions o;
  o.max_in_flight = 1;  // the rest are still queued when the 401 arrives
  auto client = MakeClient("anthropic", o);
  std::vector<ChatRequest> batch;
  for (int i = 0; i < 5; ++i) batch.push_back(Request("m", "task " + std::to_string(i)));
  std::vector<ChatResponse> out = client->CompleteAll(batch);
  EXPECT_EQ(out[0].error.kind, ErrorKind::kAuth);
  EXPECT_EQ(out[0].attempts, 1);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(out[i].error.kind, ErrorKind::kAborted) << i;
  EXPECT_EQ(server_.request_count(), 1);
  Status fatal = client->fatal_status();
  ASSERT_FALSE(fatal.ok());
  EXPECT_NE(fatal.message().find("auth"), std::string::npos) << fatal.message();
  EXPECT_EQ(fatal.message().find(kAnthropicKey), std::string::npos) << fatal.message();
  EXPECT_EQ(out[0].error.message.find(kAnthropicKey), std::string::npos) << out[0].error.message;
  EXPECT_EQ(client->Complete(Request("m", "later")).get().error.kind, ErrorKind::kAborted);
}

TEST_F(ClientHttpTest, QuotaIsNotRetried) {
  server_.Enqueue(FakeReply::Json(
      429,
      R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}})"));
  auto client = MakeClient("openai");
  ChatResponse r = client->Complete(Request("m")).get();
  EXPECT_EQ(ErrorKindName(r.error.kind), std::string("quota")) << r.error.message;
  EXPECT_EQ(server_.request_count(), 1);
  EXPECT_FALSE(client->fatal_status().ok());
}

TEST_F(ClientHttpTest, CacheAvoidsPayingTwiceAndRecordHasNoKey) {
  const std::string cache = (dir_ / "cache").string();
  const std::string cassette = (dir_ / "run.cassette.jsonl").string();
  server_.Enqueue(FakeReply::Json(200, AnthropicText("first")));
  {
    ClientOptions o;
    o.cache_dir = cache;
    o.record_path = cassette;
    auto client = MakeClient("anthropic", o);
    ChatResponse r = client->Complete(Request("claude-sonnet-4-5")).get();
    ASSERT_TRUE(r.ok()) << r.error.message;
    EXPECT_FALSE(r.from_cache);
  }
  {
    ClientOptions o;
    o.cache_dir = cache;
    auto client = MakeClient("anthropic", o);
    ChatResponse r = client->Complete(Request("claude-sonnet-4-5")).get();
    ASSERT_TRUE(r.ok()) << r.error.message;
    EXPECT_TRUE(r.from_cache);
    EXPECT_EQ(r.message.content, "first");
    EXPECT_EQ(client->stats().cache_hits, 1);
    EXPECT_EQ(client->stats().cost_usd, 0);
    // A different request misses.
    server_.Enqueue(FakeReply::Json(200, AnthropicText("second")));
    EXPECT_EQ(client->Complete(Request("claude-sonnet-4-5", "other")).get().message.content, "second");
  }
  EXPECT_EQ(server_.request_count(), 2);
  std::string recorded = ReadFile(cassette);
  EXPECT_NE(recorded.find("first"), std::string::npos);
  EXPECT_EQ(recorded.find("SECRET"), std::string::npos);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(cache))
    if (entry.is_regular_file()) {
      EXPECT_EQ(ReadFile(entry.path().string()).find("SECRET"), std::string::npos);
      EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos);
    }

  // The cassette replays without a server.
  StatusOr<std::unique_ptr<Provider>> replay = MakeProvider(*ParseProviderSpec("replay:" + cassette), {});
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  auto client = std::move(*Client::Create(std::move(*replay), {}));
  ChatResponse again = client->Complete(Request("claude-sonnet-4-5")).get();
  ASSERT_TRUE(again.ok()) << again.error.message;
  EXPECT_EQ(again.message.content, "first");
  EXPECT_EQ(client->Complete(Request("claude-sonnet-4-5", "never recorded")).get().error.kind,
            ErrorKind::kReplayMiss);
}

TEST_F(ClientHttpTest, ManyInFlight) {
  FakeHttpServer server([](const fakes::HttpExchange& ex) {
    FakeReply r =
        FakeReply::Json(200, OpenAiText(json::parse(ex.body)["messages"][1]["content"].get<std::string>()));
    r.delay_ms = 50;
    return r;
  });
  ProviderOptions p;
  p.base_url = server.url();
  p.max_in_flight = 16;
  ClientOptions o;
  o.max_in_flight = 16;
  auto client = std::move(*Client::Create(std::move(*MakeProvider(*ParseProviderSpec("openai"), p)), o));
  std::vector<ChatRequest> batch;
  for (int i = 0; i < 64; ++i) batch.push_back(Request("m", "echo " + std::to_string(i)));
  std::vector<ChatResponse> out = client->CompleteAll(batch);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i].message.content, "echo " + std::to_string(i));
  EXPECT_EQ(client->stats().succeeded, 64);
  EXPECT_LE(server.connection_count(), 16);  // connections are reused and capped
}

TEST_F(ClientHttpTest, RetriesFollowTheSdks) {
  EXPECT_EQ(ClientOptions{}.max_attempts, 3) << "the SDKs' 2 retries";
  const std::string kServerError = R"({"type":"error","error":{"type":"api_error","message":"Internal"}})";
  const std::string kBadRequest =
      R"({"type":"error","error":{"type":"invalid_request_error","message":"bad"}})";
  struct Case {
    const char* name;
    std::vector<FakeReply> replies;
    ErrorKind expected;
    int expected_attempts;
    const char* message_part;
    double min_latency_s = 0;
  };
  const Case cases[] = {
      {"x-should-retry true retries a 400",
       {FakeReply::Json(400, kBadRequest, {{"x-should-retry", "true"}}),
        FakeReply::Json(200, AnthropicText("ok"))},
       ErrorKind::kNone,
       2,
       ""},
      {"x-should-retry false stops a 500",
       {FakeReply::Json(500, kServerError, {{"x-should-retry", "false"}}),
        FakeReply::Json(200, AnthropicText("ok"))},
       ErrorKind::kServer,
       1,
       "x-should-retry: false"},
      {"retry-after beyond the cap is not waited for",
       {FakeReply::Json(429, AnthropicError("rate_limit_error", "slow"), {{"retry-after", "100000"}})},
       ErrorKind::kRateLimited,
       1,
       "more than max_retry_after_s"},
      {"529, 503 with retry-after, then ok",
       {FakeReply::Json(529, AnthropicError("overloaded_error", "Overloaded"), {{"retry-after-ms", "300"}}),
        FakeReply::Json(503, kServerError, {{"retry-after", "0.2"}}),
        FakeReply::Json(200, AnthropicText("ok"))},
       ErrorKind::kNone,
       3,
       "",
       0.5},
      {"three 500s give up",
       {FakeReply::Json(500, kServerError), FakeReply::Json(500, kServerError),
        FakeReply::Json(500, kServerError), FakeReply::Json(200, AnthropicText("never"))},
       ErrorKind::kServer,
       3,
       "gave up after 3 attempts"},
      {"408 and 409 are retried",
       {FakeReply::Json(408, "{}"), FakeReply::Json(409, "{}"), FakeReply::Json(200, AnthropicText("ok"))},
       ErrorKind::kNone,
       3,
       ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeHttpServer server;
    for (const FakeReply& r : c.replies) server.Enqueue(r);
    ProviderOptions p;
    p.base_url = server.url();
    ClientOptions o;  // the default attempts
    o.initial_backoff_s = 0.01;
    o.max_backoff_s = 0.02;
    auto client = std::move(*Client::Create(std::move(*MakeProvider(*ParseProviderSpec("anthropic"), p)), o));
    ChatResponse r = client->Complete(Request("m")).get();
    EXPECT_EQ(ErrorKindName(r.error.kind), std::string(ErrorKindName(c.expected))) << r.error.message;
    EXPECT_EQ(r.attempts, c.expected_attempts);
    EXPECT_EQ(server.request_count(), c.expected_attempts);
    EXPECT_NE(r.error.message.find(c.message_part), std::string::npos) << r.error.message;
    EXPECT_GE(r.latency_s, c.min_latency_s) << "the retry-after headers were waited for";
  }
}

TEST_F(ClientHttpTest, NotFoundStopsTheBatchWithAHintNamingTheUrl) {
  // A vLLM base URL given without /v1: the server answers 404 for /chat/completions.
  FakeHttpServer server(
      [](const fakes::HttpExchange&) { return FakeReply::Json(404, R"({"detail":"Not Found"})"); });
  ProviderOptions p;
  p.base_url = server.url();
  ClientOptions o;
  o.max_in_flight = 1;
  auto client = std::move(*Client::Create(std::move(*MakeProvider(*ParseProviderSpec("openai"), p)), o));
  std::vector<ChatResponse> out =
      client->CompleteAll({Request("Qwen/Qwen3-8B"), Request("Qwen/Qwen3-8B", "2")});
  EXPECT_EQ(out[0].error.kind, ErrorKind::kNotFound);
  EXPECT_EQ(out[0].attempts, 1);
  EXPECT_NE(out[0].error.message.find(server.url() + "/chat/completions"), std::string::npos)
      << out[0].error.message;
  EXPECT_NE(out[0].error.message.find("/v1"), std::string::npos) << out[0].error.message;
  EXPECT_NE(out[0].error.message.find("Qwen/Qwen3-8B"), std::string::npos) << out[0].error.message;
  EXPECT_EQ(out[1].error.kind, ErrorKind::kAborted);
  Status fatal = client->fatal_status();
  ASSERT_FALSE(fatal.ok());
  EXPECT_NE(fatal.message().find("not_found"), std::string::npos) << fatal.message();
  EXPECT_NE(fatal.message().find("/chat/completions"), std::string::npos) << fatal.message();

  // Anthropic: an unknown model.
  server_.Enqueue(FakeReply::Json(404, AnthropicError("not_found_error", "model: claude-nope")));
  auto anthropic = MakeClient("anthropic");
  ChatResponse a = anthropic->Complete(Request("claude-nope")).get();
  EXPECT_EQ(a.error.kind, ErrorKind::kNotFound);
  EXPECT_NE(a.error.message.find("'claude-nope'"), std::string::npos) << a.error.message;
  EXPECT_NE(a.error.message.find("/v1/messages"), std::string::npos) << a.error.message;
  EXPECT_FALSE(anthropic->fatal_status().ok());
}

TEST_F(ClientHttpTest, ModerationFlagFailsThatRequestNotTheBatch) {
  server_.Enqueue(FakeReply::Json(
      403,
      R"({"error":{"code":403,"message":"anthropic/claude-sonnet-4.5 requires moderation on OpenRouter. Your input was flagged for \"violence\".","metadata":{"reasons":["violence"],"flagged_input":"...","provider_name":"Anthropic","model_slug":"anthropic/claude-sonnet-4.5"}}})"));
  ClientOptions o;
  o.max_in_flight = 1;
  auto client = MakeClient("openai", o);
  std::vector<ChatResponse> out = client->CompleteAll(
      {Request("anthropic/claude-sonnet-4.5", "a"), Request("anthropic/claude-sonnet-4.5", "b")});
  EXPECT_EQ(out[0].error.kind, ErrorKind::kModeration) << out[0].error.message;
  EXPECT_EQ(out[0].attempts, 1);
  EXPECT_EQ(out[1].error.kind, ErrorKind::kServer)
      << "the next request was sent (the fake has no reply for it)";
  EXPECT_TRUE(client->fatal_status().ok());
}

TEST_F(ClientHttpTest, OpenAiReasoningModelsGetTheirParameters) {
  server_.Enqueue(FakeReply::Json(200, OpenAiText("a")));
  server_.Enqueue(FakeReply::Json(200, OpenAiText("b")));
  server_.Enqueue(FakeReply::Json(200, OpenAiText("c")));
  auto client = MakeClient("openai");
  for (const char* model : {"gpt-5-mini", "gpt-4o-mini"}) {
    ChatRequest r = Request(model);
    r.stop = {"</answer>"};
    r.temperature = 0.2;
    r.reasoning_effort = "low";
    ASSERT_TRUE(client->Complete(r).get().ok());
  }
  json reasoning = json::parse(server_.requests().at(0).body);
  EXPECT_EQ(reasoning["max_completion_tokens"], 256);
  EXPECT_FALSE(reasoning.contains("max_tokens"));
  EXPECT_FALSE(reasoning.contains("stop"));
  EXPECT_FALSE(reasoning.contains("temperature"));
  EXPECT_EQ(reasoning["reasoning_effort"], "low");
  json classic = json::parse(server_.requests().at(1).body);
  EXPECT_EQ(classic["max_tokens"], 256);
  EXPECT_EQ(classic["stop"][0], "</answer>");
  EXPECT_EQ(classic["temperature"], 0.2);

  ProviderOptions p;
  p.base_url = server_.url() + "/v1";
  p.openai_max_tokens_field = "max_completion_tokens";  // the override
  auto overridden = std::move(*Client::Create(std::move(*MakeProvider(*ParseProviderSpec("openai"), p)), {}));
  ASSERT_TRUE(overridden->Complete(Request("gpt-4o-mini", "x")).get().ok());
  EXPECT_EQ(json::parse(server_.requests().at(2).body)["max_completion_tokens"], 256);
}

TEST_F(ClientHttpTest, ReasoningTokensAndCachedInputPricedPerProvider) {
  server_.Enqueue(FakeReply::Json(
      200, R"({"id":"c","model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"ok",
      "reasoning_content":"thinking"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10000,"completion_tokens":10000,
      "prompt_tokens_details":{"cached_tokens":6000},"completion_tokens_details":{"reasoning_tokens":7000}}})"));
  ClientOptions o;
  o.prices.Set("gpt-x", ModelPrice{10, 20, std::nullopt, std::nullopt});
  auto client = MakeClient("openai", o);
  ChatRequest request = Request("gpt-x");
  request.max_tokens = 16000;
  ChatResponse r = client->Complete(request).get();
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.message.reasoning, "thinking");
  EXPECT_EQ(r.usage.reasoning_tokens, 7000);
  EXPECT_EQ(client->stats().usage.reasoning_tokens, 7000);
  // 4000 input at 10, 6000 cached at openai's half price, 10000 output (reasoning included) at 20.
  EXPECT_NEAR(r.cost_usd, (4000 * 10 + 6000 * 5 + 10000 * 20) / 1e6, 1e-12);

  server_.Enqueue(FakeReply::Json(200, AnthropicText("ok")));  // 100 in, 50 out, 1000 cache reads
  ClientOptions a;
  a.prices.Set("claude-x", ModelPrice{10, 20, std::nullopt, std::nullopt});
  auto anthropic = MakeClient("anthropic", a);
  ChatResponse ar = anthropic->Complete(Request("claude-x")).get();
  ASSERT_TRUE(ar.ok()) << ar.error.message;
  EXPECT_DOUBLE_EQ(ar.cost_usd, (100 * 10 + 50 * 20 + 1000 * 1.0) / 1e6) << "anthropic reads at a tenth";
}

TEST(MakeProviderTest, ApiKeyEnvNamesTheVariable) {
  setenv("OPENAI_API_KEY", "sk-default-key-000000", 1);
  setenv("KFORGE_TEST_ROUTER_KEY", "sk-or-v1-named-key-111111", 1);
  FakeHttpServer server([](const fakes::HttpExchange&) { return FakeReply::Json(200, OpenAiText("ok")); });
  ProviderOptions p;
  p.base_url = server.url() + "/v1";
  p.api_key_env = "KFORGE_TEST_ROUTER_KEY";
  auto named = std::move(*Client::Create(std::move(*MakeProvider(*ParseProviderSpec("openai"), p)), {}));
  ASSERT_TRUE(named->Complete(Request("m")).get().ok());
  EXPECT_EQ(server.requests().at(0).headers["authorization"], "Bearer sk-or-v1-named-key-111111");
  p.api_key_env.clear();
  auto plain = std::move(*Client::Create(std::move(*MakeProvider(*ParseProviderSpec("openai"), p)), {}));
  ASSERT_TRUE(plain->Complete(Request("m")).get().ok());
  EXPECT_EQ(server.requests().at(1).headers["authorization"], "Bearer sk-default-key-000000");

  unsetenv("KFORGE_TEST_UNSET_KEY");
  p.api_key_env = "KFORGE_TEST_UNSET_KEY";
  for (const char* spec : {"openai", "anthropic"}) {
    StatusOr<std::unique_ptr<Provider>> missing = MakeProvider(*ParseProviderSpec(spec), p);
    ASSERT_FALSE(missing.ok()) << spec << ": a named variable must be set, even for a local server";
    EXPECT_NE(missing.status().message().find("KFORGE_TEST_UNSET_KEY"), std::string::npos);
  }
  setenv("KFORGE_TEST_ANTHROPIC_KEY", "sk-ant-named-222222", 1);
  p.api_key_env = "KFORGE_TEST_ANTHROPIC_KEY";
  EXPECT_TRUE(MakeProvider(*ParseProviderSpec("anthropic"), p).ok());
}

TEST(MakeProviderTest, SpecsAndKeys) {
  unsetenv("ANTHROPIC_API_KEY");
  StatusOr<std::unique_ptr<Provider>> p = MakeProvider(*ParseProviderSpec("anthropic"), {});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("ANTHROPIC_API_KEY"), std::string::npos);
  unsetenv("OPENAI_API_KEY");
  EXPECT_FALSE(MakeProvider(*ParseProviderSpec("openai"), {}).ok());
  ProviderOptions local;
  local.base_url = "http://127.0.0.1:1/v1";
  EXPECT_TRUE(MakeProvider(*ParseProviderSpec("openai"), local).ok());  // local servers need no key
  EXPECT_FALSE(MakeProvider(*ParseProviderSpec("replay:/nonexistent/cassette.jsonl"), {}).ok());
  EXPECT_FALSE(MakeProvider({ProviderKind::kExec, ""}, {}).ok());
}

TEST(MakeProviderTest, ParsesSpecsOnce) {
  struct Case {
    const char* text;
    std::optional<ProviderKind> kind;  // nullopt: refused
    const char* argument;
  };
  for (const Case& c : std::vector<Case>{{"anthropic", ProviderKind::kAnthropic, ""},
                                         {"openai", ProviderKind::kOpenAi, ""},
                                         {"replay:a/b.jsonl", ProviderKind::kReplay, "a/b.jsonl"},
                                         {"exec:python3 t.py --x=1:2", ProviderKind::kExec, "python3 t.py --x=1:2"},
                                         {"bogus", std::nullopt, ""},
                                         {"", std::nullopt, ""},
                                         {"openai:x", std::nullopt, ""},
                                         {"replay:", std::nullopt, ""},
                                         {"exec", std::nullopt, ""}}) {
    StatusOr<ProviderSpec> spec = ParseProviderSpec(c.text);
    ASSERT_EQ(spec.ok(), c.kind.has_value()) << c.text;
    if (!spec.ok()) {
      EXPECT_NE(spec.status().message().find("provider"), std::string::npos) << spec.status().message();
      continue;
    }
    EXPECT_EQ(spec->kind, *c.kind) << c.text;
    EXPECT_EQ(spec->argument, c.argument) << c.text;
    EXPECT_EQ(spec->Text(), c.text) << "the spec is written back as it was given";
  }
  EXPECT_EQ(ParseProviderSpec("bogus").status().message(),
            "unknown provider 'bogus' (expected anthropic, openai, replay:FILE or exec:CMD)");
  for (ProviderKind kind : {ProviderKind::kAnthropic, ProviderKind::kOpenAi})
    EXPECT_TRUE(SendsJsonBody(kind)) << ProviderKindName(kind);
  for (ProviderKind kind : {ProviderKind::kReplay, ProviderKind::kExec})
    EXPECT_FALSE(SendsJsonBody(kind)) << ProviderKindName(kind);
}

}  // namespace
}  // namespace kforge::llm
