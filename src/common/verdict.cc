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

nlohmann::json Verdict::ToJson() const {
  nlohmann::json json = nlohmann::json::object();
  json["schema"] = kVerdictSchema;
  json["task"] = task;
  json["solution"] = solution;
  json["solution_hash"] = solution_hash;
  json["status"] = VerdictStatusName(status);
  json["message"] = message;
  json["compile"] = compile;
  json["seed"] = seed;
  json["trials"] = trials;
  json["checks"] = checks;
  json["device"] = device;
  json["toolchain"] = toolchain;
  json["timing"] = timing;
  json["memory"] = memory;
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
  v.compile = json.value("compile", nlohmann::json());
  v.trials = json.value("trials", nlohmann::json::array());
  v.checks = json.value("checks", nlohmann::json::object());
  v.device = json.value("device", nlohmann::json());
  v.toolchain = json.value("toolchain", nlohmann::json::object());
  v.timing = json.value("timing", nlohmann::json::object());
  v.memory = json.value("memory", nlohmann::json());
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
  auto it = verdict.checks.is_object() ? verdict.checks.find("shape_general") : verdict.checks.end();
  if (it == verdict.checks.end() || !it->is_string()) return ShapeGeneral::kNotProbed;
  return kShapeGeneralNames.Parse(it->get<std::string>()).value_or(ShapeGeneral::kNotProbed);
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
