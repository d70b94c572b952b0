// API keys never appear in what the LLM layer shows or writes: error messages (masked before they
// are cut), the batch's fatal status, log lines, cassettes and cache files. Keys of every shape,
// "*" included, placed so that they straddle the cut.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fakes/http_server.h"
#include "kforge/llm/client.h"
#include "llm/wire.h"

namespace kforge::llm {
namespace {

using fakes::FakeHttpServer;
using fakes::FakeReply;
using nlohmann::json;

const std::vector<std::string> kKeys = {
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOp-QRSTUVWX",
    "sk-proj-0123456789abcdef0123456789abcdef",
    "*",
    "**",
    "***",
    "sk-***",
    "***sk-",
    "a",
    "HTTP",
    "token-abc123",  // vLLM's documented example
    "key with spaces and\ttab",
    "quote\"back\\slash/",
    "\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87-\xe2\x82\xac-0123456789",  // UTF-8
    "line\nbreak-0123456789",
    std::string(1000, 'Z') + "-long",
};

/// A filler byte that the key does not contain.
char FillerFor(const std::string& key) {
  for (char c : std::string("._=#~xq0"))
    if (key.find(c) == std::string::npos) return c;
  return '@';
}

/// What a reader sees of the key in `out`: the masks and the cut marker are not the key.
std::string Visible(std::string out, bool was_cut) {
  if (was_cut && out.size() >= 3 && out.compare(out.size() - 3, 3, "...") == 0) out.resize(out.size() - 3);
  for (size_t p = out.find("***"); p != std::string::npos; p = out.find("***", p + 1))
    out.replace(p, 3, "\x01");
  return out;
}

/// No part of `key` (the whole of a short key, any 8 bytes of a long one) is in `text`.
void ExpectNoPartOf(const std::string& key, const std::string& text, const std::string& where) {
  const size_t run = std::min<size_t>(key.size(), 8);
  for (size_t j = 0; j + run <= key.size(); ++j)
    ASSERT_EQ(text.find(key.substr(j, run)), std::string::npos)
        << where << ": bytes " << j << ".." << j + run << " of the key leaked in: " << text;
}

TEST(SecretsTest, MaskedBeforeTheCutForKeysOfEveryShape) {
  for (const std::string& key : kKeys) {
    const char filler = FillerFor(key);
    for (size_t offset : {size_t{0}, size_t{10}, size_t{250}, size_t{280}, size_t{292}, size_t{295},
                          size_t{299}, size_t{300}, size_t{301}, size_t{320}}) {
      SCOPED_TRACE("key '" + key.substr(0, 40) + "' at " + std::to_string(offset));
      const std::string text =
          std::string(offset, filler) + key + std::string(20, filler) + key + std::string(400, filler);
      const std::string out = SanitizeMessage(text, {key});
      EXPECT_LE(out.size(), 303u);
      EXPECT_EQ(out.find('\n'), std::string::npos);
      ExpectNoPartOf(key, Visible(out, true), "SanitizeMessage");
    }
  }
}

TEST(SecretsTest, PartialEchoesAndEscapedFormsAreMasked) {
  const std::string key = "sk-ant-api03-AbCdEfGhIjKlMnOp";
  // A server that echoes the start of the key, cut, and one that echoes it JSON-escaped.
  EXPECT_EQ(SanitizeMessage("invalid x-api-key ant-api03-AbCd...", {key}), "invalid x-api-key ***...");
  const std::string odd = "my\"key\\with/escapes";
  std::string escaped = json(odd).dump();
  escaped = escaped.substr(1, escaped.size() - 2);
  EXPECT_EQ(SanitizeMessage("bad key: " + escaped, {odd}), "bad key: ***");
  std::string text = "x " + escaped + " y " + odd;
  MaskSecret(text, odd);
  EXPECT_EQ(text, "x *** y ***");
}

TEST(SecretsTest, MaskingTerminatesForAnyKey) {
  for (const std::string& key : {std::string("*"), std::string("**"), std::string("***"),
                                 std::string("sk-***"), std::string("*sk-*"), std::string("...")}) {
    std::string text = "a*b**c***d sk-*** ... " + key + key;
    MaskSecret(text, key);  // must return
    EXPECT_EQ(Visible(text, false).find(key), std::string::npos) << key << " -> " << text;
    SanitizeMessage(std::string(100000, '*') + key, {key});
  }
  // Pathological overlaps stay linear.
  const std::string long_key(1000, 'a');
  std::string many(1000000, 'a');
  MaskSecret(many, long_key);
  EXPECT_EQ(many, "***");
  EXPECT_EQ(SanitizeMessage(std::string(1000000, 'a'), {long_key}), "***");
  std::string text = "nothing to hide";
  MaskSecret(text, "");
  EXPECT_EQ(text, "nothing to hide");
  EXPECT_EQ(SanitizeMessage(std::string(500, '*'), {"*"}).size(), 3u);
}

TEST(SecretsTest, CutKeepsUtf8Whole) {
  std::string text(299, 'a');
  text += "\xc3\xa9\xc3\xa9";  // an é across the cut
  std::string out = SanitizeMessage(text, {});
  EXPECT_EQ(out, std::string(299, 'a') + "...");
}

TEST(SecretsTest, DataAndMessagesMaskByOneRule) {
  // A key cut short, as servers echo it: messages and data alike lose every run of 8 of its bytes.
  const std::string key = "sk-proj-0123456789abcdefGHIJ";
  const std::string text = "key sk-proj-01234... and " + key;
  EXPECT_EQ(SanitizeMessage(text, {key}), "key ***... and ***");
  EXPECT_EQ(RedactSecrets(text, {key}), "key ***... and ***");
  EXPECT_EQ(RedactSecrets("int i = threadIdx.x; // EMPTY", {"EMPTY", "x"}), "int i = threadIdx.x; // EMPTY")
      << "placeholders shorter than 8 bytes stay in data";
}

TEST(SecretsTest, CredentialsOfHeadersAndUrlsAreSecrets) {
  ProviderOptions o;
  o.extra_headers = {{"cf-aig-authorization", "Bearer cfut_0123456789abcdef"},
                     {"x-api-key", "plain-gateway-key"},
                     {"X-Gateway", "gw-Token-0123456789abcdEF"},       // a key by its look
                     {"x-route", "Basic dXNlcjpwYXNzd29yZA=="},        // by its scheme word
                     {"anthropic-beta", "prompt-caching-2024-07-31"},  // not a credential
                     {"content-type", "application/json"}};
  const Secrets secrets = ProviderSecrets("sk-key-0123456789", o,
                                          "https://me:pw-0123456789@gw.example/v1?api_key=qk-9876543210&x=1");
  const Secrets expected = {"sk-key-0123456789",         "cfut_0123456789abcdef", "plain-gateway-key",
                            "gw-Token-0123456789abcdEF", "dXNlcjpwYXNzd29yZA==",  "me:pw-0123456789",
                            "bWU6cHctMDEyMzQ1Njc4OQ==",  "pw-0123456789",         "qk-9876543210"};
  EXPECT_EQ(secrets, expected);
  EXPECT_EQ(UrlWithoutCredentials("https://me:pw@gw.example:8443/v1?api_key=qk-1&model=m&token=t#top"),
            "https://gw.example:8443/v1?api_key=***&model=m&token=***#top");
  EXPECT_EQ(UrlWithoutCredentials("http://127.0.0.1:8000/v1"), "http://127.0.0.1:8000/v1");
  EXPECT_EQ(UrlWithoutCredentials("http://TOKEN@host/?q=a@b"), "http://host/?q=a@b");
  EXPECT_EQ(UrlWithoutCredentials(""), "");
}

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class SecretsHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kforge_llm_secrets_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    unsetenv("KFORGE_TEST_SECRET_KEY");
  }
  std::filesystem::path dir_;
};

