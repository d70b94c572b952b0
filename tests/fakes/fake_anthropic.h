// FakeAnthropic: the Anthropic Messages API on 127.0.0.1 with a prompt cache that behaves like the
// provider's. For each request the prefix up to each cache_control breakpoint (tools, then system,
// then messages, block by block) is hashed; a prefix of at least `min_tokens` (bytes / 4) that an
// earlier *completed* response wrote is read (looked up at the breakpoint and up to 19 blocks
// before it), the rest up to the last such breakpoint is written, and what follows is plain input.
// A response's writes become readable only once it is complete (after `reply_ms`).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/http_server.h"

namespace kforge::fakes {

/// Prompt tokens of one request as the provider bills them.
struct PromptUsage {
  int64_t input = 0, cache_read = 0, cache_write = 0;
};

/// The cache alone: Price a request's prompt, then Complete it to make its writes readable.
class FakePromptCache {
 public:
  explicit FakePromptCache(int64_t min_tokens = 1024) : min_tokens_(min_tokens) {}
  struct Priced {
    PromptUsage usage;
    std::vector<size_t> writes;  ///< prefix hashes this request writes
  };
  Priced Price(const nlohmann::json& body) const;
  void Complete(const Priced& priced);

 private:
  int64_t min_tokens_;
  mutable std::mutex mu_;
  std::set<size_t> written_;
};

struct FakeAnthropicExchange {
  nlohmann::json request;
  PromptUsage usage;
};

class FakeAnthropic {
 public:
  /// `reply_text(request, n)`: the text of the n-th reply (0-based). Each reply takes `reply_ms`.
  FakeAnthropic(std::function<std::string(const nlohmann::json&, int)> reply_text, int64_t min_tokens = 1024,
                int reply_ms = 0);
  std::string url() const { return server_.url(); }
  /// Every request answered so far, with the usage it was billed.
  std::vector<FakeAnthropicExchange> exchanges() const;

 private:
  FakeReply Answer(const HttpExchange& exchange);

  std::function<std::string(const nlohmann::json&, int)> reply_text_;
  int reply_ms_;
  FakePromptCache cache_;
  mutable std::mutex mu_;
  std::vector<FakeAnthropicExchange> exchanges_;
  FakeHttpServer server_;  // last: its threads call Answer until it is destroyed
};

}  // namespace kforge::fakes
