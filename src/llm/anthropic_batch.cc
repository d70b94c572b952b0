#include "kforge/common/json_fields.h"
// The Anthropic provider over the Message Batches API: a batch is created with its requests inline,
// polled until `processing_status` is "ended", and its results read as JSON lines.
#include <ctime>
#include <map>

#include "llm/batch_provider.h"
#include "llm/providers.h"

namespace kforge::llm {
namespace {

using nlohmann::json;

class AnthropicBatchProvider : public BatchProvider {
 public:
  AnthropicBatchProvider(std::string base_url, std::string key, const ProviderOptions& o)
      : BatchProvider(std::move(base_url), std::move(key), o) {
    Start();
  }
  ~AnthropicBatchProvider() override { Stop(); }

  ProviderKind Kind() const override { return ProviderKind::kAnthropic; }
  std::string Identity() const override { return "anthropic " + base_url(); }
  std::optional<json> WireBody(const ChatRequest& request) const override {
    json body = AnthropicRequestBody(request, /*stream=*/false);
    body.merge_patch(options().extra_body);
    return body;
  }

 private:
  std::string RequestProblem(const ChatRequest& request) const override {
    return AnthropicRequestProblem(request);
  }
  std::vector<std::pair<std::string, std::string>> ApiHeaders() const override {
    return {{"x-api-key", key()}, {"anthropic-version", options().anthropic_version}};
  }

  /// The error of a failed exchange with the batches API, as an attempt every request of it gets.
  Attempt ExchangeFailure(const HttpResult& http, const std::string& what) const {
    Attempt a = AnthropicAttempt(http, std::time(nullptr), secrets());
    if (a.response.ok())
      a.response.error = {ErrorKind::kMalformedResponse, http.status, what + ": unexpected reply"};
    a.response.error.message =
        SanitizeMessage("message batch: " + what + ": " + a.response.error.message, secrets());
    return a;
  }

  std::variant<std::string, Attempt> Create(const std::vector<BatchRequest>& requests) override {
    json lines = json::array();
    for (const auto& [id, params] : requests) lines.push_back({{"custom_id", id}, {"params", params}});
    HttpResult created =
        Fetch(base_url() + "/v1/messages/batches", common::JsonText(json{{"requests", lines}}));
    json batch = json::parse(created.body, nullptr, false);
    if (created.status != 200 || !batch.is_object() || !batch.contains("id") || !batch["id"].is_string())
      return ExchangeFailure(created, "creating a batch of " + std::to_string(requests.size()));
    return batch["id"].get<std::string>();
  }

  BatchResults Collect(const std::string& batch_id) override {
    const std::string url = base_url() + "/v1/messages/batches/" + batch_id;
    json status;
    while (true) {
      HttpResult http = FetchPatiently(url);
      status = json::parse(http.body, nullptr, false);
      if (http.status != 200 || !status.is_object())
        return FailedBatch(ExchangeFailure(http, "polling " + batch_id));
      if (status.value("processing_status", "") == "ended") break;
      if (stopping()) return {};
      Sleep(options().batch_poll_s);
    }
    HttpResult http = FetchPatiently(status.value("results_url", url + "/results"));
    if (http.status != 200) return FailedBatch(ExchangeFailure(http, "results of " + batch_id));
    BatchResults results;
    ForEachResultLine(http.body, [&](const json& line) {
      if (!line.contains("result")) return;
      const json& result = line["result"];
      const std::string type = result.value("type", "");
      HttpResult one;
      if (type == "succeeded") {
        one.status = 200;
        one.body = common::JsonText(result.value("message", json()));
      } else if (type == "errored") {
        json error = result.value("error", json());
        one.status = StatusOfApiError(ParseApiError(error));
        one.body = common::JsonText(error);
      } else {  // canceled, expired: never run, not billed
        results.not_run[line["custom_id"]] = type;
        return;
      }
      results.by_id[line["custom_id"]] = AnthropicAttempt(one, std::time(nullptr), secrets());
    });
    return results;
  }
};

}  // namespace

std::unique_ptr<Provider> MakeAnthropicBatchProvider(std::string base_url, std::string api_key,
                                                     const ProviderOptions& o) {
  return std::make_unique<AnthropicBatchProvider>(std::move(base_url), std::move(api_key), o);
}

}  // namespace kforge::llm
