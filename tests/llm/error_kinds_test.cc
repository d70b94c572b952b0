// Errors are classified by their own type or code wherever they come (a 200 body, an event inside a
// stream), against a real HTTP server on 127.0.0.1 that answers as the Anthropic and OpenAI APIs do:
// one that will never succeed is not retried; an overload still is.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "fakes/http_server.h"
#include "kforge/llm/client.h"

namespace kforge::llm {
namespace {

using fakes::FakeHttpServer;
using fakes::FakeReply;
using nlohmann::json;

struct ErrorCase {
  const char* name;
  const char* spec;
  bool stream;
  FakeReply reply;
  ErrorKind kind;
  int requests;  ///< sent before the client gave up (8 attempts for what is retried)
};

FakeReply AnthropicEvent(const json& error) {
  return FakeReply::Sse({"event: error\ndata: " + json{{"type", "error"}, {"error", error}}.dump() + "\n\n"});
}

FakeReply OpenAiEvent(const json& error) { return FakeReply::Sse({"data: " + json{{"error", error}}.dump() + "\n\n"}); }

TEST(ErrorKindsTest, ErrorsThatWillNeverSucceedAreNotRetriedWhereverTheyCome) {
  setenv("ANTHROPIC_API_KEY", "sk-ant-kinds-test-0123456789", 1);
  const json too_long = {{"type", "invalid_request_error"}, {"message", "prompt is too long: 250000 tokens > 200000 maximum"}};
  const json context = {{"message", "This model's maximum context length is 128000 tokens."},
                        {"type", "invalid_request_error"},
                        {"param", "messages"},
                        {"code", "context_length_exceeded"}};
  const ErrorCase cases[] = {
      {"anthropic 200 error body", "anthropic", false,
       FakeReply::Json(200, json{{"type", "error"}, {"error", too_long}}.dump()), ErrorKind::kInvalidRequest, 1},
      {"anthropic stream error event", "anthropic", true, AnthropicEvent(too_long), ErrorKind::kInvalidRequest, 1},
      {"openai 200 error body", "openai", false, FakeReply::Json(200, json{{"error", context}}.dump()),
       ErrorKind::kInvalidRequest, 1},
      {"openai stream error event", "openai", true, OpenAiEvent({{"message", "context too long"}, {"code", "context_length_exceeded"}}),
       ErrorKind::kInvalidRequest, 1},
      {"anthropic stream overload", "anthropic", true,
       AnthropicEvent({{"type", "overloaded_error"}, {"message", "Overloaded"}}), ErrorKind::kOverloaded, 8},
      {"openai 200 server error", "openai", false,
       FakeReply::Json(200, json{{"error", {{"message", "upstream failed"}, {"code", 502}}}}.dump()), ErrorKind::kServer, 8},
  };
  for (const ErrorCase& c : cases) {
    const ErrorCase* current = &c;
    FakeHttpServer server([current](const fakes::HttpExchange&) { return current->reply; });
    ProviderOptions p;
    p.base_url = server.url() + (std::string(c.spec) == "openai" ? "/v1" : "");
    p.stream = c.stream ? StreamMode::kAlways : StreamMode::kNever;
    ClientOptions o;
    o.max_attempts = 8;
    o.initial_backoff_s = 0.001;
    o.max_backoff_s = 0.002;
    auto client = std::move(*Client::Create(std::move(*MakeProvider(*ParseProviderSpec(c.spec), p)), o));
    ChatRequest request;
    request.model = "m";
    request.max_tokens = 64;
    request.messages = {Message::User("write a relu kernel")};
    ChatResponse r = client->Complete(request).get();
    EXPECT_EQ(r.error.kind, c.kind) << c.name << ": " << r.error.message;
    EXPECT_EQ(server.request_count(), c.requests) << c.name;
  }
}

}  // namespace
}  // namespace kforge::llm
