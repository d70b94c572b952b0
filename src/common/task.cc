// task.json loading and validation.
#include "kforge/common/task.h"
#include "kforge/common/task_tree.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "common/task_checker.h"
#include "kforge/common/expr.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/text.h"

namespace kforge::common {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using task_json::Checker;
using task_json::Count;
using task_json::ParseInit;

constexpr std::string_view kSchema = "kforge.task/1";
constexpr std::string_view kSchemaPrefix = "kforge.task/";
/// Largest task.json read; a bigger file is an error before parsing.
constexpr uintmax_t kMaxTaskJsonBytes = 16 << 20;

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Relative artifact paths stay inside the task folder.
Status CheckRelative(const Checker& c, const std::string& path, const std::string& rel) {
  fs::path p(rel);
  if (rel.empty() || p.is_absolute()) return c.Error(path, "expected a relative path, got " + Quote(rel));
  for (const fs::path& part : p)
    if (part == "..") return c.Error(path, "path leaves the task folder: " + Quote(rel));
  return Status::Ok();
}

InitSpec DefaultInit(DType dtype) {
  InitSpec init;
  if (IsFloating(dtype)) return init;
  init.dist = InitSpec::Dist::kRandint;
  init.low = 0;
  init.high = dtype == DType::kBool ? 2 : 10;
  return init;
}

/// An input's `structure`: floating, with at least two dimensions (the last two equal, checked per
/// variant when drawn).
Status ParseStructure(const Checker& c, const json& v, const std::string& path, std::string_view list,
                      TensorSpec& spec) {
  const std::string structure_path = path + ".structure";
  if (list != "inputs") return c.Error(structure_path, "only inputs have a structure");
  KFORGE_ASSIGN_OR_RETURN(std::string name, c.String(v, structure_path));
  std::optional<Structure> parsed = kStructureNames.Parse(name);
  if (!parsed || *parsed == Structure::kNone)
    return c.Error(structure_path, Quote(name) + " is not " + kStructureNames.Spellings());
  if (!IsFloating(spec.dtype)) return c.Error(structure_path, "only floating inputs have a structure");
  if (spec.shape.size() < 2)
    return c.Error(structure_path, "a structure needs a matrix: two dimensions or more");
  spec.structure = *parsed;
  return Status::Ok();
}

Status ParseTensors(const Checker& c, const json& root, std::string_view key, std::vector<TensorSpec>& out,
                    std::set<std::string>& names) {
  std::string list_path(key);
  if (!root.contains(key)) return c.Error("", "missing field \"" + list_path + "\"");
  const json& list = root[std::string(key)];
  KFORGE_RETURN_IF_ERROR(c.Array(list, list_path));
  for (size_t i = 0; i < list.size(); ++i) {
    std::string path = list_path + "[" + std::to_string(i) + "]";
    const json& v = list[i];
    KFORGE_RETURN_IF_ERROR(c.Object(v, path));
    KFORGE_RETURN_IF_ERROR(c.OnlyKeys(v, path, {"name", "dtype", "shape", "init", "structure"}));
    for (std::string_view req : {"name", "dtype", "shape"}) KFORGE_RETURN_IF_ERROR(c.Require(v, path, req));
    TensorSpec spec;
    KFORGE_ASSIGN_OR_RETURN(spec.name, c.String(v["name"], path + ".name"));
    if (spec.name.empty()) return c.Error(path + ".name", "empty name");
    if (!names.insert(spec.name).second)
      return c.Error(path + ".name", "duplicate tensor name " + Quote(spec.name));
    KFORGE_ASSIGN_OR_RETURN(std::string dtype, c.String(v["dtype"], path + ".dtype"));
    std::optional<DType> parsed = ParseDType(dtype);
    if (!parsed) return c.Error(path + ".dtype", "unknown dtype " + Quote(dtype));
    spec.dtype = *parsed;
    KFORGE_RETURN_IF_ERROR(c.Array(v["shape"], path + ".shape"));
    for (size_t d = 0; d < v["shape"].size(); ++d) {
      const json& dim = v["shape"][d];
      std::string dim_path = path + ".shape[" + std::to_string(d) + "]";
      if (dim.is_number_integer()) {
        KFORGE_ASSIGN_OR_RETURN(int64_t n, c.Int(dim, dim_path));
        if (n < 0) return c.Error(dim_path, "negative dimension " + std::to_string(n));
        spec.shape.push_back(std::to_string(n));
      } else if (dim.is_string()) {
        std::string text = dim.get<std::string>();
        Status parsed_expr = ParseExpr(text);
        if (!parsed_expr.ok()) return c.Error(dim_path, parsed_expr.message());
        spec.shape.push_back(text);
      } else {
        return c.Error(dim_path,
                       "expected an integer or an expression string, got " + std::string(dim.type_name()));
      }
    }
    spec.init = DefaultInit(spec.dtype);
    if (v.contains("init")) KFORGE_RETURN_IF_ERROR(ParseInit(c, v["init"], path + ".init", spec.init));
    if (v.contains("structure")) KFORGE_RETURN_IF_ERROR(ParseStructure(c, v["structure"], path, key, spec));
    out.push_back(std::move(spec));
  }
  return Status::Ok();
}

Status ParseSymbols(const Checker& c, const json& v, const std::string& path,
                    std::map<std::string, int64_t>& out) {
  KFORGE_RETURN_IF_ERROR(c.Object(v, path));
  for (auto it = v.begin(); it != v.end(); ++it) {
    std::string sym_path = path + "." + KeyText(it.key());
    if (!IsIdentifier(it.key())) return c.Error(sym_path, "symbol names are identifiers");
    KFORGE_ASSIGN_OR_RETURN(out[it.key()], c.Int(it.value(), sym_path));
  }
  return Status::Ok();
}

Status ParseArtifacts(const Checker& c, const json& v, const fs::path& dir, Artifacts& out) {
  const std::string path = "artifacts";
  KFORGE_RETURN_IF_ERROR(c.Object(v, path));
  KFORGE_RETURN_IF_ERROR(c.OnlyKeys(v, path, {"packages", "params", "golden"}));
  if (v.contains("packages")) {
    const json& packages = v["packages"];
    KFORGE_RETURN_IF_ERROR(c.Object(packages, path + ".packages"));
    for (auto it = packages.begin(); it != packages.end(); ++it) {
      std::string variant_path = path + ".packages." + KeyText(it.key());
      KFORGE_RETURN_IF_ERROR(c.Object(it.value(), variant_path));
      KFORGE_RETURN_IF_ERROR(c.OnlyKeys(it.value(), variant_path, {"cpu", "cuda"}));
      for (auto dev = it.value().begin(); dev != it.value().end(); ++dev) {
        std::string dev_path = variant_path + "." + KeyText(dev.key());
        KFORGE_ASSIGN_OR_RETURN(std::string rel, c.String(dev.value(), dev_path));
        KFORGE_RETURN_IF_ERROR(CheckRelative(c, dev_path, rel));
        out.packages[it.key()][dev.key()] = dir / rel;
      }
    }
  }
  if (v.contains("params")) {
    KFORGE_ASSIGN_OR_RETURN(std::string rel, c.String(v["params"], path + ".params"));
    KFORGE_RETURN_IF_ERROR(CheckRelative(c, path + ".params", rel));
    out.params = dir / rel;
  }
  if (v.contains("golden")) {
    const json& g = v["golden"];
    std::string gpath = path + ".golden";
    KFORGE_RETURN_IF_ERROR(c.Object(g, gpath));
    KFORGE_RETURN_IF_ERROR(c.OnlyKeys(g, gpath, {"seed", "variant", "file"}));
    KFORGE_RETURN_IF_ERROR(c.Require(g, gpath, "file"));
    Artifacts::Golden golden;
    if (g.contains("seed")) {
      KFORGE_ASSIGN_OR_RETURN(int64_t seed, c.Int(g["seed"], gpath + ".seed"));
      if (seed < 0) return c.Error(gpath + ".seed", "negative seed");
      golden.seed = static_cast<uint64_t>(seed);
    }
    if (g.contains("variant")) {
      KFORGE_ASSIGN_OR_RETURN(golden.variant, c.String(g["variant"], gpath + ".variant"));
    }
    KFORGE_ASSIGN_OR_RETURN(std::string rel, c.String(g["file"], gpath + ".file"));
    KFORGE_RETURN_IF_ERROR(CheckRelative(c, gpath + ".file", rel));
    golden.file = dir / rel;
    out.golden = std::move(golden);
  }
  return Status::Ok();
}

// The schema version, then the keys a task.json may and must have.
Status CheckSchemaAndKeys(const Checker& c, const json& root) {
  KFORGE_RETURN_IF_ERROR(c.Object(root, ""));
  KFORGE_RETURN_IF_ERROR(c.Require(root, "", "schema"));
  KFORGE_ASSIGN_OR_RETURN(std::string schema, c.String(root["schema"], "schema"));
  if (schema != kSchema) {
    if (schema.rfind(kSchemaPrefix, 0) == 0)
      return c.Error("schema", "unsupported version " + Quote(schema) + " (this kforge reads " +
                                   std::string(kSchema) + ")");
    return c.Error("schema", "expected \"" + std::string(kSchema) + "\", got " + Quote(schema));
  }
  KFORGE_RETURN_IF_ERROR(c.OnlyKeys(
      root, "", {"schema",    "id",           "level",     "tags",    "license", "description", "spec",
                 "reference", "symbols",      "constants", "inputs",  "params",  "outputs",     "variants",
                 "tolerance", "conditioning", "behaviour", "domains", "cost",    "artifacts"}));
  for (std::string_view req : {"id", "description", "reference", "inputs", "outputs"})
    KFORGE_RETURN_IF_ERROR(c.Require(root, "", req));
  return Status::Ok();
}

// id, level, tags, licence, description, spec and the reference file.
Status ParseHeader(const Checker& c, const json& root, const fs::path& dir, Task& task) {
  KFORGE_ASSIGN_OR_RETURN(task.id, c.String(root["id"], "id"));
  if (Status id = CheckTaskId(task.id); !id.ok()) return c.Error("id", id.message());
  if (root.contains("level")) {
    KFORGE_ASSIGN_OR_RETURN(int64_t level, c.Int(root["level"], "level"));
    if (level < 0 || level > 1000) return c.Error("level", "out of range");
    task.level = static_cast<int>(level);
  }
  if (root.contains("tags")) {
    KFORGE_RETURN_IF_ERROR(c.Array(root["tags"], "tags"));
    for (size_t i = 0; i < root["tags"].size(); ++i) {
      KFORGE_ASSIGN_OR_RETURN(std::string tag, c.String(root["tags"][i], "tags[" + std::to_string(i) + "]"));
      task.tags.push_back(std::move(tag));
    }
  }
  if (root.contains("license")) {
    KFORGE_ASSIGN_OR_RETURN(task.license, c.String(root["license"], "license"));
    if (Status license = CheckLicense(task.license); !license.ok())
      return c.Error("license", license.message());
  }
  KFORGE_ASSIGN_OR_RETURN(task.description, c.String(root["description"], "description"));
  if (root.contains("spec")) {
    KFORGE_ASSIGN_OR_RETURN(task.spec, c.String(root["spec"], "spec"));
  }

  KFORGE_ASSIGN_OR_RETURN(std::string reference, c.String(root["reference"], "reference"));
  KFORGE_RETURN_IF_ERROR(CheckRelative(c, "reference", reference));
  task.reference = dir / reference;
  std::error_code ec;
  if (!fs::is_regular_file(task.reference, ec))
    return c.Error("reference", "missing reference file " + Quote(reference, 80) + " in the task folder");
  return Status::Ok();
}

// Symbols, constants, then inputs, params and outputs (out0, out1, ... in order).
Status ParseSymbolsAndTensors(const Checker& c, const json& root, Task& task) {
  if (root.contains("symbols"))
    KFORGE_RETURN_IF_ERROR(ParseSymbols(c, root["symbols"], "symbols", task.symbols));
  if (root.contains("constants")) {
    KFORGE_RETURN_IF_ERROR(c.Object(root["constants"], "constants"));
    for (auto it = root["constants"].begin(); it != root["constants"].end(); ++it) {
      std::string const_path = "constants." + KeyText(it.key());
      if (!IsIdentifier(it.key())) return c.Error(const_path, "constant names are identifiers");
      KFORGE_ASSIGN_OR_RETURN(task.constants[it.key()], c.Number(it.value(), const_path));
    }
  }

  std::set<std::string> names;
  KFORGE_RETURN_IF_ERROR(ParseTensors(c, root, "inputs", task.inputs, names));
  if (root.contains("params")) KFORGE_RETURN_IF_ERROR(ParseTensors(c, root, "params", task.params, names));
  KFORGE_RETURN_IF_ERROR(ParseTensors(c, root, "outputs", task.outputs, names));
  if (task.outputs.empty()) return c.Error("outputs", "a task has at least one output");
  for (size_t i = 0; i < task.outputs.size(); ++i) {
    if (task.outputs[i].name != "out" + std::to_string(i))
      return c.Error("outputs[" + std::to_string(i) + "].name",
                     "outputs are named out0, out1, ... in order; expected \"out" + std::to_string(i) + "\"");
  }
  return Status::Ok();
}

// The base symbols as variant "default", then the declared and derived variants.
Status ParseVariants(const Checker& c, const json& root, Task& task) {
  task.variants.push_back({"default", task.symbols});
  if (root.contains("variants")) {
    const json& variants = root["variants"];
    KFORGE_RETURN_IF_ERROR(c.Array(variants, "variants"));
    for (size_t i = 0; i < variants.size(); ++i) {
      std::string path = "variants[" + std::to_string(i) + "]";
      const json& v = variants[i];
      KFORGE_RETURN_IF_ERROR(c.Object(v, path));
      KFORGE_RETURN_IF_ERROR(c.OnlyKeys(v, path, {"name", "symbols", "kind"}));
      KFORGE_RETURN_IF_ERROR(c.Require(v, path, "name"));
      KFORGE_RETURN_IF_ERROR(c.Require(v, path, "symbols"));
      Variant variant;
      KFORGE_ASSIGN_OR_RETURN(variant.name, c.String(v["name"], path + ".name"));
      if (v.contains("kind")) {
        KFORGE_ASSIGN_OR_RETURN(std::string kind, c.String(v["kind"], path + ".kind"));
        std::optional<VariantKind> parsed = kVariantKindNames.Parse(kind);
        if (!parsed) return c.Error(path + ".kind", Quote(kind) + " is not \"declared\" or \"derived\"");
        variant.kind = *parsed;
      }
      if (variant.name.empty() ||
          variant.name.find_first_not_of(
              "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != std::string::npos)
        return c.Error(path + ".name", "variant names use letters, digits, '_' and '-'");
      if (task.FindVariant(variant.name))
        return c.Error(path + ".name",
                       "duplicate variant " + Quote(variant.name) + " (\"default\" is the base symbols)");
      std::map<std::string, int64_t> overrides;
      KFORGE_RETURN_IF_ERROR(ParseSymbols(c, v["symbols"], path + ".symbols", overrides));
      variant.symbols = task.symbols;
      for (const auto& [name, value] : overrides) {
        if (!task.symbols.count(name))
          return c.Error(path + ".symbols." + KeyText(name),
                         "not a symbol of the task (symbols lists the defaults)");
        variant.symbols[name] = value;
      }
      task.variants.push_back(std::move(variant));
    }
  }
  return Status::Ok();
}

Status CheckShapesResolve(const Checker& c, const Task& task) {
  // Every shape must resolve under every variant.
  for (const Variant& variant : task.variants) {
    for (auto [key, list] : {std::pair{"inputs", &task.inputs}, std::pair{"params", &task.params},
                             std::pair{"outputs", &task.outputs}}) {
      for (size_t i = 0; i < list->size(); ++i) {
        StatusOr<std::vector<int64_t>> shape = ResolveShape((*list)[i], variant.symbols);
        if (!shape.ok()) {
          std::string where = std::string(key) + "[" + std::to_string(i) + "].shape";
          if (variant.name != "default") where += " (variant " + Quote(variant.name) + ")";
          return c.Error(where, shape.status().message());
        }
      }
    }
  }
  return Status::Ok();
}

// The task's tolerance, else the loosest default over its outputs' dtypes.
Status ParseTolerance(const Checker& c, const json& root, Task& task) {
  bool tolerance_set = false;
  if (root.contains("tolerance")) {
    const json& t = root["tolerance"];
    KFORGE_RETURN_IF_ERROR(c.Object(t, "tolerance"));
    KFORGE_RETURN_IF_ERROR(c.OnlyKeys(t, "tolerance", {"atol", "rtol"}));
    task.tolerance = DefaultTolerance(task.outputs[0].dtype);
    for (auto [key, field] :
         {std::pair{"atol", &task.tolerance.atol}, std::pair{"rtol", &task.tolerance.rtol}}) {
      if (!t.contains(key)) continue;
      KFORGE_ASSIGN_OR_RETURN(*field, c.Number(t[key], std::string("tolerance.") + key));
      if (!(*field >= 0) || !std::isfinite(*field))
        return c.Error(std::string("tolerance.") + key, "must be a finite number >= 0");
    }
    tolerance_set = true;
  }
  if (!tolerance_set) {
    task.tolerance = {0, 0};
    for (const TensorSpec& out : task.outputs) {
      Tolerance d = DefaultTolerance(out.dtype);
      task.tolerance.atol = std::max(task.tolerance.atol, d.atol);
      task.tolerance.rtol = std::max(task.tolerance.rtol, d.rtol);
    }
  }
  task.tolerance_explicit = tolerance_set;
  return Status::Ok();
}

Status ParseCost(const Checker& c, const json& root, Task& task) {
  if (root.contains("cost")) {
    const json& cost = root["cost"];
    KFORGE_RETURN_IF_ERROR(c.Object(cost, "cost"));
    KFORGE_RETURN_IF_ERROR(c.OnlyKeys(cost, "cost", {"flops", "bytes", "derived"}));
    if (cost.contains("derived")) {
      KFORGE_ASSIGN_OR_RETURN(task.cost_derived, c.String(cost["derived"], "cost.derived"));
      if (task.cost_derived.empty())
        return c.Error("cost.derived", "expected the counter's name and version");
    }
    for (auto [key, field] : {std::pair{"flops", &task.cost_flops}, std::pair{"bytes", &task.cost_bytes}}) {
      if (!cost.contains(key)) continue;
      std::string path = std::string("cost.") + key;
      const json& v = cost[key];
      if (v.is_number_integer()) {
        KFORGE_ASSIGN_OR_RETURN(int64_t n, c.Int(v, path));
        *field = std::to_string(n);
      } else {
        KFORGE_ASSIGN_OR_RETURN(*field, c.String(v, path));
      }
      StatusOr<int64_t> value = EvalCost(task, *field, "default");
      if (!value.ok()) return c.Error(path, value.status().message());
    }
  }
  return Status::Ok();
}

StatusOr<Task> ParseTask(const Checker& c, const json& root, const fs::path& dir) {
  Task task;
  task.dir = dir;
  task.json_path = dir / "task.json";
  KFORGE_RETURN_IF_ERROR(CheckSchemaAndKeys(c, root));
  KFORGE_RETURN_IF_ERROR(ParseHeader(c, root, dir, task));
  KFORGE_RETURN_IF_ERROR(ParseSymbolsAndTensors(c, root, task));
  KFORGE_RETURN_IF_ERROR(ParseVariants(c, root, task));
  KFORGE_RETURN_IF_ERROR(CheckShapesResolve(c, task));
  KFORGE_RETURN_IF_ERROR(ParseTolerance(c, root, task));
  KFORGE_RETURN_IF_ERROR(task_json::ParseMeasures(c, root, task));
  KFORGE_RETURN_IF_ERROR(ParseCost(c, root, task));

  if (root.contains("artifacts"))
    KFORGE_RETURN_IF_ERROR(ParseArtifacts(c, root["artifacts"], dir, task.artifacts));
  for (const auto& [variant, devices] : task.artifacts.packages)
    if (!task.FindVariant(variant))
      return c.Error("artifacts.packages." + KeyText(variant), "no such variant");
  if (task.artifacts.golden && !task.FindVariant(task.artifacts.golden->variant))
    return c.Error("artifacts.golden.variant", "no such variant " + Quote(task.artifacts.golden->variant));
  return task;
}

std::string IdOf(const fs::path& rel) {
  std::string id;
  for (const fs::path& part : rel) {
    if (!id.empty()) id += '/';
    id += part.string();
  }
  return id;
}

}  // namespace

Status CheckTaskId(std::string_view id) {
  auto bad = [&id] {
    return Status::InvalidArgument(
        "malformed task id " + Quote(id, 80) +
        ": expected <suite>/.../<name>, 2 to 8 segments of 1 to 128 letters, digits, '_', '.' "
        "and '-' that do not start with '.' or '-'");
  };
  size_t segments = 0;
  size_t start = 0;
  while (true) {
    size_t end = id.find('/', start);
    std::string_view segment =
        id.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (segment.empty() || segment.size() > 128 || segment[0] == '.' || segment[0] == '-') return bad();
    for (char ch : segment) {
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.' && ch != '-') return bad();
    }
    ++segments;
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (segments < 2 || segments > 8) return bad();
  return Status::Ok();
}

Status CheckLicense(std::string_view license) {
  bool ok = !license.empty() && license.size() <= 64 && license.front() != ' ' && license.back() != ' ';
  for (char ch : license)
    ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) ||
                std::string_view(" .+-()").find(ch) != std::string_view::npos);
  if (ok) return Status::Ok();
  return Status::InvalidArgument(
      "expected an SPDX licence id such as \"MIT\" or \"Apache-2.0\" (1 to 64 letters, "
      "digits, spaces and .+-()), got " +
      Quote(license, 80));
}

std::string_view InitDistName(InitSpec::Dist dist) {
  switch (dist) {
    case InitSpec::Dist::kRandn:
      return "randn";
    case InitSpec::Dist::kRand:
      return "rand";
    case InitSpec::Dist::kUniform:
      return "uniform";
    case InitSpec::Dist::kRandint:
      return "randint";
    case InitSpec::Dist::kOnes:
      return "ones";
    case InitSpec::Dist::kZeros:
      return "zeros";
  }
  return "?";
}

Tolerance DefaultTolerance(DType dtype) {
  if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) return {1e-2, 1e-2};
  return {1e-4, 1e-4};
}