TEST_F(SecretsHttpTest, NoPathShowsTheKey) {
  // Keys a header can carry; the server echoes them back everywhere it can.
  const std::vector<std::string> keys = {
      kKeys[0], "*", "sk-***", "token-abc123", "quote\"back\\slash/", std::string(1000, 'Z') + "-long"};
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("secrets_test", sink);
  logger->set_level(spdlog::level::debug);
  spdlog::set_default_logger(logger);
  for (const std::string& key : keys) {
    SCOPED_TRACE("key '" + key.substr(0, 40) + "'");
    for (const std::string spec : {"anthropic", "openai"}) {
      SCOPED_TRACE(spec);
      setenv("KFORGE_TEST_SECRET_KEY", key.c_str(), 1);
      const char filler = FillerFor(key);
      // 1. A 500 that echoes the key across the cut (retried: a log line), then a reply that
      //    contains it, then a 401 that echoes it (fatal: the batch's status).
      const std::string echo = std::string(280, filler) + key + " " + key;
      const std::string error_body =
          spec == "anthropic"
              ? json{{"type", "error"}, {"error", {{"type", "api_error"}, {"message", echo}}}}.dump()
              : json{{"error", {{"message", echo}, {"type", "server_error"}}}}.dump();
      const std::string reply_body =
          spec == "anthropic"
              ? json{{"content", json::array({{{"type", "text"}, {"text", "your key is " + key}}})},
                     {"stop_reason", "end_turn"}}
                    .dump()
              : json{{"choices",
                      json::array({{{"message", {{"role", "assistant"}, {"content", "your key is " + key}}},
                                    {"finish_reason", "stop"}}})}}
                    .dump();
      const std::string auth_body =
          spec == "anthropic"
              ? json{{"type", "error"}, {"error", {{"type", "authentication_error"}, {"message", echo}}}}
                    .dump()
              : json{{"error", {{"message", echo}, {"code", "invalid_api_key"}}}}.dump();
      FakeHttpServer server;
      server.Enqueue(FakeReply::Json(500, error_body));
      server.Enqueue(FakeReply::Json(200, reply_body));
      server.Enqueue(FakeReply::Json(401, auth_body));
      ProviderOptions p;
      p.base_url = server.url();
      p.api_key_env = "KFORGE_TEST_SECRET_KEY";
      StatusOr<std::unique_ptr<Provider>> provider = MakeProvider(*ParseProviderSpec(spec), p);
      ASSERT_TRUE(provider.ok()) << provider.status().ToString();
      ClientOptions o;
      o.initial_backoff_s = 0.01;
      o.cache_dir = (dir_ / "cache").string();
      o.record_path = (dir_ / "cassette.jsonl").string();
      auto client = std::move(*Client::Create(std::move(*provider), o));
      ChatRequest r;
      r.model = "m";
      r.messages = {Message::User("hello " + spec)};
      ChatResponse ok = client->Complete(r).get();
      ASSERT_TRUE(ok.ok()) << ok.error.message;
      EXPECT_EQ(ok.attempts, 2);
      r.messages = {Message::User("again " + spec)};
      ChatResponse denied = client->Complete(r).get();
      EXPECT_EQ(denied.error.kind, ErrorKind::kAuth);
      ExpectNoPartOf(key, Visible(denied.error.message, true), "error message");
      ExpectNoPartOf(key, Visible(client->fatal_status().message(), true), "fatal status");
      EXPECT_EQ(server.requests().at(0).headers[spec == "anthropic" ? "x-api-key" : "authorization"],
                spec == "anthropic" ? key : "Bearer " + key)
          << "the key itself is sent";
      client.reset();
      spdlog::default_logger()->flush();
      const std::string logged = Visible(log.str(), false);
      ASSERT_NE(logged.find("retrying"), std::string::npos) << "the retry was logged";
      ExpectNoPartOf(key, logged, "log");
      log.str("");
      // 2. The reply that contained the key was recorded and cached without it. (Data keeps a key
      //    shorter than 8 bytes, a placeholder: masking it would mangle kernels.)
      const std::string cassette = ReadAll(dir_ / "cassette.jsonl");
      ASSERT_NE(cassette.find("your key is"), std::string::npos);
      if (key.size() < kMinRedactedSecret) {
        EXPECT_NE(cassette.find(json("your key is " + key).dump()), std::string::npos) << cassette;
        std::filesystem::remove_all(dir_ / "cache");
        std::filesystem::remove(dir_ / "cassette.jsonl");
        continue;
      }
      ExpectNoPartOf(key, Visible(cassette, false), "cassette");
      std::string escaped = json(key).dump();
      EXPECT_EQ(Visible(cassette, false).find(escaped.substr(1, escaped.size() - 2)), std::string::npos);
      for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_ / "cache"))
        if (entry.is_regular_file()) ExpectNoPartOf(key, Visible(ReadAll(entry.path()), false), "cache file");
      std::filesystem::remove_all(dir_ / "cache");
      std::filesystem::remove(dir_ / "cassette.jsonl");
    }
  }
  spdlog::set_default_logger(previous);
}

