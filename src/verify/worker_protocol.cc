// kforge.worker/1 messages to and from JSON, read with common::JsonFields: strict about types (a field
// of the wrong type is an error naming it) and lenient about absence (optional fields keep their
// defaults).
#include "kforge/verify/worker_protocol.h"

#include "kforge/common/base64.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/plan_split.h"

namespace kforge::verify {

using nlohmann::json;

std::string RequestOpText(const json& request) {
  if (!request.is_object()) return "";
  auto it = request.find("op");
  return it != request.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<WorkerOp> RequestOp(const json& request) {
  return kWorkerOpNames.Parse(RequestOpText(request));
}

namespace {

/// `read` with the message's name before its error.
template <typename T>
StatusOr<T> WithReplyName(const std::string& message, StatusOr<T> read) {
  if (!read.ok()) return Status::InvalidArgument(message + read.status().message());
  return read;
}

/// The object under "device" (null: none).
Status ReadReplyDevice(const common::JsonFields& in, const std::string& message,
                  std::optional<common::DeviceRecord>& out) {
  nlohmann::json device;
  KFORGE_RETURN_IF_ERROR(in.ReadObject("device", device, /*nullable=*/true));
  KFORGE_ASSIGN_OR_RETURN(out, WithReplyName(message, common::OptionalDeviceRecordFromJson(device, "device")));
  return Status::Ok();
}

/// The object under "memory" (null or absent: none).
Status ReadReplyMemory(const common::JsonFields& in, const std::string& message,
                  std::optional<common::MemoryRecord>& out) {
  nlohmann::json memory;
  KFORGE_RETURN_IF_ERROR(in.ReadObject("memory", memory, /*nullable=*/true));
  if (memory.is_null()) return Status::Ok();
  KFORGE_ASSIGN_OR_RETURN(out, WithReplyName(message, common::MemoryRecordFromJson(memory, "memory")));
  return Status::Ok();
}

}  // namespace

json FailureReplyJson(common::VerdictStatus status, const std::string& message) {
  return {{"status", common::VerdictStatusName(status)}, {"message", message}};
}

json HelloRequest::ToJson() const { return {{"op", WorkerOpName(WorkerOp::kHello)}, {"peak", peak}}; }

StatusOr<HelloRequest> HelloRequest::FromJson(const json& json) {
  common::JsonFields in(json, "", "hello request");
  KFORGE_RETURN_IF_ERROR(in.CheckIsObject());
  HelloRequest request;
  KFORGE_RETURN_IF_ERROR(in.Read("peak", request.peak));
  return request;
}

json HelloReply::ToJson() const {
  if (status != common::VerdictStatus::kOk) return FailureReplyJson(status, message);
  json out = {{"status", common::VerdictStatusName(status)}, {"device", common::DeviceRecordToJson(device)}};
  if (peak_asked) out["peak"] = peak ? peak->ToJson() : json(nullptr);
  return out;
}

StatusOr<HelloReply> HelloReply::FromJson(const json& json) {
  common::JsonFields in(json, "", "hello reply");
  KFORGE_RETURN_IF_ERROR(in.CheckIsObject());
  HelloReply reply;
  KFORGE_RETURN_IF_ERROR(in.ReadNamed("status", common::kVerdictStatusNames, reply.status));
  KFORGE_RETURN_IF_ERROR(in.Read("message", reply.message));
  KFORGE_RETURN_IF_ERROR(ReadReplyDevice(in, "hello reply: ", reply.device));
  if (json.contains("peak")) {
    reply.peak_asked = true;
    nlohmann::json peak;
    KFORGE_RETURN_IF_ERROR(in.ReadObject("peak", peak, /*nullable=*/true));
    // A peak that cannot be read is an unknown peak, as the worker sends when it could not measure.
    if (auto read = common::DevicePeakFromJson(peak); read.ok()) reply.peak = *read;
  }
  return reply;
}

json CheckRequest::ToJson() const {
  return {{"op", WorkerOpName(WorkerOp::kCheck)},
          {"task_dir", task_dir.string()},
          {"solution", common::SolutionToJson(solution)},
          {"cubin_b64", common::Base64Encode(cubin)},
          {"trials", trials},
          {"seed", seed},
          {"kernel_timeout_ms", kernel_timeout.count()}};
}

StatusOr<CheckRequest> CheckRequest::FromJson(const json& json) {
  common::JsonFields in(json, "", "check request");
  KFORGE_RETURN_IF_ERROR(in.CheckIsObject());
  CheckRequest request;
  KFORGE_RETURN_IF_ERROR(in.Read("task_dir", request.task_dir, /*required=*/true));
  nlohmann::json solution;
  KFORGE_RETURN_IF_ERROR(in.ReadObject("solution", solution));
  if (solution.is_null()) return in.Error("solution", "missing");
  KFORGE_ASSIGN_OR_RETURN(request.solution, common::SolutionFromJson(solution, "check request: solution"));
  std::string cubin_b64;
  KFORGE_RETURN_IF_ERROR(in.Read("cubin_b64", cubin_b64, /*required=*/true));
  auto cubin = common::Base64Decode(cubin_b64);
  if (!cubin.ok()) return in.Error("cubin_b64", cubin.status().message());
  request.cubin = std::move(*cubin);
  KFORGE_RETURN_IF_ERROR(in.Read("trials", request.trials));
  KFORGE_RETURN_IF_ERROR(in.Read("seed", request.seed));
  int64_t timeout_ms = request.kernel_timeout.count();
  KFORGE_RETURN_IF_ERROR(in.Read("kernel_timeout_ms", timeout_ms));
  if (request.trials < 0) return in.Error("trials", "must not be negative");
  if (timeout_ms <= 0) return in.Error("kernel_timeout_ms", "must be positive");
  request.kernel_timeout = std::chrono::milliseconds(timeout_ms);
  return request;
}

common::VerdictTiming CheckTiming::Record() const {
  common::VerdictTiming timing;
  timing.gpu_ms = gpu_ms;
  timing.reference_load_ms = reference_load_ms;
  timing.phases_ms = phases_ms;
  timing.plan_split = plan_split;
  return timing;
}

json CheckTiming::ToJson() const {
  json timing = {{"gpu_ms", gpu_ms}, {"reference_load_ms", reference_load_ms}, {"phases_ms", phases_ms}};
  if (plan_split) timing[common::kPlanSplitKey] = common::PlanSplitToJson(*plan_split);
  return timing;
}

StatusOr<CheckTiming> CheckTiming::FromJson(const json& json) {
  common::JsonFields in(json, "timing", "check reply");
  KFORGE_RETURN_IF_ERROR(in.CheckIsObject());
  CheckTiming timing;
  KFORGE_RETURN_IF_ERROR(in.Read("gpu_ms", timing.gpu_ms));
  KFORGE_RETURN_IF_ERROR(in.Read("reference_load_ms", timing.reference_load_ms));
  nlohmann::json phases = nlohmann::json::object();
  KFORGE_RETURN_IF_ERROR(in.ReadObject("phases_ms", phases));
  for (const auto& [phase, ms] : phases.items()) {
    if (!ms.is_number()) return in.Error("phases_ms", "expected numbers");
    timing.phases_ms[phase] = ms.get<double>();
  }
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
          {"trials", common::TrialRecordsToJson(trials)},
          {"checks", common::ChecksToJson(checks)},
          {"device", common::DeviceRecordToJson(device)},
          {"timing", timing ? timing->ToJson() : json::object()},
          {"memory", memory ? common::MemoryRecordToJson(*memory) : json(nullptr)},
          {"exiting", exiting}};
}

StatusOr<CheckReply> CheckReply::FromJson(const json& json) {
  common::JsonFields in(json, "", "check reply");
  KFORGE_RETURN_IF_ERROR(in.CheckIsObject());
  CheckReply reply;
  KFORGE_RETURN_IF_ERROR(in.ReadNamed("status", common::kVerdictStatusNames, reply.status));
  KFORGE_RETURN_IF_ERROR(in.Read("message", reply.message));
  nlohmann::json trials = nlohmann::json::array();
  KFORGE_RETURN_IF_ERROR(in.ReadArray("trials", trials));
  KFORGE_ASSIGN_OR_RETURN(reply.trials, WithReplyName("check reply: ", common::TrialRecordsFromJson(trials, "trials")));
  nlohmann::json checks = nlohmann::json::object();
  KFORGE_RETURN_IF_ERROR(in.ReadObject("checks", checks));
  KFORGE_ASSIGN_OR_RETURN(reply.checks,
                          WithReplyName("check reply: ", common::ChecksFromJson(checks, "checks")));
  KFORGE_RETURN_IF_ERROR(ReadReplyDevice(in, "check reply: ", reply.device));
  if (json.contains("timing") && !(json["timing"].is_object() && json["timing"].empty())) {
    KFORGE_ASSIGN_OR_RETURN(reply.timing, CheckTiming::FromJson(json["timing"]));
  }
  KFORGE_RETURN_IF_ERROR(ReadReplyMemory(in, "check reply: ", reply.memory));
  KFORGE_RETURN_IF_ERROR(in.Read("exiting", reply.exiting));
  return reply;
}

json TaskCheckRequest::ToJson() const {
  return {{"op", WorkerOpName(WorkerOp::kTaskCheck)}, {"task_dir", task_dir.string()}, {"seed", seed}};
}

StatusOr<TaskCheckRequest> TaskCheckRequest::FromJson(const json& json) {
  common::JsonFields in(json, "", "task_check request");
  KFORGE_RETURN_IF_ERROR(in.CheckIsObject());
  TaskCheckRequest request;
  KFORGE_RETURN_IF_ERROR(in.Read("task_dir", request.task_dir, /*required=*/true));
  KFORGE_RETURN_IF_ERROR(in.Read("seed", request.seed));
  return request;
}

json TaskCheckVariant::ToJson() const {
  return {{"variant", variant},
          {"load_ms", load_ms},
          {"first_run_ms", first_run_ms},
          {"reference_ms", reference_ms},
          {"checks", common::ChecksToJson(checks)},
          {"memory", common::MemoryRecordToJson(memory)}};
}

StatusOr<TaskCheckVariant> TaskCheckVariant::FromJson(const json& json, const std::string& path) {
  common::JsonFields in(json, path, "task_check reply");
  KFORGE_RETURN_IF_ERROR(in.CheckIsObject());
  TaskCheckVariant v;
  KFORGE_RETURN_IF_ERROR(in.Read("variant", v.variant, /*required=*/true));
  KFORGE_RETURN_IF_ERROR(in.Read("load_ms", v.load_ms));
  KFORGE_RETURN_IF_ERROR(in.Read("first_run_ms", v.first_run_ms));
  KFORGE_RETURN_IF_ERROR(in.Read("reference_ms", v.reference_ms));
  nlohmann::json checks = nlohmann::json::object();
  KFORGE_RETURN_IF_ERROR(in.ReadObject("checks", checks));
  KFORGE_ASSIGN_OR_RETURN(
      v.checks, WithReplyName("task_check reply: ", common::ChecksFromJson(checks, path + ".checks")));
  std::optional<common::MemoryRecord> memory;
  KFORGE_RETURN_IF_ERROR(ReadReplyMemory(in, "task_check reply: ", memory));
  if (memory) v.memory = std::move(*memory);
  return v;
}

json TaskCheckReply::ToJson() const {
  json out = {{"status", TaskCheckStatusName(status)}, {"message", message}, {"variants", json::array()}};
  for (const TaskCheckVariant& v : variants) out["variants"].push_back(v.ToJson());
  return out;
}

StatusOr<TaskCheckReply> TaskCheckReply::FromJson(const json& json) {
  common::JsonFields in(json, "", "task_check reply");
  KFORGE_RETURN_IF_ERROR(in.CheckIsObject());
  TaskCheckReply reply;
  KFORGE_RETURN_IF_ERROR(in.ReadNamed("status", kTaskCheckStatusNames, reply.status));
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
  json out = {{"op", WorkerOpName(WorkerOp::kTaskAudit)},
          {"task_dir", task_dir.string()},
          {"seed", seed},
          {"trials", trials}};
  if (timing) out["timing"] = true;
  return out;
}

StatusOr<TaskAuditRequest> TaskAuditRequest::FromJson(const json& json) {
  common::JsonFields in(json, "", "task_audit request");
  KFORGE_RETURN_IF_ERROR(in.CheckIsObject());
  TaskAuditRequest request;
  KFORGE_RETURN_IF_ERROR(in.Read("task_dir", request.task_dir, /*required=*/true));
  KFORGE_RETURN_IF_ERROR(in.Read("seed", request.seed));
  KFORGE_RETURN_IF_ERROR(in.Read("trials", request.trials));
  KFORGE_RETURN_IF_ERROR(in.Read("timing", request.timing));
  if (request.trials < 1 || request.trials > 1000) return in.Error("trials", "must be in [1, 1000]");
  return request;
}

json TaskAuditReply::ToJson() const {
  json out = {{"status", TaskAuditStatusName(status)}, {"message", message}, {"candidates", json::array()}};
  for (const AuditedCandidate& c : candidates) {
    json candidate = {{"name", c.name}, {"accepted", c.accepted}, {"message", c.message}};
    if (c.timing) {
      const AuditedTiming& t = *c.timing;
      candidate["timing"] = {{"checked_runs", t.checked_runs}, {"shortcuts", t.shortcuts},
                             {"median_ms", t.median_ms},       {"honest_ms", t.honest_ms},
                             {"draws", t.draws},               {"control", t.control}};
    }
    out["candidates"].push_back(std::move(candidate));
  }
  return out;
}

StatusOr<TaskAuditReply> TaskAuditReply::FromJson(const json& json) {
  common::JsonFields in(json, "", "task_audit reply");
  KFORGE_RETURN_IF_ERROR(in.CheckIsObject());
  TaskAuditReply reply;
  KFORGE_RETURN_IF_ERROR(in.ReadNamed("status", kTaskAuditStatusNames, reply.status));
  KFORGE_RETURN_IF_ERROR(in.Read("message", reply.message));
  nlohmann::json candidates = json::array();
  KFORGE_RETURN_IF_ERROR(in.ReadArray("candidates", candidates));
  for (size_t i = 0; i < candidates.size(); ++i) {
    common::JsonFields c(candidates[i], "candidates[" + std::to_string(i) + "]", "task_audit reply");
    KFORGE_RETURN_IF_ERROR(c.CheckIsObject());
    AuditedCandidate candidate;
    KFORGE_RETURN_IF_ERROR(c.Read("name", candidate.name, /*required=*/true));
    KFORGE_RETURN_IF_ERROR(c.Read("accepted", candidate.accepted, /*required=*/true));
    KFORGE_RETURN_IF_ERROR(c.Read("message", candidate.message));
    if (candidates[i].contains("timing")) {
      common::JsonFields t(candidates[i]["timing"], "candidates[" + std::to_string(i) + "].timing",
                           "task_audit reply");
      KFORGE_RETURN_IF_ERROR(t.CheckIsObject());
      AuditedTiming timing;
      KFORGE_RETURN_IF_ERROR(t.Read("checked_runs", timing.checked_runs));
      KFORGE_RETURN_IF_ERROR(t.Read("shortcuts", timing.shortcuts));
      KFORGE_RETURN_IF_ERROR(t.Read("median_ms", timing.median_ms));
      KFORGE_RETURN_IF_ERROR(t.Read("honest_ms", timing.honest_ms));
      KFORGE_RETURN_IF_ERROR(t.Read("draws", timing.draws));
      KFORGE_RETURN_IF_ERROR(t.Read("control", timing.control));
      candidate.timing = timing;
    }
    reply.candidates.push_back(std::move(candidate));
  }
  return reply;
}

}  // namespace kforge::verify
