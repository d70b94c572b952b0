// ResponseCache: successful replies on disk under DIR/<key[0:2]>/<key>.json, written atomically,
// so that a rerun of a crashed batch does not pay for the same request twice.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "kforge/common/status.h"
#include "kforge/llm/chat.h"

namespace kforge::llm {

class ResponseCache {
 public:
  using Redactor = std::function<std::string(std::string)>;
  /// Creates `dir` when missing. `redact` masks secrets in the text of every file written.
  static StatusOr<ResponseCache> Open(const std::string& dir, Redactor redact = {});
  /// The key: SHA-256 of the provider identity (name and endpoint), the canonical request and its
  /// cache_scope (the sample and turn). The API key is not part of any.
  static std::string Key(const std::string& provider_identity, const ChatRequest& request);

  /// A missing, unreadable or corrupt entry is a miss.
  std::optional<ChatResponse> Get(const std::string& key) const;
  /// Writes a temporary file and renames it into place.
  Status Put(const std::string& key, const ChatResponse& response) const;

  const std::string& dir() const { return dir_; }

 private:
  ResponseCache(std::string dir, Redactor redact) : dir_(std::move(dir)), redact_(std::move(redact)) {}
  std::string PathOf(const std::string& key) const;
  std::string dir_;
  Redactor redact_;
};

}  // namespace kforge::llm