TEST_F(SecretsHttpTest, HeaderCredentialsAreMaskedInMessagesLogsAndData) {
  // A gateway that echoes every header it got: in a 500 (retried: a log line), cut short in a reply
  // (data), and in a 401 (the fatal status).
  const std::string token = "cfut_AbCdEf0123456789XyZ";
  const std::string api_key = "gw-Key-0123456789abcdEF";
  auto echo = [](const fakes::HttpExchange& ex) {
    std::string all;
    for (const auto& [name, value] : ex.headers) all += name + ": " + value + "; ";
    return all;
  };
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("secrets_test", sink);
  logger->set_level(spdlog::level::debug);
  spdlog::set_default_logger(logger);
  std::atomic<int> calls_made{0};
  FakeHttpServer server([&](const fakes::HttpExchange& ex) {
    const int calls = ++calls_made;
    if (calls == 1)
      return FakeReply::Json(500, json{{"error", {{"message", echo(ex)}, {"type", "server_error"}}}}.dump());
    if (calls == 2)
      return FakeReply::Json(
          200,
          json{{"choices", json::array({{{"message",
                                          {{"role", "assistant"},
                                           {"content", "seen " + token.substr(0, 12) + "... " + echo(ex)}}},
                                         {"finish_reason", "stop"}}})}}
              .dump());
    return FakeReply::Json(401, json{{"error", {{"message", echo(ex)}, {"code", "invalid_api_key"}}}}.dump());
  });
  ProviderOptions p;
  p.base_url = server.url();
  p.extra_headers = {{"cf-aig-authorization", "Bearer " + token},
                     {"x-api-key", api_key},
                     {"anthropic-beta", "prompt-caching-2024-07-31"}};
  ClientOptions o;
  o.initial_backoff_s = 0.01;
  o.record_path = (dir_ / "cassette.jsonl").string();
  auto client = std::move(*Client::Create(std::move(*MakeProvider(*ParseProviderSpec("openai"), p)), o));
  ChatRequest r;
  r.model = "m";
  r.messages = {Message::User("u")};
  ChatResponse ok = client->Complete(r).get();
  ASSERT_TRUE(ok.ok()) << ok.error.message;
  r.messages = {Message::User("v")};
  ChatResponse denied = client->Complete(r).get();
  EXPECT_EQ(denied.error.kind, ErrorKind::kAuth);
  EXPECT_EQ(server.requests().at(0).headers["cf-aig-authorization"], "Bearer " + token)
      << "the header is sent";
  client.reset();
  spdlog::default_logger()->flush();
  spdlog::set_default_logger(previous);
  const std::string cassette = ReadAll(dir_ / "cassette.jsonl");
  ASSERT_NE(cassette.find("seen ***..."), std::string::npos) << cassette;
  EXPECT_NE(cassette.find("prompt-caching-2024-07-31"), std::string::npos)
      << "a header that is no credential stays";
  for (const std::string& secret : {token, api_key}) {
    ExpectNoPartOf(secret, Visible(denied.error.message, true), "error message");
    ExpectNoPartOf(secret, Visible(log.str(), false), "log");
    ExpectNoPartOf(secret, Visible(cassette, false), "cassette");
  }
}