const Variant* Task::FindVariant(std::string_view name) const {
  for (const Variant& v : variants)
    if (v.name == name) return &v;
  return nullptr;
}

const TensorSpec* Task::FindTensor(std::string_view name) const {
  for (const auto* list : {&inputs, &params, &outputs})
    for (const TensorSpec& spec : *list)
      if (spec.name == name) return &spec;
  return nullptr;
}

StatusOr<Task> LoadTask(const fs::path& task_dir) {
  fs::path file = task_dir / "task.json";
  Checker c(file.string());
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return Status::NotFound(file.string() + ": cannot open (not a file)");
  uintmax_t size = fs::file_size(file, ec);
  if (ec || size > kMaxTaskJsonBytes)
    return Status::InvalidArgument(file.string() + ": larger than " +
                                   std::to_string(kMaxTaskJsonBytes >> 20) + " MiB");
  std::ifstream in(file, std::ios::binary);
  if (!in) return Status::NotFound(file.string() + ": cannot open");
  std::stringstream buffer;
  buffer << in.rdbuf();
  KFORGE_ASSIGN_OR_RETURN(json root, ParseJson(buffer.str(), file.string()));
  KFORGE_ASSIGN_OR_RETURN(Task task, ParseTask(c, root, task_dir));
  // The id's components must be the folder's last components.
  std::vector<std::string> id_parts, dir_parts;
  for (const fs::path& p : fs::path(task.id)) id_parts.push_back(p.string());
  for (const fs::path& p : task_dir.lexically_normal()) {
    if (!p.empty()) dir_parts.push_back(p.string());
  }
  if (!dir_parts.empty() && dir_parts.back().empty()) dir_parts.pop_back();
  bool match = dir_parts.size() >= id_parts.size() &&
               std::equal(id_parts.rbegin(), id_parts.rend(), dir_parts.rbegin());
  if (!match) return c.Error("id", Quote(task.id) + " does not match the folder " + task_dir.string());
  return task;
}

