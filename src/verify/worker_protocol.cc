// kforge.worker/1 messages to and from JSON. Readers are strict about types (a field of the wrong
// type is an error naming it) and lenient about absence (optional fields keep their defaults).
#include "kforge/verify/worker_protocol.h"

#include <limits>
#include <type_traits>

#include "kforge/common/base64.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/plan_split.h"

namespace kforge::verify {
namespace {

using nlohmann::json;

/// Reads the fields of one message object; errors read "<message>: <path>: what".
class Reader {
 public:
  Reader(const json& object, std::string message, std::string path = "")
      : object_(object), message_(std::move(message)), path_(std::move(path)) {}

  Status CheckObject() const {
    if (object_.is_object()) return Status::Ok();
    return Status::InvalidArgument(message_ + ": " + (path_.empty() ? "" : path_ + ": ") +
                                   "expected an object, got " + common::JsonTypeName(object_));
  }

  /// Sets `out` from `key` when it is there; fails when it has the wrong type, or is required and missing.
  template <typename T>
  Status Read(std::string_view key, T& out, bool required = false) const {
    auto it = object_.find(key);
    if (it == object_.end()) return required ? Bad(key, "missing") : Status::Ok();
    const json& value = *it;
    if constexpr (std::is_same_v<T, bool>) {
      if (!value.is_boolean()) return Expected(key, "a boolean", value);
      out = value.get<bool>();
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      if (!value.is_number_unsigned()) return Expected(key, "an unsigned integer", value);
      out = value.get<uint64_t>();
    } else if constexpr (std::is_integral_v<T>) {
      if (!value.is_number_integer()) return Expected(key, "an integer", value);
      if (value.is_number_unsigned() ? value.get<uint64_t>() > uint64_t(std::numeric_limits<T>::max())
                                     : value.get<int64_t>() < int64_t(std::numeric_limits<T>::min()) ||
                                           value.get<int64_t>() > int64_t(std::numeric_limits<T>::max()))
        return Bad(key, "integer out of range");
      out = value.get<T>();
    } else if constexpr (std::is_same_v<T, double>) {
      if (!value.is_number()) return Expected(key, "a number", value);
      out = value.get<double>();
    } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::filesystem::path>) {
      if (!value.is_string()) return Expected(key, "a string", value);
      out = value.get<std::string>();
    } else {
      static_assert(std::is_same_v<T, json>);
      out = value;
    }
    return Status::Ok();
  }

  /// A JSON value that must be an object (or null when `nullable`).
  Status ReadObject(std::string_view key, json& out, bool nullable = false) const {
    auto it = object_.find(key);
    if (it == object_.end()) return Status::Ok();
    if (!it->is_object() && !(nullable && it->is_null()))
      return Expected(key, nullable ? "an object or null" : "an object", *it);
    out = *it;
    return Status::Ok();
  }

  Status ReadArray(std::string_view key, json& out) const {
    auto it = object_.find(key);
    if (it == object_.end()) return Status::Ok();
    if (!it->is_array()) return Expected(key, "an array", *it);
    out = *it;
    return Status::Ok();
  }

  /// `status`, one of a closed set's names (`names`, a common::NameTable).
  template <typename E, typename Table>
  Status ReadNamed(const Table& names, E& out) const {
    std::string name;
    KFORGE_RETURN_IF_ERROR(Read("status", name, /*required=*/true));
    std::optional<E> value = names.Parse(name);
    if (!value) return Bad("status", "unknown status \"" + name.substr(0, 40) + "\"");
    out = *value;
    return Status::Ok();
  }

  Status ReadStatus(common::VerdictStatus& out) const {
    std::string name;
    KFORGE_RETURN_IF_ERROR(Read("status", name, /*required=*/true));
    auto status = common::ParseVerdictStatus(name);
    if (!status.ok()) return Bad("status", "unknown status \"" + name.substr(0, 40) + "\"");
    out = *status;
    return Status::Ok();
  }

