// Reading `kforge skill eval`'s eval.json back (for `kforge report`), checked field by field: the file
// may be hand-edited or hostile, and the renderers read it without further checks.
#include <string>
#include <string_view>

#include "kforge/common/files.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/text.h"
#include "kforge/skill/eval_report.h"

namespace kforge::skill {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kSchema = "kforge.skill_eval/1";

enum class Kind { kString, kInteger, kNumber, kNumberOrNull, kBool, kObject, kArray };

bool Matches(const json& v, Kind kind) {
  switch (kind) {
    case Kind::kString:
      return v.is_string();
    case Kind::kInteger:
      return v.is_number_integer();
    case Kind::kNumber:
      return v.is_number();
    case Kind::kNumberOrNull:
      return v.is_number() || v.is_null();
    case Kind::kBool:
      return v.is_boolean();
    case Kind::kObject:
      return v.is_object();
    case Kind::kArray:
      return v.is_array();
  }
  return false;
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kString:
      return "a string";
    case Kind::kInteger:
      return "an integer";
    case Kind::kNumber:
      return "a number";
    case Kind::kNumberOrNull:
      return "a number or null";
    case Kind::kBool:
      return "true or false";
    case Kind::kObject:
      return "an object";
    case Kind::kArray:
      return "an array";
  }
  return "";
}

/// Checks fields of JSON objects, naming the JSON path in its error.
class Shape {
 public:
  explicit Shape(std::string where) : where_(std::move(where)) {}

  /// `object[key]` exists (unless optional and absent) and is of `kind`.
  Status Field(const json& object, const std::string& path, std::string_view key, Kind kind,
               bool optional = false) const {
    const std::string at = path.empty() ? common::KeyText(key) : path + "." + common::KeyText(key);
    if (!object.is_object()) return Status::ParseError(where_ + ": " + path + ": expected an object");
    auto it = object.find(key);
    if (it == object.end()) {
      if (optional) return Status::Ok();
      return Status::ParseError(where_ + ": " + at + ": missing");
    }
    if (!Matches(*it, kind))
      return Status::ParseError(where_ + ": " + at + ": expected " + KindName(kind) + ", found " +
                                common::JsonTypeName(*it));
    return Status::Ok();
  }

  /// Every element of `array` is of `kind`.
  Status Elements(const json& array, const std::string& path, Kind kind) const {
    for (size_t i = 0; i < array.size(); ++i)
      if (!Matches(array[i], kind))
        return Status::ParseError(where_ + ": " + path + "[" + std::to_string(i) + "]: expected " +
                                  KindName(kind) + ", found " + common::JsonTypeName(array[i]));
    return Status::Ok();
  }

 private:
  std::string where_;
};

Status CheckArm(const Shape& shape, const json& arm, const std::string& path) {
  for (const char* key : {"episodes", "correct", "input_tokens", "output_tokens"})
    KFORGE_RETURN_IF_ERROR(shape.Field(arm, path, key, Kind::kInteger));
  KFORGE_RETURN_IF_ERROR(shape.Field(arm, path, "correctness", Kind::kNumber));
  KFORGE_RETURN_IF_ERROR(shape.Field(arm, path, "cost_usd", Kind::kNumber));
  KFORGE_RETURN_IF_ERROR(shape.Field(arm, path, "failures", Kind::kObject));
  for (const auto& [status, n] : arm["failures"].items())
    KFORGE_RETURN_IF_ERROR(shape.Field(arm["failures"], path + ".failures", status, Kind::kInteger));
  KFORGE_RETURN_IF_ERROR(shape.Field(arm, path, "fast_p", Kind::kObject));
  for (const char* p : {"1", "1.5", "2"})
    KFORGE_RETURN_IF_ERROR(shape.Field(arm["fast_p"], path + ".fast_p", p, Kind::kNumber));
  KFORGE_RETURN_IF_ERROR(shape.Field(arm, path, "geomean_speedup_vs_none", Kind::kObject, true));
  if (arm.contains("geomean_speedup_vs_none")) {
    const json& g = arm["geomean_speedup_vs_none"];
    const std::string at = path + ".geomean_speedup_vs_none";
    KFORGE_RETURN_IF_ERROR(shape.Field(g, at, "tasks", Kind::kInteger));
    const Kind speedup = g["tasks"].get<int64_t>() > 0 ? Kind::kNumber : Kind::kNumberOrNull;
    KFORGE_RETURN_IF_ERROR(shape.Field(g, at, "arm", speedup));
    KFORGE_RETURN_IF_ERROR(shape.Field(g, at, "none", speedup));
  }
  return Status::Ok();
}

