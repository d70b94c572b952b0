// The replay provider: serves the replies of a cassette (JSON lines written by --record), matched by
// RequestKey, or for hand-written lines by the request's tag (generate tags "TASK turn N"), which
// survives prompt and feedback changes. Repeated requests get the recorded replies in order, then
// the last again.
#include <map>
#include <mutex>
#include <vector>

#include "kforge/common/jsonl.h"
#include "kforge/common/text.h"
#include "llm/providers.h"

namespace kforge::llm {
namespace {

/// Why a cassette line is not a JSON object: cut short (a torn write), not UTF-8, not JSON, or
/// another JSON value.
std::string WhyNotAnObject(const std::string& text) {
  const std::string cut = "cut short: the line ends inside its JSON (a torn write?)";
  size_t bad = 0;
  if (!common::IsValidUtf8(text, &bad))
    return bad + 4 > text.size() ? cut : "not UTF-8 (byte " + std::to_string(bad + 1) + ")";
  try {
    if (!nlohmann::json::parse(text).is_object()) return "a JSON value that is not an object";
  } catch (const nlohmann::json::parse_error& e) {
    return e.byte >= text.size() ? cut : "not JSON (at byte " + std::to_string(e.byte) + ")";
  }
  return "not a JSON object";
}

class ReplayProvider : public Provider {
 public:
  ReplayProvider(std::string path, std::map<std::string, std::vector<ChatResponse>> entries,
                 std::map<std::string, std::vector<ChatResponse>> by_tag)
      : path_(std::move(path)), entries_(std::move(entries)), by_tag_(std::move(by_tag)) {}
  ProviderKind Kind() const override { return ProviderKind::kReplay; }
  std::string Identity() const override { return "replay " + path_; }

  void Send(const ChatRequest& request, AttemptCallback done) override {
    const std::string key = RequestKey(request);
    Attempt a;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const std::vector<ChatResponse>* replies = nullptr;
      std::string served_key = key;
      if (auto it = entries_.find(key); it != entries_.end()) {
        replies = &it->second;
      } else if (auto tagged = by_tag_.find(request.tag); !request.tag.empty() && tagged != by_tag_.end()) {
        replies = &tagged->second;
        served_key = "tag:" + request.tag;
      }
      if (!replies) {
        a.response.error =
            ErrorInfo{ErrorKind::kReplayMiss, 0,
                      "cassette " + path_ + " has no reply for request " + key.substr(0, 16) + " (model '" +
                          request.model + "', " + std::to_string(request.messages.size()) + " messages" +
                          (request.tag.empty() ? "" : ", tag '" + request.tag + "'") + ")"};
      } else {
        size_t& next = served_[served_key];
        a.response = (*replies)[std::min(next, replies->size() - 1)];
        ++next;
      }
    }
    done(std::move(a));
  }

 private:
  std::string path_;
  std::map<std::string, std::vector<ChatResponse>> entries_;
  std::map<std::string, std::vector<ChatResponse>> by_tag_;
  std::mutex mu_;
  std::map<std::string, size_t> served_;
};

}  // namespace

StatusOr<std::unique_ptr<Provider>> MakeReplayProvider(const std::string& path) {
  StatusOr<std::unique_ptr<common::JsonlReader>> reader = common::JsonlReader::Open(path);
  if (!reader.ok()) return Status::NotFound("cassette " + path + ": cannot open");
  std::map<std::string, std::vector<ChatResponse>> entries, by_tag;
  while (std::optional<common::JsonlReader::Line> line = (*reader)->NextText()) {
    if (!line->value.ok()) return line->value.status();  // a line too long, a failed read
    const std::string where = path + ":" + std::to_string(line->number);
    nlohmann::json j = nlohmann::json::parse(line->text, nullptr, false);
    if (!j.is_object()) return Status::ParseError(where + ": " + WhyNotAnObject(line->text));
    if (j.value("schema", "") != "kforge.cassette/1")
      return Status::ParseError(where + ": schema must be kforge.cassette/1");
    const bool keyed = j.contains("key") && j["key"].is_string();
    const bool tagged = j.contains("tag") && j["tag"].is_string();
    if (!keyed && !tagged) return Status::ParseError(where + ": needs a \"key\" or a \"tag\"");
    if (!j.contains("response")) return Status::ParseError(where + ": missing response");
    StatusOr<ChatResponse> r = ChatResponseFromJson(j["response"]);
    if (!r.ok()) return r.status().WithContext(where);
    r->attempts = 0;
    r->from_cache = false;
    if (keyed) {
      entries[j["key"].get<std::string>()].push_back(std::move(*r));
    } else {
      by_tag[j["tag"].get<std::string>()].push_back(std::move(*r));
    }
  }
  return std::unique_ptr<Provider>(
      std::make_unique<ReplayProvider>(path, std::move(entries), std::move(by_tag)));
}

}  // namespace kforge::llm