StatusOr<std::vector<Task>> LoadTaskTree(const fs::path& root) {
  std::vector<fs::path> dirs;
  KFORGE_RETURN_IF_ERROR(WalkTaskTree(root, [&dirs](const fs::path& dir) {
    dirs.push_back(dir);
    return true;
  }));
  std::vector<Task> tasks;
  for (const fs::path& dir : dirs) {
    KFORGE_ASSIGN_OR_RETURN(Task task, LoadTask(dir));
    std::string expected = IdOf(dir.lexically_relative(root));
    if (task.id != expected)
      return Checker(task.json_path.string())
          .Error("id", Quote(task.id) + " does not match its folder " + Quote(expected));
    tasks.push_back(std::move(task));
  }
  std::sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) { return a.id < b.id; });
  return tasks;
}

StatusOr<Task> FindTask(const fs::path& root, std::string_view id) {
  KFORGE_RETURN_IF_ERROR(CheckTaskId(id));
  fs::path rel(id);
  std::error_code ec;
  if (!fs::is_regular_file(root / rel / "task.json", ec))
    return Status::NotFound("no task " + Quote(id) + " under " + root.string());
  KFORGE_ASSIGN_OR_RETURN(Task task, LoadTask(root / rel));
  if (task.id != id)
    return Checker(task.json_path.string())
        .Error("id", Quote(task.id) + " does not match its folder " + Quote(id));
  return task;
}