Status CheckLift(const Shape& shape, const json& lift, const std::string& path) {
  for (const char* key : {"lift", "low", "high", "mde"})
    KFORGE_RETURN_IF_ERROR(shape.Field(lift, path, key, Kind::kNumberOrNull));
  KFORGE_RETURN_IF_ERROR(shape.Field(lift, path, "mcnemar", Kind::kObject));
  const json& mcnemar = lift["mcnemar"];
  KFORGE_RETURN_IF_ERROR(shape.Field(mcnemar, path + ".mcnemar", "only_arm", Kind::kInteger));
  KFORGE_RETURN_IF_ERROR(shape.Field(mcnemar, path + ".mcnemar", "only_baseline", Kind::kInteger));
  KFORGE_RETURN_IF_ERROR(shape.Field(mcnemar, path + ".mcnemar", "p", Kind::kNumber));
  KFORGE_RETURN_IF_ERROR(shape.Field(mcnemar, path + ".mcnemar", "holm_p", Kind::kNumber, true));
  KFORGE_RETURN_IF_ERROR(shape.Field(lift, path, "worse_tasks", Kind::kArray));
  KFORGE_RETURN_IF_ERROR(shape.Elements(lift["worse_tasks"], path + ".worse_tasks", Kind::kObject));
  for (size_t i = 0; i < lift["worse_tasks"].size(); ++i)
    KFORGE_RETURN_IF_ERROR(shape.Field(
        lift["worse_tasks"][i], path + ".worse_tasks[" + std::to_string(i) + "]", "task", Kind::kString));
  return Status::Ok();
}

Status CheckModel(const Shape& shape, const json& model, const std::string& path) {
  KFORGE_RETURN_IF_ERROR(shape.Field(model, path, "model", Kind::kString));
  KFORGE_RETURN_IF_ERROR(shape.Field(model, path, "verdict", Kind::kString));
  KFORGE_RETURN_IF_ERROR(shape.Field(model, path, "beneficial", Kind::kBool));
  KFORGE_RETURN_IF_ERROR(shape.Field(model, path, "arms", Kind::kObject));
  for (const auto& [name, arm] : model["arms"].items()) {
    KFORGE_RETURN_IF_ERROR(shape.Field(model["arms"], path + ".arms", name, Kind::kObject));
    KFORGE_RETURN_IF_ERROR(CheckArm(shape, arm, path + ".arms." + common::KeyText(name)));
  }
  KFORGE_RETURN_IF_ERROR(shape.Field(model, path, "lifts", Kind::kObject));
  for (const auto& [name, lift] : model["lifts"].items()) {
    KFORGE_RETURN_IF_ERROR(shape.Field(model["lifts"], path + ".lifts", name, Kind::kObject));
    KFORGE_RETURN_IF_ERROR(CheckLift(shape, lift, path + ".lifts." + common::KeyText(name)));
  }
  return Status::Ok();
}

}  // namespace

std::optional<fs::path> EvalFileOf(const fs::path& argument) {
  std::error_code ec;
  if (fs::is_directory(argument, ec)) {
    if (fs::is_regular_file(argument / "eval.json", ec)) return argument / "eval.json";
    return std::nullopt;
  }
  if (argument.filename() == "eval.json" && fs::is_regular_file(argument, ec)) return argument;
  return std::nullopt;
}

