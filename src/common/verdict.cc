// Verdict records.
#include "kforge/common/verdict.h"

#include <cstdint>

#include "kforge/common/json_fields.h"

namespace kforge::common {
namespace {

/// Every key of kforge.verdict/1.
const std::initializer_list<std::string_view> kVerdictKeys = {
    "schema", "task",   "solution", "solution_hash", "status", "message", "compile", "seed",
    "trials", "checks", "device",   "toolchain",     "timing", "memory",  "judge"};

}  // namespace

StatusOr<VerdictStatus> ParseVerdictStatus(std::string_view name) {
  if (std::optional<VerdictStatus> status = kVerdictStatusNames.Parse(name)) return *status;
  return Status::InvalidArgument("unknown verdict status \"" + std::string(name.substr(0, 40)) + "\"");
}

bool AtFault(VerdictStatus status) {
  switch (status) {
    case VerdictStatus::kCompileError:
    case VerdictStatus::kInvalidSolution:
    case VerdictStatus::kLaunchError:
    case VerdictStatus::kMismatch:
    case VerdictStatus::kTimeout:
    case VerdictStatus::kCrash:
      return true;
    case VerdictStatus::kOk:
    case VerdictStatus::kNoGpu:
    case VerdictStatus::kHarnessError:
      return false;
  }
  return false;  // not reached: the switch names every status
}

bool Compiled(VerdictStatus status) {
  switch (status) {
    case VerdictStatus::kOk:
    case VerdictStatus::kLaunchError:
    case VerdictStatus::kMismatch:
    case VerdictStatus::kTimeout:
    case VerdictStatus::kCrash:
    case VerdictStatus::kNoGpu:
      return true;
    case VerdictStatus::kCompileError:
    case VerdictStatus::kInvalidSolution:
    case VerdictStatus::kHarnessError:
      return false;
  }
  return false;  // not reached: the switch names every status
}

bool CountsAsHarnessError(VerdictStatus status) {
  switch (status) {
    case VerdictStatus::kHarnessError:
    case VerdictStatus::kNoGpu:
      return true;
    case VerdictStatus::kOk:
    case VerdictStatus::kCompileError:
    case VerdictStatus::kInvalidSolution:
    case VerdictStatus::kLaunchError:
    case VerdictStatus::kMismatch:
    case VerdictStatus::kTimeout:
    case VerdictStatus::kCrash:
      return false;
  }
  return false;  // not reached: the switch names every status
}

nlohmann::json Verdict::ToJson() const {
  nlohmann::json json = nlohmann::json::object();
  json["schema"] = kVerdictSchema;
  json["task"] = task;
  json["solution"] = solution;
  json["solution_hash"] = solution_hash;
  json["status"] = VerdictStatusName(status);
  json["message"] = message;
  json["compile"] = compile ? CompileFactsToJson(*compile) : nlohmann::json(nullptr);
  json["seed"] = seed;
  json["trials"] = TrialRecordsToJson(trials);
  json["checks"] = ChecksToJson(checks);
  json["device"] = DeviceRecordToJson(device);
  json["toolchain"] = toolchain;
  json["timing"] = VerdictTimingToJson(timing);
  json["memory"] = memory ? MemoryRecordToJson(*memory) : nlohmann::json(nullptr);
  json["judge"] = judge;
  for (const std::string& key : absent_keys) json.erase(key);
  return json;
}

StatusOr<Verdict> Verdict::FromJson(const nlohmann::json& json, const std::string& path) {
  JsonFields f(json, path);
  KFORGE_RETURN_IF_ERROR(f.CheckObject(kVerdictKeys));
  KFORGE_ASSIGN_OR_RETURN(std::string schema, f.String("schema"));
  if (schema != kVerdictSchema) return f.Error("schema", "expected \"" + std::string(kVerdictSchema) + "\"");
  Verdict v;
  KFORGE_ASSIGN_OR_RETURN(v.task, f.String("task"));
  KFORGE_ASSIGN_OR_RETURN(v.solution, f.StringOr("solution", ""));
  KFORGE_ASSIGN_OR_RETURN(v.solution_hash, f.StringOr("solution_hash", ""));
  KFORGE_ASSIGN_OR_RETURN(std::string status, f.String("status"));
  StatusOr<VerdictStatus> parsed = ParseVerdictStatus(status);
  if (!parsed.ok()) return f.Error("status", parsed.status().message());
  v.status = *parsed;
  KFORGE_ASSIGN_OR_RETURN(v.message, f.StringOr("message", ""));
  if (f.Has("seed")) {
    const nlohmann::json& seed = json["seed"];
    if (!seed.is_number_unsigned() && !seed.is_number_integer())
      return f.Error("seed", "expected an integer");
    v.seed = seed.get<uint64_t>();
  }
  auto sub = [&](std::string_view key) { return path.empty() ? std::string(key) : path + "." + std::string(key); };
  const nlohmann::json null;
  auto part = [&](std::string_view key) -> const nlohmann::json& {
    auto it = json.find(key);
    return it == json.end() ? null : *it;
  };
  if (!part("compile").is_null()) {
    KFORGE_ASSIGN_OR_RETURN(v.compile, CompileFactsFromJson(part("compile"), sub("compile")));
  }
  KFORGE_ASSIGN_OR_RETURN(v.trials, TrialRecordsFromJson(part("trials"), sub("trials")));
  if (json.contains("checks")) {  // absent: no checks, and the key stays absent (absent_keys)
    KFORGE_ASSIGN_OR_RETURN(v.checks, ChecksFromJson(part("checks"), sub("checks")));
  }
  KFORGE_ASSIGN_OR_RETURN(v.device, OptionalDeviceRecordFromJson(part("device"), sub("device")));
  if (const nlohmann::json& toolchain = part("toolchain"); !toolchain.is_null()) {
    if (!toolchain.is_object()) return f.Error("toolchain", "expected an object");
    for (const auto& [name, value] : toolchain.items()) {
      if (!value.is_string()) return f.Error("toolchain", "expected strings");
      v.toolchain[name] = value.get<std::string>();
    }
  }
  KFORGE_ASSIGN_OR_RETURN(v.timing, VerdictTimingFromJson(part("timing"), sub("timing")));
  if (!part("memory").is_null()) {
    KFORGE_ASSIGN_OR_RETURN(v.memory, MemoryRecordFromJson(part("memory"), sub("memory")));
  }
  v.judge = 1;  // records from before the field judged with version 1
  if (f.Has("judge")) {
    const nlohmann::json& judge = json["judge"];
    if (!judge.is_number_integer() || judge.get<int64_t>() < 1 || judge.get<int64_t>() > 1000)
      return f.Error("judge", "expected a judge version (an integer >= 1)");
    v.judge = judge.get<int>();
  }
  for (std::string_view key : kVerdictKeys)
    if (!json.contains(key)) v.absent_keys.emplace_back(key);
  return v;
}

ShapeGeneral ShapeGeneralOf(const Verdict& verdict) {
  if (!verdict.checks.shape_general) return ShapeGeneral::kNotProbed;
  switch (*verdict.checks.shape_general) {
    case CheckOutcome::kPass:
      return ShapeGeneral::kPass;
    case CheckOutcome::kFail:
      return ShapeGeneral::kFail;
    case CheckOutcome::kNotRun:
      return ShapeGeneral::kNotRun;
    case CheckOutcome::kSkipped:
      return ShapeGeneral::kNotProbed;
  }
  return ShapeGeneral::kNotProbed;  // not reached: the switch names every outcome
}

bool Generalises(const Verdict& verdict) {
  if (verdict.status != VerdictStatus::kOk) return false;
  switch (ShapeGeneralOf(verdict)) {
    case ShapeGeneral::kNotProbed:
    case ShapeGeneral::kPass:
      return true;
    case ShapeGeneral::kFail:
    case ShapeGeneral::kNotRun:
      return false;
  }
  return false;
}

}  // namespace kforge::common
