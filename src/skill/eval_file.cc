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

using common::JsonFields;
using common::JsonKind;

/// The fields of `object` at `path`.
JsonFields At(const json& object, const std::string& path) { return JsonFields(object, path); }

Status CheckArm(const json& arm, const std::string& path) {
  const JsonFields fields = At(arm, path);
  for (const char* key : {"episodes", "correct", "input_tokens", "output_tokens"})
    KFORGE_RETURN_IF_ERROR(fields.Expect(key, JsonKind::kInteger));
  KFORGE_RETURN_IF_ERROR(fields.Expect("correctness", JsonKind::kNumber));
  KFORGE_RETURN_IF_ERROR(fields.Expect("cost_usd", JsonKind::kNumber));
  KFORGE_RETURN_IF_ERROR(fields.ExpectValues("failures", JsonKind::kInteger));
  KFORGE_RETURN_IF_ERROR(fields.Expect("fast_p", JsonKind::kObject));
  for (const char* p : {"1", "1.5", "2"})
    KFORGE_RETURN_IF_ERROR(At(arm["fast_p"], path + ".fast_p").Expect(p, JsonKind::kNumber));
  KFORGE_RETURN_IF_ERROR(fields.ExpectIfPresent("geomean_speedup_vs_none", JsonKind::kObject));
  if (arm.contains("geomean_speedup_vs_none")) {
    const json& g = arm["geomean_speedup_vs_none"];
    const JsonFields geomean = At(g, path + ".geomean_speedup_vs_none");
    KFORGE_RETURN_IF_ERROR(geomean.Expect("tasks", JsonKind::kInteger));
    const JsonKind speedup = g["tasks"].get<int64_t>() > 0 ? JsonKind::kNumber : JsonKind::kNumberOrNull;
    KFORGE_RETURN_IF_ERROR(geomean.Expect("arm", speedup));
    KFORGE_RETURN_IF_ERROR(geomean.Expect("none", speedup));
  }
  return Status::Ok();
}

Status CheckLift(const json& lift, const std::string& path) {
  const JsonFields fields = At(lift, path);
  for (const char* key : {"lift", "low", "high", "mde"})
    KFORGE_RETURN_IF_ERROR(fields.Expect(key, JsonKind::kNumberOrNull));
  KFORGE_RETURN_IF_ERROR(fields.Expect("mcnemar", JsonKind::kObject));
  const JsonFields mcnemar = At(lift["mcnemar"], path + ".mcnemar");
  KFORGE_RETURN_IF_ERROR(mcnemar.Expect("only_arm", JsonKind::kInteger));
  KFORGE_RETURN_IF_ERROR(mcnemar.Expect("only_baseline", JsonKind::kInteger));
  KFORGE_RETURN_IF_ERROR(mcnemar.Expect("p", JsonKind::kNumber));
  KFORGE_RETURN_IF_ERROR(mcnemar.ExpectIfPresent("holm_p", JsonKind::kNumber));
  KFORGE_RETURN_IF_ERROR(fields.ExpectElements("worse_tasks", JsonKind::kObject));
  for (size_t i = 0; i < lift["worse_tasks"].size(); ++i)
    KFORGE_RETURN_IF_ERROR(At(lift["worse_tasks"][i], path + ".worse_tasks[" + std::to_string(i) + "]")
                               .Expect("task", JsonKind::kString));
  return Status::Ok();
}

Status CheckModel(const json& model, const std::string& path) {
  const JsonFields fields = At(model, path);
  KFORGE_RETURN_IF_ERROR(fields.Expect("model", JsonKind::kString));
  KFORGE_RETURN_IF_ERROR(fields.Expect("verdict", JsonKind::kString));
  KFORGE_RETURN_IF_ERROR(fields.Expect("beneficial", JsonKind::kBool));
  KFORGE_RETURN_IF_ERROR(fields.ExpectValues("arms", JsonKind::kObject));
  for (const auto& [name, arm] : model["arms"].items())
    KFORGE_RETURN_IF_ERROR(CheckArm(arm, path + ".arms." + common::KeyText(name)));
  KFORGE_RETURN_IF_ERROR(fields.ExpectValues("lifts", JsonKind::kObject));
  for (const auto& [name, lift] : model["lifts"].items())
    KFORGE_RETURN_IF_ERROR(CheckLift(lift, path + ".lifts." + common::KeyText(name)));
  return Status::Ok();
}

/// The checks of CheckEvalReport, their errors without the file's name.
Status CheckFields(const json& eval) {
  const JsonFields fields = At(eval, "");
  KFORGE_RETURN_IF_ERROR(fields.Expect("schema", JsonKind::kString));
  if (eval["schema"] != kSchema)
    return Status::ParseError("schema " + common::Quote(eval["schema"].get<std::string>()) + ", not " +
                              std::string(kSchema) + " (not a skill eval's output)");
  KFORGE_RETURN_IF_ERROR(fields.Expect("skill", JsonKind::kObject));
  KFORGE_RETURN_IF_ERROR(At(eval["skill"], "skill").Expect("name", JsonKind::kString));
  KFORGE_RETURN_IF_ERROR(At(eval["skill"], "skill").Expect("hash", JsonKind::kString));
  KFORGE_RETURN_IF_ERROR(fields.ExpectElements("tasks", JsonKind::kString));
  KFORGE_RETURN_IF_ERROR(fields.ExpectElements("left_out", JsonKind::kObject));
  for (size_t i = 0; i < eval["left_out"].size(); ++i) {
    const JsonFields left_out = At(eval["left_out"][i], "left_out[" + std::to_string(i) + "]");
    KFORGE_RETURN_IF_ERROR(left_out.Expect("task", JsonKind::kString));
    KFORGE_RETURN_IF_ERROR(left_out.Expect("reason", JsonKind::kString));
  }
  KFORGE_RETURN_IF_ERROR(fields.Expect("samples", JsonKind::kInteger));
  KFORGE_RETURN_IF_ERROR(fields.Expect("protocol", JsonKind::kString));
  KFORGE_RETURN_IF_ERROR(fields.ExpectIfPresent("compile_only", JsonKind::kBool));
  KFORGE_RETURN_IF_ERROR(fields.Expect("bootstrap", JsonKind::kObject));
  KFORGE_RETURN_IF_ERROR(At(eval["bootstrap"], "bootstrap").Expect("resamples", JsonKind::kInteger));
  KFORGE_RETURN_IF_ERROR(At(eval["bootstrap"], "bootstrap").Expect("seed", JsonKind::kInteger));
  KFORGE_RETURN_IF_ERROR(fields.Expect("models", JsonKind::kArray));
  for (size_t i = 0; i < eval["models"].size(); ++i)
    KFORGE_RETURN_IF_ERROR(CheckModel(eval["models"][i], "models[" + std::to_string(i) + "]"));
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
  if (!eval.is_object()) return Status::ParseError(where + ": expected a JSON object");
  return CheckFields(eval).WithContext(where);
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
  } else if (!fs::is_regular_file(argument, ec)) {  // a device or a FIFO may never end
    return Status::InvalidArgument(argument.string() + ": not a regular file (not a skill eval's output)");
  }
  KFORGE_ASSIGN_OR_RETURN(std::string text, common::ReadFile(file));
  KFORGE_ASSIGN_OR_RETURN(json eval, common::ParseJson(text, file.string()));
  KFORGE_RETURN_IF_ERROR(CheckEvalReport(eval, file.string()));
  return eval;
}

}  // namespace kforge::skill
