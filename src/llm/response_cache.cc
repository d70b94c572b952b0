// On-disk response cache.
#include "llm/response_cache.h"

#include <unistd.h>
#include <cstdint>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kforge/common/files.h"
#include "kforge/common/hash.h"
#include "kforge/common/json_fields.h"

namespace kforge::llm {

namespace fs = std::filesystem;

StatusOr<ResponseCache> ResponseCache::Open(const std::string& dir, Redactor redact) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) return Status::IoError("cache directory " + dir + ": " + ec.message());
  return ResponseCache(dir, std::move(redact));
}

std::string ResponseCache::Key(const std::string& provider_identity, const ChatRequest& request) {
  nlohmann::json j = ToJson(request);
  j.erase("tag");
  std::string text = provider_identity + "\n" + common::JsonText(j);
  // Without a scope the key is what it always was: caches written before scopes stay valid.
  if (!request.cache_scope.empty()) text += "\nscope " + request.cache_scope;
  return common::Sha256Hex(text);
}

std::string ResponseCache::PathOf(const std::string& key) const {
  return dir_ + "/" + key.substr(0, 2) + "/" + key + ".json";
}

std::optional<ChatResponse> ResponseCache::Get(const std::string& key) const {
  StatusOr<std::string> text = common::ReadFile(PathOf(key));
  if (!text.ok()) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || j.value("schema", "") != "kforge.llm_cache/1" || j.value("key", "") != key ||
      !j.contains("response"))
    return std::nullopt;
  StatusOr<ChatResponse> r = ChatResponseFromJson(j["response"]);
  if (!r.ok() || !r->ok()) return std::nullopt;
  return std::move(*r);
}

Status ResponseCache::Put(const std::string& key, const ChatResponse& response) const {
  const std::string path = PathOf(key);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return Status::IoError("cache " + path + ": " + ec.message());
  nlohmann::json j = {{"schema", "kforge.llm_cache/1"}, {"key", key}, {"response", ToJson(response)}};
  std::string text = common::JsonText(j);
  if (redact_) text = redact_(std::move(text));
  return common::WriteFileAtomic(path, text + "\n").WithContext("cache");
}

}  // namespace kforge::llm