StatusOr<std::vector<int64_t>> ResolveShape(const TensorSpec& spec,
                                            const std::map<std::string, int64_t>& symbols) {
  ExprEnv env;
  env.symbol = [&symbols](std::string_view name) -> std::optional<int64_t> {
    auto it = symbols.find(std::string(name));
    if (it == symbols.end()) return std::nullopt;
    return it->second;
  };
  std::vector<int64_t> shape;
  for (const std::string& dim : spec.shape) {
    KFORGE_ASSIGN_OR_RETURN(int64_t n, EvalExpr(dim, env));
    if (n < 0)
      return Status::InvalidArgument("in " + Quote(dim, 60) + ": negative dimension " + std::to_string(n));
    shape.push_back(n);
  }
  return shape;
}

StatusOr<std::map<std::string, std::vector<int64_t>>> ResolveShapes(const Task& task,
                                                                    std::string_view variant) {
  const Variant* v = task.FindVariant(variant);
  if (!v) return Status::NotFound("task " + task.id + " has no variant " + Quote(variant));
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto* list : {&task.inputs, &task.params, &task.outputs}) {
    for (const TensorSpec& spec : *list) {
      KFORGE_ASSIGN_OR_RETURN(shapes[spec.name], ResolveShape(spec, v->symbols));
    }
  }
  return shapes;
}

