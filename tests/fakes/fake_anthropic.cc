// The fake Messages API and its prompt cache.
#include "fakes/fake_anthropic.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace kforge::fakes {
namespace {

using nlohmann::json;

/// One block of the prompt as the cache sees it: its bytes, and whether a breakpoint ends there.
struct Block {
  std::string bytes;
  bool breakpoint = false;
};

void AddBlock(std::vector<Block>& blocks, json block, const std::string& role = "") {
  bool breakpoint = false;
  if (block.is_object() && block.contains("cache_control")) {
    breakpoint = true;
    block.erase("cache_control");
  }
  blocks.push_back({role + block.dump(), breakpoint});
}

/// Tools, then system, then messages: the order of Anthropic's cache prefix.
std::vector<Block> Blocks(const json& body) {
  std::vector<Block> blocks;
  for (const json& tool : body.value("tools", json::array())) AddBlock(blocks, tool);
  const json system = body.value("system", json());
  if (system.is_string()) AddBlock(blocks, system);
  if (system.is_array())
    for (const json& block : system) AddBlock(blocks, block);
  for (const json& message : body.value("messages", json::array())) {
    const std::string role = message.value("role", "") + ":";
    const json& content = message.contains("content") ? message["content"] : json();
    if (content.is_array()) {
      for (const json& block : content) AddBlock(blocks, block, role);
    } else {
      AddBlock(blocks, content, role);
    }
  }
  return blocks;
}

}  // namespace

FakePromptCache::Priced FakePromptCache::Price(const json& body) const {
  const std::vector<Block> blocks = Blocks(body);
  std::vector<int64_t> tokens;  // of the prefix ending with block i
  std::vector<size_t> hashes;
  std::string prefix;
  for (const Block& block : blocks) {
    prefix += block.bytes;
    prefix += '\x1f';
    tokens.push_back(static_cast<int64_t>(prefix.size() / 4));
    hashes.push_back(std::hash<std::string>()(prefix));
  }
  Priced priced;
  int64_t read = 0, cached = 0;  // read: the longest prefix found; cached: up to the last breakpoint kept
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (!blocks[b].breakpoint || tokens[b] < min_tokens_) continue;
    for (size_t j = b + 1; j-- > (b >= 19 ? b - 19 : 0);) {
      if (tokens[j] >= min_tokens_ && written_.count(hashes[j])) {
        read = std::max(read, tokens[j]);
        break;
      }
    }
    cached = tokens[b];
    priced.writes.push_back(hashes[b]);
  }
  const int64_t total = tokens.empty() ? 0 : tokens.back();
  priced.usage.cache_read = read;
  priced.usage.cache_write = std::max<int64_t>(0, cached - read);
  priced.usage.input = total - priced.usage.cache_read - priced.usage.cache_write;
  return priced;
}

void FakePromptCache::Complete(const Priced& priced) {
  std::lock_guard<std::mutex> lock(mu_);
  written_.insert(priced.writes.begin(), priced.writes.end());
}

FakeAnthropic::FakeAnthropic(std::function<std::string(const json&, int)> reply_text, int64_t min_tokens,
                             int reply_ms)
    : reply_text_(std::move(reply_text)),
      reply_ms_(reply_ms),
      cache_(min_tokens),
      server_([this](const HttpExchange& exchange) { return Answer(exchange); }) {}

std::vector<FakeAnthropicExchange> FakeAnthropic::exchanges() const {
  std::lock_guard<std::mutex> lock(mu_);
  return exchanges_;
}

FakeReply FakeAnthropic::Answer(const HttpExchange& exchange) {
  const json request = json::parse(exchange.body, nullptr, false);
  if (!request.is_object())
    return FakeReply::Json(400, R"({"type":"error","error":{"type":"invalid_request_error","message":"bad JSON"}})");
  const FakePromptCache::Priced priced = cache_.Price(request);
  int n = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = static_cast<int>(exchanges_.size());
    exchanges_.push_back({request, priced.usage});
  }
  const std::string text = reply_text_(request, n);
  // The reply is being written: its cache entries are usable once it is complete.
  std::this_thread::sleep_for(std::chrono::milliseconds(reply_ms_));
  cache_.Complete(priced);
  json message = {{"id", "msg_" + std::to_string(n)},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", request.value("model", "")},
                  {"content", {{{"type", "text"}, {"text", text}}}},
                  {"stop_reason", "end_turn"},
                  {"usage",
                   {{"input_tokens", priced.usage.input},
                    {"output_tokens", static_cast<int64_t>(text.size() / 4 + 1)},
                    {"cache_read_input_tokens", priced.usage.cache_read},
                    {"cache_creation_input_tokens", priced.usage.cache_write}}}};
  return FakeReply::Json(200, message.dump());
}

}  // namespace kforge::fakes
