// Server-sent events: line parsing, and when a request is streamed.
#include <string>

#include "llm/wire.h"

namespace kforge::llm {

std::optional<int> AnthropicNonStreamingCap(const std::string& model) {
  for (const char* prefix : {"claude-opus-4-0", "claude-opus-4-1", "claude-opus-4-2025", "claude-opus-4@",
                             "claude-4-opus", "anthropic.claude-opus-4-2025", "anthropic.claude-opus-4-1-"})
    if (model.rfind(prefix, 0) == 0) return 8192;
  return std::nullopt;
}

void SseParser::Line() {
  if (line_[0] == ':') return;  // a comment (keep-alive)
  const size_t colon = line_.find(':');
  const std::string field = line_.substr(0, colon);
  std::string value = colon == std::string::npos ? "" : line_.substr(colon + 1);
  if (!value.empty() && value[0] == ' ') value.erase(0, 1);
  if (field == "event") {
    current_.event = std::move(value);
  } else if (field == "data") {
    if (has_data_) current_.data += '\n';
    current_.data += value;
    has_data_ = true;
  }
}

bool ShouldStream(const ProviderOptions& options, const ChatRequest& request, std::optional<int> non_streaming_cap) {
  switch (options.stream) {
    case StreamMode::kAlways:
      return true;
    case StreamMode::kNever:
      return false;
    case StreamMode::kAuto:
      break;
  }
  if (request.max_tokens > options.stream_above_max_tokens) return true;
  return non_streaming_cap && request.max_tokens > *non_streaming_cap;
}

}  // namespace kforge::llm
