// The OpenAI-compatible provider over the Batch API: the requests are uploaded as a JSON-lines file
// (purpose "batch"), a batch is created on /chat/completions, polled until it reaches a final status,
// and its output and error files are read back.
#include <ctime>

#include "kforge/common/hash.h"
#include "kforge/common/json_fields.h"
#include "llm/batch_provider.h"
#include "llm/providers.h"

namespace kforge::llm {
namespace {

using nlohmann::json;

/// A multipart/form-data body holding `purpose` and the file `content`.
std::string Multipart(const std::string& boundary, const std::string& content) {
  return "--" + boundary +
         "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n"
         "--" +
         boundary +
         "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"kforge-batch.jsonl\"\r\n"
         "Content-Type: application/jsonl\r\n\r\n" +
         content + "\r\n--" + boundary + "--\r\n";
}

class OpenAiBatchProvider : public BatchProvider {
 public:
  OpenAiBatchProvider(std::string base_url, std::string key, const ProviderOptions& o)
      : BatchProvider(std::move(base_url), std::move(key), o) {
    Start();
  }
  ~OpenAiBatchProvider() override { Stop(); }

  ProviderKind Kind() const override { return ProviderKind::kOpenAi; }
  std::string Identity() const override { return "openai " + base_url(); }
  std::optional<json> WireBody(const ChatRequest& request) const override {
    json body = OpenAiRequestBody(request, ResolveOpenAiDialect(options(), base_url(), request.model), false);
    body.merge_patch(options().extra_body);
    return body;
  }

 private:
  std::string RequestProblem(const ChatRequest&) const override { return ""; }
  std::vector<std::pair<std::string, std::string>> ApiHeaders() const override {
    if (key().empty()) return {};
    return {{"authorization", "Bearer " + key()}};
  }

  /// The error of a failed exchange with the files or batches API, as an attempt every request gets.
  Attempt ExchangeFailure(const HttpResult& http, const std::string& what) const {
    Attempt a = OpenAiAttempt(http, std::time(nullptr), secrets());
    if (a.response.ok())
      a.response.error = {ErrorKind::kMalformedResponse, http.status, what + ": unexpected reply"};
    a.response.error.message = SanitizeMessage("batch: " + what + ": " + a.response.error.message, secrets());
    return a;
  }

  /// `http`'s body as an object with a string "id", or nullopt.
  static std::optional<std::string> IdOf(const HttpResult& http) {
    json j = json::parse(http.body, nullptr, false);
    if (http.status != 200 || !j.is_object() || !j.contains("id") || !j["id"].is_string())
      return std::nullopt;
    return j["id"].get<std::string>();
  }

  std::variant<std::string, Attempt> Create(const std::vector<BatchRequest>& requests) override {
    std::string lines;
    for (const auto& [id, body] : requests)
      lines += common::JsonText(
                   {{"custom_id", id}, {"method", "POST"}, {"url", "/v1/chat/completions"}, {"body", body}}) +
               "\n";
    const std::string boundary = "kforge-" + common::Sha256Hex(lines).substr(0, 32);
    const std::string what = "uploading a batch of " + std::to_string(requests.size());
    HttpResult uploaded =
        Fetch(base_url() + "/files", Multipart(boundary, lines), "multipart/form-data; boundary=" + boundary);
    std::optional<std::string> file_id = IdOf(uploaded);
    if (!file_id) return ExchangeFailure(uploaded, what);
    HttpResult created = Fetch(
        base_url() + "/batches",
        json{{"input_file_id", *file_id}, {"endpoint", "/v1/chat/completions"}, {"completion_window", "24h"}}
            .dump());
    std::optional<std::string> batch_id = IdOf(created);
    if (!batch_id) return ExchangeFailure(created, "creating a batch of " + std::to_string(requests.size()));
    return *batch_id;
  }

  /// Reads one output or error file into `results`; false when it could not be fetched.
  bool ReadFile(const std::string& file_id, BatchResults& results) {
    HttpResult http = FetchPatiently(base_url() + "/files/" + file_id + "/content");
    if (http.status != 200) {
      results.failure = ExchangeFailure(http, "reading file " + file_id);
      return false;
    }
    ForEachResultLine(http.body, [&](const json& line) {
      const json response = line.value("response", json());
      HttpResult one;
      if (response.is_object() && response.contains("status_code") &&
          response["status_code"].is_number_integer()) {
        one.status = response["status_code"].get<int>();
        one.body = common::JsonText(response.value("body", json::object()));
      } else {  // a request the server never ran: expired, cancelled, or an error of its own
        const json error = line.value("error", json());
        const std::string code = error.is_object() ? error.value("code", "") : "";
        if (code == "batch_expired" || code == "batch_cancelled") {
          results.not_run[line["custom_id"]] = code == "batch_expired" ? "expired" : "canceled";
          return;
        }
        results.by_id[line["custom_id"]] =
            Failure(ErrorKind::kServer, "batch request " + (code.empty() ? std::string("not run") : code) +
                                            ": " + (error.is_object() ? error.value("message", "") : ""));
        return;
      }
      results.by_id[line["custom_id"]] = OpenAiAttempt(one, std::time(nullptr), secrets());
    });
    return true;
  }

  BatchResults Collect(const std::string& batch_id) override {
    const std::string url = base_url() + "/batches/" + batch_id;
    json status;
    std::string state;
    while (true) {
      HttpResult http = FetchPatiently(url);
      status = json::parse(http.body, nullptr, false);
      if (http.status != 200 || !status.is_object())
        return FailedBatch(ExchangeFailure(http, "polling " + batch_id));
      state = status.value("status", "");
      if (state == "completed" || state == "failed" || state == "expired" || state == "cancelled") break;
      if (stopping()) return {};
      Sleep(options().batch_poll_s);
    }
    BatchResults results;
    if (state == "failed") {  // the input file was refused: the first error says why
      json errors = status.value("errors", json::object()).value("data", json::array());
      json first = errors.is_array() && !errors.empty() ? errors[0] : json::object();
      HttpResult refused;
      refused.status = 400;
      refused.body = common::JsonText(json{{"error",
                                            {{"message", first.value("message", "batch failed validation")},
                                             {"code", first.value("code", "")}}}});
      results.failure = ExchangeFailure(refused, "batch " + batch_id + " failed");
      return results;
    }
    // Expired and cancelled batches keep the results they finished; the rest get "no result".
    for (const char* field : {"output_file_id", "error_file_id"})
      if (status.contains(field) && status[field].is_string() && !status[field].get<std::string>().empty())
        if (!ReadFile(status[field].get<std::string>(), results)) return results;
    return results;
  }
};

}  // namespace

std::unique_ptr<Provider> MakeOpenAiBatchProvider(std::string base_url, std::string api_key,
                                                  const ProviderOptions& o) {
  return std::make_unique<OpenAiBatchProvider>(std::move(base_url), std::move(api_key), o);
}

}  // namespace kforge::llm