  std::string Child(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  const std::string& message() const { return message_; }

  Status Bad(std::string_view key, const std::string& what) const {
    return Status::InvalidArgument(message_ + ": " + Child(key) + ": " + what);
  }

 private:
  Status Expected(std::string_view key, const char* what, const json& got) const {
    return Bad(key, std::string("expected ") + what + ", got " + common::JsonTypeName(got));
  }

  const json& object_;
  std::string message_;
  std::string path_;
};

}  // namespace

std::string RequestOp(const json& request) {
  if (!request.is_object()) return "";
  auto it = request.find("op");
  return it != request.end() && it->is_string() ? it->get<std::string>() : "";
}

json FailureReplyJson(common::VerdictStatus status, const std::string& message) {
  return {{"status", common::VerdictStatusName(status)}, {"message", message}};
}

json HelloRequest::ToJson() const { return {{"op", "hello"}, {"peak", peak}}; }

StatusOr<HelloRequest> HelloRequest::FromJson(const json& json) {
  Reader in(json, "hello request");
  KFORGE_RETURN_IF_ERROR(in.CheckObject());
  HelloRequest request;
  KFORGE_RETURN_IF_ERROR(in.Read("peak", request.peak));
  return request;
}

json HelloReply::ToJson() const {
  if (status != common::VerdictStatus::kOk) return FailureReplyJson(status, message);
  json out = {{"status", common::VerdictStatusName(status)}, {"device", device}};
  if (peak) out["peak"] = *peak;
  return out;
}

StatusOr<HelloReply> HelloReply::FromJson(const json& json) {
  Reader in(json, "hello reply");
  KFORGE_RETURN_IF_ERROR(in.CheckObject());
  HelloReply reply;
  KFORGE_RETURN_IF_ERROR(in.ReadStatus(reply.status));
  KFORGE_RETURN_IF_ERROR(in.Read("message", reply.message));
  KFORGE_RETURN_IF_ERROR(in.ReadObject("device", reply.device, /*nullable=*/true));
  if (json.contains("peak")) {
    reply.peak.emplace();
    KFORGE_RETURN_IF_ERROR(in.ReadObject("peak", *reply.peak, /*nullable=*/true));
  }
  return reply;
}

json CheckRequest::ToJson() const {
  return {{"op", "check"},
          {"task_dir", task_dir.string()},
          {"solution", common::SolutionToJson(solution)},
          {"cubin_b64", common::Base64Encode(cubin)},
          {"trials", trials},
          {"seed", seed},
          {"kernel_timeout_ms", kernel_timeout.count()}};
}

StatusOr<CheckRequest> CheckRequest::FromJson(const json& json) {
  Reader in(json, "check request");
  KFORGE_RETURN_IF_ERROR(in.CheckObject());
  CheckRequest request;
  KFORGE_RETURN_IF_ERROR(in.Read("task_dir", request.task_dir, /*required=*/true));
  nlohmann::json solution;
  KFORGE_RETURN_IF_ERROR(in.ReadObject("solution", solution));
  if (solution.is_null()) return in.Bad("solution", "missing");
  KFORGE_ASSIGN_OR_RETURN(request.solution, common::SolutionFromJson(solution, "check request: solution"));
  std::string cubin_b64;
  KFORGE_RETURN_IF_ERROR(in.Read("cubin_b64", cubin_b64, /*required=*/true));
  auto cubin = common::Base64Decode(cubin_b64);
  if (!cubin.ok()) return in.Bad("cubin_b64", cubin.status().message());
  request.cubin = std::move(*cubin);
  KFORGE_RETURN_IF_ERROR(in.Read("trials", request.trials));
  KFORGE_RETURN_IF_ERROR(in.Read("seed", request.seed));
  int64_t timeout_ms = request.kernel_timeout.count();
  KFORGE_RETURN_IF_ERROR(in.Read("kernel_timeout_ms", timeout_ms));
  if (request.trials < 0) return in.Bad("trials", "must not be negative");
  if (timeout_ms <= 0) return in.Bad("kernel_timeout_ms", "must be positive");
  request.kernel_timeout = std::chrono::milliseconds(timeout_ms);
  return request;
}

json CheckTiming::ToJson() const {
  json timing = {{"gpu_ms", gpu_ms}, {"reference_load_ms", reference_load_ms}, {"phases_ms", phases_ms}};
  if (plan_split) timing[common::kPlanSplitKey] = common::PlanSplitToJson(*plan_split);
  return timing;
}

StatusOr<CheckTiming> CheckTiming::FromJson(const json& json) {
  Reader in(json, "check reply", "timing");
  KFORGE_RETURN_IF_ERROR(in.CheckObject());
  CheckTiming timing;
  KFORGE_RETURN_IF_ERROR(in.Read("gpu_ms", timing.gpu_ms));
  KFORGE_RETURN_IF_ERROR(in.Read("reference_load_ms", timing.reference_load_ms));
  KFORGE_RETURN_IF_ERROR(in.ReadObject("phases_ms", timing.phases_ms));
  if (auto it = json.find(common::kPlanSplitKey); it != json.end()) {
    auto split = common::PlanSplitFromJson(*it, "timing." + std::string(common::kPlanSplitKey));
    if (!split.ok()) return Status::InvalidArgument("check reply: " + split.status().message());
    timing.plan_split = *split;
  }
  return timing;
}

json CheckReply::ToJson() const {
  return {{"status", common::VerdictStatusName(status)},
          {"message", message},
          {"trials", trials},
          {"checks", checks},
          {"device", device},
          {"timing", timing ? timing->ToJson() : json::object()},
          {"memory", memory},
          {"exiting", exiting}};
}

StatusOr<CheckReply> CheckReply::FromJson(const json& json) {
  Reader in(json, "check reply");
  KFORGE_RETURN_IF_ERROR(in.CheckObject());
  CheckReply reply;
  KFORGE_RETURN_IF_ERROR(in.ReadStatus(reply.status));
  KFORGE_RETURN_IF_ERROR(in.Read("message", reply.message));
  KFORGE_RETURN_IF_ERROR(in.ReadArray("trials", reply.trials));
  KFORGE_RETURN_IF_ERROR(in.ReadObject("checks", reply.checks));
  KFORGE_RETURN_IF_ERROR(in.ReadObject("device", reply.device, /*nullable=*/true));
  if (json.contains("timing") && !(json["timing"].is_object() && json["timing"].empty())) {
    KFORGE_ASSIGN_OR_RETURN(reply.timing, CheckTiming::FromJson(json["timing"]));
  }
  KFORGE_RETURN_IF_ERROR(in.ReadObject("memory", reply.memory, /*nullable=*/true));
  KFORGE_RETURN_IF_ERROR(in.Read("exiting", reply.exiting));
  return reply;
}

json TaskCheckRequest::ToJson() const {
  return {{"op", "task_check"}, {"task_dir", task_dir.string()}, {"seed", seed}};
}

StatusOr<TaskCheckRequest> TaskCheckRequest::FromJson(const json& json) {
  Reader in(json, "task_check request");
  KFORGE_RETURN_IF_ERROR(in.CheckObject());
  TaskCheckRequest request;
  KFORGE_RETURN_IF_ERROR(in.Read("task_dir", request.task_dir, /*required=*/true));
  KFORGE_RETURN_IF_ERROR(in.Read("seed", request.seed));
  return request;
}

json TaskCheckVariant::ToJson() const {
  return {{"variant", variant},           {"load_ms", load_ms}, {"first_run_ms", first_run_ms},
          {"reference_ms", reference_ms}, {"checks", checks},   {"memory", memory}};
}

StatusOr<TaskCheckVariant> TaskCheckVariant::FromJson(const json& json, const std::string& path) {
  Reader in(json, "task_check reply", path);
  KFORGE_RETURN_IF_ERROR(in.CheckObject());
  TaskCheckVariant v;
  KFORGE_RETURN_IF_ERROR(in.Read("variant", v.variant, /*required=*/true));
  KFORGE_RETURN_IF_ERROR(in.Read("load_ms", v.load_ms));
  KFORGE_RETURN_IF_ERROR(in.Read("first_run_ms", v.first_run_ms));
  KFORGE_RETURN_IF_ERROR(in.Read("reference_ms", v.reference_ms));
  KFORGE_RETURN_IF_ERROR(in.ReadObject("checks", v.checks));
  KFORGE_RETURN_IF_ERROR(in.ReadObject("memory", v.memory));
  return v;
}

json TaskCheckReply::ToJson() const {
  json out = {{"status", TaskCheckStatusName(status)}, {"message", message}, {"variants", json::array()}};
  for (const TaskCheckVariant& v : variants) out["variants"].push_back(v.ToJson());
  return out;
}

StatusOr<TaskCheckReply> TaskCheckReply::FromJson(const json& json) {
  Reader in(json, "task_check reply");
  KFORGE_RETURN_IF_ERROR(in.CheckObject());
  TaskCheckReply reply;
  KFORGE_RETURN_IF_ERROR(in.ReadNamed(kTaskCheckStatusNames, reply.status));
  KFORGE_RETURN_IF_ERROR(in.Read("message", reply.message));
  nlohmann::json variants = json::array();
  KFORGE_RETURN_IF_ERROR(in.ReadArray("variants", variants));
  for (size_t i = 0; i < variants.size(); ++i) {
    KFORGE_ASSIGN_OR_RETURN(TaskCheckVariant v,
                            TaskCheckVariant::FromJson(variants[i], "variants[" + std::to_string(i) + "]"));
    reply.variants.push_back(std::move(v));
  }
  return reply;
}

json TaskAuditRequest::ToJson() const {
  return {{"op", "task_audit"}, {"task_dir", task_dir.string()}, {"seed", seed}, {"trials", trials}};
}

StatusOr<TaskAuditRequest> TaskAuditRequest::FromJson(const json& json) {
  Reader in(json, "task_audit request");
  KFORGE_RETURN_IF_ERROR(in.CheckObject());
  TaskAuditRequest request;
  KFORGE_RETURN_IF_ERROR(in.Read("task_dir", request.task_dir, /*required=*/true));
  KFORGE_RETURN_IF_ERROR(in.Read("seed", request.seed));
  KFORGE_RETURN_IF_ERROR(in.Read("trials", request.trials));
  if (request.trials < 1 || request.trials > 1000) return in.Bad("trials", "must be in [1, 1000]");
  return request;
}

json TaskAuditReply::ToJson() const {
  json out = {{"status", TaskAuditStatusName(status)}, {"message", message}, {"candidates", json::array()}};
  for (const AuditedCandidate& c : candidates)
    out["candidates"].push_back({{"name", c.name}, {"accepted", c.accepted}, {"message", c.message}});
  return out;
}

StatusOr<TaskAuditReply> TaskAuditReply::FromJson(const json& json) {
  Reader in(json, "task_audit reply");
  KFORGE_RETURN_IF_ERROR(in.CheckObject());
  TaskAuditReply reply;
  KFORGE_RETURN_IF_ERROR(in.ReadNamed(kTaskAuditStatusNames, reply.status));
  KFORGE_RETURN_IF_ERROR(in.Read("message", reply.message));
  nlohmann::json candidates = json::array();
  KFORGE_RETURN_IF_ERROR(in.ReadArray("candidates", candidates));
  for (size_t i = 0; i < candidates.size(); ++i) {
    Reader c(candidates[i], "task_audit reply", "candidates[" + std::to_string(i) + "]");
    KFORGE_RETURN_IF_ERROR(c.CheckObject());
    AuditedCandidate candidate;
    KFORGE_RETURN_IF_ERROR(c.Read("name", candidate.name, /*required=*/true));
    KFORGE_RETURN_IF_ERROR(c.Read("accepted", candidate.accepted, /*required=*/true));
    KFORGE_RETURN_IF_ERROR(c.Read("message", candidate.message));
    reply.candidates.push_back(std::move(candidate));
  }
  return reply;
}

}  // namespace kforge::verify