Status CheckEvalReport(const json& eval, const std::string& where) {
  const Shape shape(where);
  if (!eval.is_object()) return Status::ParseError(where + ": expected a JSON object");
  KFORGE_RETURN_IF_ERROR(shape.Field(eval, "", "schema", Kind::kString));
  if (eval["schema"] != kSchema)
    return Status::ParseError(where + ": schema " + common::Quote(eval["schema"].get<std::string>()) +
                              ", not " + std::string(kSchema) + " (not a skill eval's output)");
  KFORGE_RETURN_IF_ERROR(shape.Field(eval, "", "skill", Kind::kObject));
  KFORGE_RETURN_IF_ERROR(shape.Field(eval["skill"], "skill", "name", Kind::kString));
  KFORGE_RETURN_IF_ERROR(shape.Field(eval["skill"], "skill", "hash", Kind::kString));
  KFORGE_RETURN_IF_ERROR(shape.Field(eval, "", "tasks", Kind::kArray));
  KFORGE_RETURN_IF_ERROR(shape.Elements(eval["tasks"], "tasks", Kind::kString));
  KFORGE_RETURN_IF_ERROR(shape.Field(eval, "", "left_out", Kind::kArray));
  KFORGE_RETURN_IF_ERROR(shape.Elements(eval["left_out"], "left_out", Kind::kObject));
  for (size_t i = 0; i < eval["left_out"].size(); ++i) {
    const std::string at = "left_out[" + std::to_string(i) + "]";
    KFORGE_RETURN_IF_ERROR(shape.Field(eval["left_out"][i], at, "task", Kind::kString));
    KFORGE_RETURN_IF_ERROR(shape.Field(eval["left_out"][i], at, "reason", Kind::kString));
  }
  KFORGE_RETURN_IF_ERROR(shape.Field(eval, "", "samples", Kind::kInteger));
  KFORGE_RETURN_IF_ERROR(shape.Field(eval, "", "protocol", Kind::kString));
  KFORGE_RETURN_IF_ERROR(shape.Field(eval, "", "compile_only", Kind::kBool, true));
  KFORGE_RETURN_IF_ERROR(shape.Field(eval, "", "bootstrap", Kind::kObject));
  KFORGE_RETURN_IF_ERROR(shape.Field(eval["bootstrap"], "bootstrap", "resamples", Kind::kInteger));
  KFORGE_RETURN_IF_ERROR(shape.Field(eval["bootstrap"], "bootstrap", "seed", Kind::kInteger));
  KFORGE_RETURN_IF_ERROR(shape.Field(eval, "", "models", Kind::kArray));
  for (size_t i = 0; i < eval["models"].size(); ++i)
    KFORGE_RETURN_IF_ERROR(CheckModel(shape, eval["models"][i], "models[" + std::to_string(i) + "]"));
  return Status::Ok();
}

StatusOr<json> ReadEvalReport(const fs::path& argument) {
  std::error_code ec;
  fs::path file = argument;
  if (fs::is_directory(argument, ec)) {
    file = argument / "eval.json";
    if (!fs::is_regular_file(file, ec))
      return Status::InvalidArgument(argument.string() +
                                     ": a folder without eval.json (not a skill eval's output)");
  } else if (!fs::exists(argument, ec)) {
    return Status::InvalidArgument(argument.string() + ": no such skill eval folder or file");
  }
  KFORGE_ASSIGN_OR_RETURN(std::string text, common::ReadFile(file));
  KFORGE_ASSIGN_OR_RETURN(json eval, common::ParseJson(text, file.string()));
  KFORGE_RETURN_IF_ERROR(CheckEvalReport(eval, file.string()));
  return eval;
}

}  // namespace kforge::skill
