// The NVRTC helper's wire: the one place its JSON keys and result names are spelled.
#include "cuda/nvrtc_wire.h"

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "kforge/common/base64.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/names.h"

namespace kforge::cuda::internal {
namespace {

using nlohmann::json;
using Kind = NvrtcOutcome::Kind;

constexpr common::NameTable<Kind, 6> kResultNames{{
    {Kind::kSuccess, "success"},
    {Kind::kCompileError, "compile_error"},
    {Kind::kInvalidOption, "invalid_option"},
    {Kind::kCancelled, "cancelled"},
    {Kind::kOutOfMemory, "out_of_memory"},
    {Kind::kDied, "died"},
}};
static_assert(kResultNames.MatchesEnum());

constexpr std::string_view kFailure = "failure";

json Parse(std::string_view frame, const char* what) {
  json j = json::parse(frame, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw std::runtime_error(std::string("NVRTC helper: malformed ") + what + ": not a JSON object");
  return j;
}

/// Reads `key` of `j` as T, naming the key when it is missing or of another type.
template <typename T>
T Field(const json& j, const char* key, const char* what) {
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::runtime_error(std::string("NVRTC helper: malformed ") + what + ": field \"" + key + "\"");
  }
}

}  // namespace

std::string NvrtcHelloFrame(std::string_view nvrtc_version) {
  return common::JsonText({{"schema", kNvrtcWireSchema}, {"nvrtc", nvrtc_version}});
}

bool IsNvrtcHello(std::string_view frame) {
  const json j = json::parse(frame, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("schema") && j.at("schema") == kNvrtcWireSchema;
}

std::string NvrtcJobFrame(const NvrtcJob& job, std::chrono::milliseconds budget) {
  json headers = json::array();
  for (const InMemoryHeader& h : job.headers) headers.push_back({h.name, h.text});
  // Strict: a source is compiled as given or not at all (a byte that is not UTF-8 throws).
  return json({{"source", job.source},
               {"name", job.name},
               {"options", job.options},
               {"headers", headers},
               {"name_expressions", job.name_expressions},
               {"budget_ms", std::max<int64_t>(0, budget.count())}})
      .dump();
}

NvrtcRequest ParseNvrtcJobFrame(std::string_view frame) {
  const char* what = "job";
  const json j = Parse(frame, what);
  NvrtcRequest request;
  request.job.source = Field<std::string>(j, "source", what);
  request.job.name = Field<std::string>(j, "name", what);
  request.job.options = Field<std::vector<std::string>>(j, "options", what);
  for (const auto& pair : Field<std::vector<std::pair<std::string, std::string>>>(j, "headers", what))
    request.job.headers.push_back({pair.first, pair.second});
  request.job.name_expressions = Field<std::vector<std::string>>(j, "name_expressions", what);
  request.budget = std::chrono::milliseconds(std::max<int64_t>(0, Field<int64_t>(j, "budget_ms", what)));
  return request;
}

// An outcome's NVRTC log may hold bytes that are not UTF-8: JsonText replaces them, the frame is kept.
std::string NvrtcOutcomeFrame(const NvrtcOutcome& outcome) {
  json j = {{"result", kResultNames.Name(outcome.kind)}, {"log", outcome.log}};
  if (outcome.kind != Kind::kSuccess) return common::JsonText(j);
  j["cubin_b64"] = common::Base64Encode(outcome.cubin);
  j["lowered_names"] = outcome.lowered_names;
  j["opened"] = outcome.opened ? json(*outcome.opened) : json(nullptr);
  return common::JsonText(j);
}

std::string NvrtcFailureFrame(std::string_view message) {
  return common::JsonText({{"result", kFailure}, {"message", message}});
}

NvrtcOutcome ParseNvrtcOutcomeFrame(std::string_view frame) {
  const char* what = "answer";
  const json j = Parse(frame, what);
  const std::string result = Field<std::string>(j, "result", what);
  if (result == kFailure) {
    const json message = j.value("message", json("failed"));
    throw std::runtime_error("NVRTC helper: " + (message.is_string() ? message.get<std::string>() : "failed"));
  }
  const std::optional<Kind> kind = kResultNames.Parse(result);
  if (!kind || *kind == Kind::kDied)
    throw std::runtime_error("NVRTC helper: unknown result \"" + result.substr(0, 40) + "\"");
  NvrtcOutcome out;
  out.kind = *kind;
  out.log = Field<std::string>(j, "log", what);
  if (j.contains("cubin_b64")) {
    StatusOr<std::string> cubin = common::Base64Decode(Field<std::string>(j, "cubin_b64", what));
    if (!cubin.ok()) throw std::runtime_error("NVRTC helper: bad CUBIN encoding");
    out.cubin = std::move(*cubin);
  }
  if (j.contains("lowered_names"))
    out.lowered_names = Field<std::map<std::string, std::string>>(j, "lowered_names", what);
  if (j.contains("opened") && j.at("opened").is_array())
    out.opened = Field<std::vector<std::string>>(j, "opened", what);
  return out;
}

}  // namespace kforge::cuda::internal