StatusOr<int64_t> EvalCost(const Task& task, std::string_view expr, std::string_view variant) {
  const Variant* v = task.FindVariant(variant);
  if (!v) return Status::NotFound("task " + task.id + " has no variant " + Quote(variant));
  KFORGE_ASSIGN_OR_RETURN(auto shapes, ResolveShapes(task, variant));
  ExprEnv env;
  env.symbol = [v](std::string_view name) -> std::optional<int64_t> {
    auto it = v->symbols.find(std::string(name));
    if (it == v->symbols.end()) return std::nullopt;
    return it->second;
  };
  env.shape = [&shapes](std::string_view name) -> std::optional<std::vector<int64_t>> {
    auto it = shapes.find(std::string(name));
    if (it == shapes.end()) return std::nullopt;
    return it->second;
  };
  return EvalExpr(expr, env);
}

namespace task_json {

Status ParseInit(const Checker& c, const json& v, const std::string& path, InitSpec& init) {
  KFORGE_RETURN_IF_ERROR(c.Object(v, path));
  KFORGE_RETURN_IF_ERROR(c.OnlyKeys(v, path, {"dist", "low", "high", "scale", "shift", "factor"}));
  KFORGE_RETURN_IF_ERROR(c.Require(v, path, "dist"));
  KFORGE_ASSIGN_OR_RETURN(std::string dist, c.String(v["dist"], path + ".dist"));
  static const std::pair<std::string_view, InitSpec::Dist> kDists[] = {
      {"randn", InitSpec::Dist::kRandn},     {"rand", InitSpec::Dist::kRand},
      {"uniform", InitSpec::Dist::kUniform}, {"randint", InitSpec::Dist::kRandint},
      {"ones", InitSpec::Dist::kOnes},       {"zeros", InitSpec::Dist::kZeros}};
  auto found =
      std::find_if(std::begin(kDists), std::end(kDists), [&](const auto& d) { return d.first == dist; });
  if (found == std::end(kDists)) return c.Error(path + ".dist", "unknown distribution " + Quote(dist));
  init.dist = found->second;
  bool ranged = init.dist == InitSpec::Dist::kUniform || init.dist == InitSpec::Dist::kRandint;
  if (ranged) {
    KFORGE_RETURN_IF_ERROR(c.Require(v, path, "low"));
    KFORGE_RETURN_IF_ERROR(c.Require(v, path, "high"));
  } else if (v.contains("low") || v.contains("high")) {
    return c.Error(path, "\"low\"/\"high\" apply only to uniform and randint");
  }
  for (auto [key, field] : {std::pair{"low", &init.low}, std::pair{"high", &init.high},
                            std::pair{"scale", &init.scale}, std::pair{"shift", &init.shift}}) {
    if (!v.contains(key)) continue;
    std::string field_path = path + "." + key;
    if (init.dist == InitSpec::Dist::kRandint &&
        (std::string_view(key) == "low" || std::string_view(key) == "high")) {
      KFORGE_ASSIGN_OR_RETURN(int64_t bound, c.Int(v[key], field_path));
      *field = static_cast<double>(bound);
    } else {
      KFORGE_ASSIGN_OR_RETURN(*field, c.Number(v[key], field_path));
    }
    if (!std::isfinite(*field)) return c.Error(field_path, "not finite");
  }
  if (ranged && !(init.low < init.high)) return c.Error(path, "\"low\" must be below \"high\"");
  if (v.contains("factor")) {
    const std::string factor_path = path + ".factor";
    KFORGE_RETURN_IF_ERROR(c.Object(v["factor"], factor_path));
    KFORGE_RETURN_IF_ERROR(c.OnlyKeys(v["factor"], factor_path, {"low", "high"}));
    KFORGE_RETURN_IF_ERROR(c.Require(v["factor"], factor_path, "low"));
    KFORGE_RETURN_IF_ERROR(c.Require(v["factor"], factor_path, "high"));
    InitSpec::Factor factor;
    KFORGE_ASSIGN_OR_RETURN(factor.low, c.Number(v["factor"]["low"], factor_path + ".low"));
    KFORGE_ASSIGN_OR_RETURN(factor.high, c.Number(v["factor"]["high"], factor_path + ".high"));
    if (!std::isfinite(factor.low) || !std::isfinite(factor.high) || !(factor.low < factor.high))
      return c.Error(factor_path, "\"low\" and \"high\" must be finite, \"low\" below \"high\"");
    init.factor = factor;
  }
  return Status::Ok();
}

StatusOr<int64_t> Count(const Checker& c, const json& v, const std::string& path) {
  KFORGE_ASSIGN_OR_RETURN(int64_t n, c.Int(v, path));
  if (n < 0) return c.Error(path, "must be >= 0");
  return n;
}

}  // namespace task_json

}  // namespace kforge::common
