// Solution parsing and validation (structure and syntax; names are resolved against the task later).
#include "kforge/common/solution.h"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "kforge/common/dtype.h"
#include "kforge/common/expr.h"
#include "kforge/common/hash.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/library_ops.h"
#include "kforge/common/text.h"

namespace kforge::common {
namespace {

constexpr size_t kMaxLaunches = 64;
constexpr size_t kMaxArgs = 64;
constexpr size_t kMaxScratch = 16;

struct ScalarPrefix {
  std::string_view prefix;
  LaunchArg::Kind kind;
};
constexpr std::array<ScalarPrefix, 6> kScalarPrefixes = {{{"i32:", LaunchArg::Kind::kI32},
                                                          {"i64:", LaunchArg::Kind::kI64},
                                                          {"u32:", LaunchArg::Kind::kU32},
                                                          {"u64:", LaunchArg::Kind::kU64},
                                                          {"f32:", LaunchArg::Kind::kF32},
                                                          {"f64:", LaunchArg::Kind::kF64}}};

std::string Indexed(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

/// An int or expression string; returns the expression text.
StatusOr<std::string> ReadExpr(const nlohmann::json& value, const std::string& path) {
  std::string text;
  if (value.is_number_integer()) {
    text = value.dump();  // exact: 2^64-1 stays 2^64-1 (and is then too large), never -1
  } else if (value.is_string()) {
    text = value.get<std::string>();
  } else {
    return Status::InvalidArgument(path + ": expected an integer or expression, got " + JsonTypeName(value));
  }
  Status syntax = ParseExpr(text);
  if (!syntax.ok()) return Status::InvalidArgument(path + ": " + syntax.message());
  return text;
}

StatusOr<std::vector<std::string>> ReadDims(const nlohmann::json& value, const std::string& path) {
  if (!value.is_array() || value.empty() || value.size() > 3) {
    return Status::InvalidArgument(path + ": expected 1 to 3 sizes");
  }
  std::vector<std::string> dims;
  for (size_t i = 0; i < value.size(); ++i) {
    KFORGE_ASSIGN_OR_RETURN(std::string dim, ReadExpr(value[i], Indexed(path, i)));
    dims.push_back(std::move(dim));
  }
  while (dims.size() < 3) dims.push_back("1");
  return dims;
}

/// `item:NAME` or `item:NAME[EXPR]`.
StatusOr<LaunchArg> ReadItemArg(const std::string& text, const std::string& path) {
  LaunchArg arg{LaunchArg::Kind::kItem, text.substr(5), 0};
  size_t open = arg.text.find('[');
  if (open != std::string::npos) {
    if (arg.text.back() != ']') return Status::InvalidArgument(path + ": expected item:NAME[INDEX]");
    arg.index = arg.text.substr(open + 1, arg.text.size() - open - 2);
    arg.text.resize(open);
    Status syntax = ParseExpr(arg.index);
    if (!syntax.ok()) return Status::InvalidArgument(path + ": " + syntax.message());
  }
  if (!IsTensorName(arg.text))
    return Status::InvalidArgument(path + ": " + Quote(arg.text) + " is not a tensor name");
  return arg;
}

StatusOr<LaunchArg> ReadArg(const nlohmann::json& value, const std::string& path) {
  if (!value.is_string())
    return Status::InvalidArgument(path + ": expected a string, got " + JsonTypeName(value));
  std::string text = value.get<std::string>();
  if (text.rfind("item:", 0) == 0) return ReadItemArg(text, path);
  for (const ScalarPrefix& p : kScalarPrefixes) {
    if (text.rfind(p.prefix, 0) != 0) continue;
    LaunchArg arg{p.kind, text.substr(p.prefix.size()), 0};
    if (p.kind == LaunchArg::Kind::kF32 || p.kind == LaunchArg::Kind::kF64) {
      const char* begin = arg.text.c_str();
      char* end = nullptr;
      arg.number = std::strtod(begin, &end);
      if (arg.text.empty() || *end != '\0' || !std::isfinite(arg.number)) {
        return Status::InvalidArgument(path + ": " + Quote(arg.text) + " is not a finite number");
      }
      if (p.kind == LaunchArg::Kind::kF32 && std::fabs(arg.number) > std::numeric_limits<float>::max()) {
        return Status::InvalidArgument(path + ": " + Quote(arg.text) + " does not fit a float");
      }
      return arg;
    }
    Status syntax = ParseExpr(arg.text);
    if (!syntax.ok()) return Status::InvalidArgument(path + ": " + syntax.message());
    return arg;
  }
  if (!IsTensorName(text)) {
    return Status::InvalidArgument(
        path + ": " + Quote(text) +
        " is neither a tensor name nor a typed scalar (i32:, i64:, u32:, u64:, f32:, f64:, item:)");
  }
  return LaunchArg{LaunchArg::Kind::kTensor, text, 0};
}

/// A fill value: a number, or "inf", "-inf", "nan".
StatusOr<double> ReadFillValue(const nlohmann::json& value, const std::string& path) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return Status::InvalidArgument(path + ": expected a number, \"inf\", \"-inf\" or \"nan\"");
}

StatusOr<std::string> ReadTensorName(const JsonFields& f, std::string_view key) {
  KFORGE_ASSIGN_OR_RETURN(std::string name, f.String(key));
  if (!IsTensorName(name)) return f.Error(key, "expected a tensor name");
  return name;
}

StatusOr<LaunchStep> ReadV2Step(const nlohmann::json& value, const JsonFields& f, const std::string& path) {
  LaunchStep step;
  if (value.contains("op")) {
    KFORGE_RETURN_IF_ERROR(f.CheckObject({"op", "args", "out", "attrs"}));
    step.kind = LaunchStep::Kind::kOp;
    KFORGE_ASSIGN_OR_RETURN(step.op, f.String("op"));
    const LibraryOp* op = FindLibraryOp(step.op);
    bool aten = IsAtenOpName(step.op);
    if (!op && !aten)
      return f.Error("op",
                     Quote(step.op) +
                         " is not a library op kforge runs (docs/formats.md lists them; any ATen operator "
                         "is aten::NAME under --allow-ops all)");
    KFORGE_ASSIGN_OR_RETURN(const nlohmann::json* args, f.Get("args"));
    if (!args->is_array()) return f.Error("args", "expected an array of tensor names");
    int n = static_cast<int>(args->size());
    if (aten && n > 16) return f.Error("args", "at most 16 tensors");
    if (op && (n < op->min_tensors || (op->max_tensors >= 0 && n > op->max_tensors) || n > 16)) {
      return f.Error("args", std::string(op->name) + " takes " + std::to_string(op->min_tensors) +
                                 (op->max_tensors == op->min_tensors
                                      ? ""
                                      : " to " + (op->max_tensors < 0 ? std::string("16")
                                                                      : std::to_string(op->max_tensors))) +
                                 " tensors, got " + std::to_string(n));
    }
    for (size_t i = 0; i < args->size(); ++i) {
      const nlohmann::json& a = (*args)[i];
      if (!a.is_string() || !IsTensorName(a.get<std::string>()))
        return Status::InvalidArgument(Indexed(f.Child("args"), i) + ": expected a tensor name");
      step.op_args.push_back(a.get<std::string>());
    }
    KFORGE_ASSIGN_OR_RETURN(step.op_out, ReadTensorName(f, "out"));
    if (f.Has("attrs")) {
      step.op_attrs = value["attrs"];
      KFORGE_RETURN_IF_ERROR(op ? CheckOpAttrs(*op, step.op_attrs, f.Child("attrs"))
                                : CheckAtenOpAttrs(step.op_attrs, f.Child("attrs")));
    }
    return step;
  }
  if (value.contains("fill")) {
    KFORGE_RETURN_IF_ERROR(f.CheckObject({"fill", "value"}));
    step.kind = LaunchStep::Kind::kFill;
    KFORGE_ASSIGN_OR_RETURN(step.fill_target, ReadTensorName(f, "fill"));
    KFORGE_ASSIGN_OR_RETURN(const nlohmann::json* fill_value, f.Get("value"));
    KFORGE_ASSIGN_OR_RETURN(step.fill_value, ReadFillValue(*fill_value, f.Child("value")));
    return step;
  }
  KFORGE_RETURN_IF_ERROR(f.CheckObject({"view", "of", "offset", "shape", "dtype"}));
  step.kind = LaunchStep::Kind::kView;
  KFORGE_ASSIGN_OR_RETURN(step.view_name, ReadTensorName(f, "view"));
  KFORGE_ASSIGN_OR_RETURN(step.view_of, ReadTensorName(f, "of"));
  if (f.Has("offset")) {
    KFORGE_ASSIGN_OR_RETURN(step.view_offset, ReadExpr(value["offset"], f.Child("offset")));
  }
  KFORGE_ASSIGN_OR_RETURN(const nlohmann::json* shape, f.Get("shape"));
  if (!shape->is_array() || shape->size() > 8)
    return f.Error("shape", "expected an array of at most 8 sizes");
  for (size_t i = 0; i < shape->size(); ++i) {
    KFORGE_ASSIGN_OR_RETURN(std::string dim, ReadExpr((*shape)[i], Indexed(f.Child("shape"), i)));
    step.view_shape.push_back(std::move(dim));
  }
  if (f.Has("dtype")) {
    KFORGE_ASSIGN_OR_RETURN(step.view_dtype, f.String("dtype"));
    if (!ParseDType(step.view_dtype)) return f.Error("dtype", "unknown dtype " + Quote(step.view_dtype));
  }
  return step;
}

StatusOr<LaunchStep> ReadStep(const nlohmann::json& value, const std::string& path) {
  JsonFields f(value, path);
  LaunchStep step;
  if (value.is_object() && (value.contains("op") || value.contains("fill") || value.contains("view")))
    return ReadV2Step(value, f, path);
  if (value.is_object() && value.contains("memset")) {
    KFORGE_RETURN_IF_ERROR(f.CheckObject({"memset", "value"}));
    step.kind = LaunchStep::Kind::kMemset;
    KFORGE_ASSIGN_OR_RETURN(step.memset_target, f.String("memset"));
    if (!IsTensorName(step.memset_target)) return f.Error("memset", "expected a tensor name");
    if (f.Has("value")) {
      KFORGE_ASSIGN_OR_RETURN(step.memset_value, f.Number("value"));
    }
    return step;
  }
  KFORGE_RETURN_IF_ERROR(f.CheckObject({"kernel", "grid", "block", "shared_bytes", "args"}));
  KFORGE_ASSIGN_OR_RETURN(step.kernel, f.String("kernel"));
  if (!IsKernelName(step.kernel)) {
    return f.Error(
        "kernel", "expected a kernel name (an identifier, or a template instance such as \"k<float, 256>\")");
  }
  KFORGE_ASSIGN_OR_RETURN(const nlohmann::json* grid, f.Get("grid"));
  KFORGE_ASSIGN_OR_RETURN(step.grid, ReadDims(*grid, f.Child("grid")));
  KFORGE_ASSIGN_OR_RETURN(const nlohmann::json* block, f.Get("block"));
  KFORGE_ASSIGN_OR_RETURN(step.block, ReadDims(*block, f.Child("block")));
  if (f.Has("shared_bytes")) {
    KFORGE_ASSIGN_OR_RETURN(step.shared_bytes, ReadExpr(value["shared_bytes"], f.Child("shared_bytes")));
  }
  KFORGE_ASSIGN_OR_RETURN(const nlohmann::json* args, f.Get("args"));
  if (!args->is_array()) return f.Error("args", "expected an array");
  if (args->size() > kMaxArgs) return f.Error("args", "more than 64 arguments");
  for (size_t i = 0; i < args->size(); ++i) {
    KFORGE_ASSIGN_OR_RETURN(LaunchArg arg, ReadArg((*args)[i], Indexed(f.Child("args"), i)));
    step.args.push_back(std::move(arg));
  }
  return step;
}

StatusOr<ScratchBuffer> ReadScratch(const nlohmann::json& value, const std::string& path) {
  JsonFields f(value, path);
  KFORGE_RETURN_IF_ERROR(f.CheckObject({"name", "dtype", "shape"}));
  ScratchBuffer buffer;
  KFORGE_ASSIGN_OR_RETURN(buffer.name, f.String("name"));
  if (!IsTensorName(buffer.name)) return f.Error("name", "expected an identifier");
  KFORGE_ASSIGN_OR_RETURN(buffer.dtype, f.String("dtype"));
  if (!ParseDType(buffer.dtype)) return f.Error("dtype", "unknown dtype " + Quote(buffer.dtype));
  KFORGE_ASSIGN_OR_RETURN(const nlohmann::json* shape, f.Get("shape"));
  if (!shape->is_array() || shape->size() > 8)
    return f.Error("shape", "expected an array of at most 8 sizes");
  for (size_t i = 0; i < shape->size(); ++i) {
    KFORGE_ASSIGN_OR_RETURN(std::string dim, ReadExpr((*shape)[i], Indexed(f.Child("shape"), i)));
    buffer.shape.push_back(std::move(dim));
  }
  return buffer;
}

/// Reads launches/scratch/options (shared by the JSON form and the reply's ```json block).
Status ReadPlan(const JsonFields& f, const nlohmann::json& json, Solution& solution) {
  KFORGE_ASSIGN_OR_RETURN(const nlohmann::json* launches, f.Get("launches"));
  if (!launches->is_array() || launches->empty()) return f.Error("launches", "expected a non-empty array");
  if (launches->size() > kMaxLaunches) return f.Error("launches", "more than 64 steps");
  for (size_t i = 0; i < launches->size(); ++i) {
    KFORGE_ASSIGN_OR_RETURN(LaunchStep step, ReadStep((*launches)[i], Indexed(f.Child("launches"), i)));
    solution.launches.push_back(std::move(step));
  }
  if (f.Has("scratch")) {
    const nlohmann::json& scratch = json["scratch"];
    if (!scratch.is_array()) return f.Error("scratch", "expected an array");
    if (scratch.size() > kMaxScratch) return f.Error("scratch", "more than 16 buffers");
    for (size_t i = 0; i < scratch.size(); ++i) {
      KFORGE_ASSIGN_OR_RETURN(ScratchBuffer buffer, ReadScratch(scratch[i], Indexed(f.Child("scratch"), i)));
      solution.scratch.push_back(std::move(buffer));
    }
  }
  if (f.Has("options")) {
    const nlohmann::json& options = json["options"];
    if (!options.is_array()) return f.Error("options", "expected an array of strings");
    for (size_t i = 0; i < options.size(); ++i) {
      if (!options[i].is_string())
        return Status::InvalidArgument(Indexed(f.Child("options"), i) + ": expected a string");
      solution.options.push_back(options[i].get<std::string>());
    }
  }
  return Status::Ok();
}

/// The fenced blocks of a reply: language tag and body.
struct Fence {
  std::string lang;
  std::string body;
};

std::vector<Fence> FindFences(std::string_view text) {
  std::vector<Fence> fences;
  size_t pos = 0;
  while (true) {
    size_t open = text.find("```", pos);
    if (open == std::string_view::npos) break;
    size_t line_end = text.find('\n', open);
    if (line_end == std::string_view::npos) break;
    std::string lang(text.substr(open + 3, line_end - open - 3));
    while (!lang.empty() && std::isspace(static_cast<unsigned char>(lang.back()))) lang.pop_back();
    for (char& c : lang) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t close = text.find("\n```", line_end);
    if (close == std::string_view::npos) break;
    fences.push_back({lang, std::string(text.substr(line_end + 1, close - line_end))});
    pos = close + 4;
    size_t next_line = text.find('\n', pos);
    pos = next_line == std::string_view::npos ? text.size() : next_line;
  }
  return fences;
}

bool IsCudaLang(const std::string& lang) {
  return lang == "cuda" || lang == "cu" || lang == "cpp" || lang == "c++" || lang == "cuda-c++";
}

}  // namespace

bool IsTensorName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  if (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_') return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  }
  return true;
}

bool IsKernelName(std::string_view name) {
  if (name.empty() || name.size() > 1024) return false;
  if (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_' && name[0] != ':') return false;
  bool symbol = true;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') continue;
    symbol = false;
    if (c != ':' && c != '<' && c != '>' && c != ',' && c != ' ' && c != '*' && c != '&' && c != '-')
      return false;
  }
  return symbol || name.size() <= 256;
}

namespace {

/// An optional "schema": kforge.solution/1 or /2 (the steps decide which one the plan needs).
Status CheckSchemaField(const JsonFields& f) {
  if (!f.Has("schema")) return Status::Ok();
  KFORGE_ASSIGN_OR_RETURN(std::string schema, f.String("schema"));
  if (schema != kSolutionSchema && schema != kSolutionSchemaV2) {
    return f.Error("schema", "expected \"" + std::string(kSolutionSchema) + "\" or \"" +
                                 std::string(kSolutionSchemaV2) + "\", got " + Quote(schema));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Solution> SolutionFromJson(const nlohmann::json& json, const std::string& where) {
  JsonFields f(json, "");
  Status status = [&]() -> Status {
    KFORGE_RETURN_IF_ERROR(f.CheckObject({"schema", "task", "source", "launches", "scratch", "options"}));
    return Status::Ok();
  }();
  if (!status.ok()) return status.WithContext(where);
  Solution solution;
  status = [&]() -> Status {
    KFORGE_RETURN_IF_ERROR(CheckSchemaField(f));
    KFORGE_ASSIGN_OR_RETURN(solution.task, f.StringOr("task", ""));
    KFORGE_ASSIGN_OR_RETURN(solution.source, f.String("source"));
    if (solution.source.size() > kMaxSourceBytes) {
      return f.Error("source", std::to_string(solution.source.size()) + " bytes, over the 256 KiB limit");
    }
    return ReadPlan(f, json, solution);
  }();
  if (!status.ok()) return status.WithContext(where);
  return solution;
}

StatusOr<Solution> ParseSolutionText(std::string_view text, const std::string& where, ReplyBlocks blocks) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte order mark
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    KFORGE_ASSIGN_OR_RETURN(nlohmann::json json, ParseJson(text, where));
    return SolutionFromJson(json, where);
  }
  std::vector<Fence> cuda, plan;
  for (Fence& fence : FindFences(text)) {
    if (IsCudaLang(fence.lang))
      cuda.push_back(std::move(fence));
    else if (fence.lang == "json")
      plan.push_back(std::move(fence));
  }
  if (blocks == ReplyBlocks::kLast && !cuda.empty() && !plan.empty()) {
    cuda.erase(cuda.begin(), cuda.end() - 1);
    plan.erase(plan.begin(), plan.end() - 1);
  }
  if (cuda.size() != 1 || plan.size() != 1) {
    return Status::InvalidArgument(where + ": expected one ```cuda block and one ```json block, found " +
                                   std::to_string(cuda.size()) + " and " + std::to_string(plan.size()));
  }
  if (cuda[0].body.size() > kMaxSourceBytes) {
    return Status::InvalidArgument(where + ": ```cuda block: " + std::to_string(cuda[0].body.size()) +
                                   " bytes, over the 256 KiB limit");
  }
  if (size_t bad = 0; !IsValidUtf8(cuda[0].body, &bad)) {
    return Status::InvalidArgument(where + ": ```cuda block: invalid UTF-8 at byte " + std::to_string(bad) +
                                   " of the block");
  }
  KFORGE_ASSIGN_OR_RETURN(nlohmann::json json, ParseJson(plan[0].body, where + ": ```json block"));
  JsonFields f(json, "");
  Solution solution;
  solution.source = std::move(cuda[0].body);
  Status status = [&]() -> Status {
    KFORGE_RETURN_IF_ERROR(f.CheckObject({"schema", "launches", "scratch", "options", "task"}));
    KFORGE_RETURN_IF_ERROR(CheckSchemaField(f));
    KFORGE_ASSIGN_OR_RETURN(solution.task, f.StringOr("task", ""));
    return ReadPlan(f, json, solution);
  }();
  if (!status.ok()) return status.WithContext(where + ": ```json block");
  return solution;
}

bool UsesPlanV2(const Solution& solution) {
  for (const LaunchStep& step : solution.launches) {
    if (step.kind != LaunchStep::Kind::kKernel && step.kind != LaunchStep::Kind::kMemset) return true;
    for (const LaunchArg& arg : step.args)
      if (arg.kind == LaunchArg::Kind::kItem) return true;
  }
  return false;
}

namespace {

nlohmann::json FillValueToJson(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

}  // namespace

nlohmann::json SolutionToJson(const Solution& solution) {
  nlohmann::json launches = nlohmann::json::array();
  for (const LaunchStep& step : solution.launches) {
    if (step.kind == LaunchStep::Kind::kMemset) {
      launches.push_back({{"memset", step.memset_target}, {"value", step.memset_value}});
      continue;
    }
    if (step.kind == LaunchStep::Kind::kOp) {
      launches.push_back(
          {{"op", step.op}, {"args", step.op_args}, {"out", step.op_out}, {"attrs", step.op_attrs}});
      continue;
    }
    if (step.kind == LaunchStep::Kind::kFill) {
      launches.push_back({{"fill", step.fill_target}, {"value", FillValueToJson(step.fill_value)}});
      continue;
    }
    if (step.kind == LaunchStep::Kind::kView) {
      nlohmann::json view = {{"view", step.view_name},
                             {"of", step.view_of},
                             {"offset", step.view_offset},
                             {"shape", step.view_shape}};
      if (!step.view_dtype.empty()) view["dtype"] = step.view_dtype;
      launches.push_back(std::move(view));
      continue;
    }
    nlohmann::json args = nlohmann::json::array();
    for (const LaunchArg& arg : step.args) {
      static constexpr std::array<const char*, 8> kPrefix = {
          "", "i32:", "i64:", "u32:", "u64:", "f32:", "f64:", "item:"};
      std::string index = arg.kind == LaunchArg::Kind::kItem && arg.index != "0" ? "[" + arg.index + "]" : "";
      args.push_back(kPrefix[static_cast<int>(arg.kind)] + arg.text + index);
    }
    launches.push_back({{"kernel", step.kernel},
                        {"grid", step.grid},
                        {"block", step.block},
                        {"shared_bytes", step.shared_bytes},
                        {"args", args}});
  }
  nlohmann::json scratch = nlohmann::json::array();
  for (const ScratchBuffer& buffer : solution.scratch) {
    scratch.push_back({{"name", buffer.name}, {"dtype", buffer.dtype}, {"shape", buffer.shape}});
  }
  nlohmann::json json = nlohmann::json::object();
  json["schema"] = UsesPlanV2(solution) ? kSolutionSchemaV2 : kSolutionSchema;
  json["task"] = solution.task;
  json["source"] = solution.source;
  json["launches"] = launches;
  json["scratch"] = scratch;
  json["options"] = solution.options;
  return json;
}

std::string SolutionHash(const Solution& solution) {
  nlohmann::json json = SolutionToJson(solution);
  json.erase("task");
  return "sha256:" + Sha256Hex(json.dump());
}

}  // namespace kforge::common