TEST_F(SecretsHttpTest, PlaceholderKeysDoNotMangleData) {
  setenv("KFORGE_TEST_SECRET_KEY", "x", 1);  // what a local server is often given
  FakeHttpServer server([](const fakes::HttpExchange&) {
    return FakeReply::Json(500, R"({"error":{"message":"key x rejected","type":"server_error"}})");
  });
  server.Enqueue(FakeReply::Json(
      200, json{{"choices",
                 json::array({{{"message", {{"role", "assistant"}, {"content", "int i = threadIdx.x;"}}},
                               {"finish_reason", "stop"}}})}}
               .dump()));
  ProviderOptions p;
  p.base_url = server.url();
  p.api_key_env = "KFORGE_TEST_SECRET_KEY";
  ClientOptions o;
  o.max_attempts = 1;
  o.record_path = (dir_ / "cassette.jsonl").string();
  auto client = std::move(*Client::Create(std::move(*MakeProvider(*ParseProviderSpec("openai"), p)), o));
  ChatRequest r;
  r.messages = {Message::User("u")};
  ASSERT_TRUE(client->Complete(r).get().ok());
  EXPECT_NE(ReadAll(dir_ / "cassette.jsonl").find("int i = threadIdx.x;"), std::string::npos);
  r.messages = {Message::User("v")};
  EXPECT_EQ(client->Complete(r).get().error.message, "HTTP 500 server_error: key *** rejected")
      << "messages mask any key";
}

TEST_F(SecretsHttpTest, ExecCommandsDoNotShowInheritedKeys) {
  const std::string key = "sk-ant-exec-child-0123456789abcdef";
  setenv("KFORGE_TEST_SECRET_KEY", key.c_str(), 1);
  ProviderOptions p;
  p.api_key_env = "KFORGE_TEST_SECRET_KEY";
  // The child prints the key across the 200-byte tail that the message keeps.
  auto provider = MakeProvider(
      {ProviderKind::kExec, "printf '%s' \"$KFORGE_TEST_SECRET_KEY\" >&2; head -c 190 /dev/zero | tr '\\0' x >&2; exit 1"}, p);
  ASSERT_TRUE(provider.ok());
  ClientOptions o;
  o.max_attempts = 1;
  auto client = std::move(*Client::Create(std::move(*provider), o));
  ChatRequest r;
  r.messages = {Message::User("u")};
  ChatResponse failed = client->Complete(r).get();
  EXPECT_EQ(failed.error.kind, ErrorKind::kExecFailed);
  EXPECT_NE(failed.error.message.find("exited with status 1"), std::string::npos) << failed.error.message;
  ExpectNoPartOf(key, Visible(failed.error.message, true), "exec message");
}

}  // namespace
}  // namespace kforge::llm
