// task.json's parts measured at import: `conditioning`, `behaviour` and `domains`.
#include <cmath>
#include <limits>

#include "common/task_checker.h"

namespace kforge::common {
namespace task_json {
namespace {

// A relative L2 error: a number >= 0, "inf", or null (no output held to the bound).
Status ParseRelL2(const Checker& c, const json& v, const std::string& path, std::optional<double>& out) {
  if (v.is_null()) return Status::Ok();
  if (v == "inf") {
    out = std::numeric_limits<double>::infinity();
    return Status::Ok();
  }
  KFORGE_ASSIGN_OR_RETURN(double x, c.Number(v, path));
  if (!(x >= 0)) return c.Error(path, "must be a number >= 0, \"inf\" or null");
  out = x;
  return Status::Ok();
}

StatusOr<bool> Bool(const Checker& c, const json& v, const std::string& path) {
  if (!v.is_boolean()) return c.Error(path, "expected true or false");
  return v.get<bool>();
}

Status CheckOutputName(const Checker& c, const Task& task, const std::string& name, const std::string& path) {
  for (const TensorSpec& out : task.outputs)
    if (out.name == name) return Status::Ok();
  return c.Error(path, "not an output of the task");
}

Status ParseVariantName(const Checker& c, const json& v, const Task& task, const std::string& path,
                        std::string& out) {
  if (!v.contains("variant")) return Status::Ok();
  KFORGE_ASSIGN_OR_RETURN(out, c.String(v["variant"], path + ".variant"));
  if (!task.FindVariant(out)) return c.Error(path + ".variant", "no such variant " + Quote(out));
  return Status::Ok();
}

Status ParseConditioning(const Checker& c, const json& v, const Task& task, Conditioning& out) {
  const std::string path = "conditioning";
  KFORGE_RETURN_IF_ERROR(c.Object(v, path));
  const std::initializer_list<std::string_view> required = {"float64_rel_l2", "float64_mismatches", "numel",
                                                            "rel_l2_bound", "ill_conditioned"};
  KFORGE_RETURN_IF_ERROR(c.OnlyKeys(v, path,
                                    {"float64_rel_l2", "float64_mismatches", "numel", "rel_l2_bound",
                                     "ill_conditioned", "variant", "outputs"}));
  for (std::string_view key : required) KFORGE_RETURN_IF_ERROR(c.Require(v, path, key));
  KFORGE_RETURN_IF_ERROR(ParseRelL2(c, v["float64_rel_l2"], path + ".float64_rel_l2", out.float64_rel_l2));
  KFORGE_ASSIGN_OR_RETURN(out.float64_mismatches,
                          Count(c, v["float64_mismatches"], path + ".float64_mismatches"));
  KFORGE_ASSIGN_OR_RETURN(out.numel, Count(c, v["numel"], path + ".numel"));
  if (out.float64_mismatches > out.numel) return c.Error(path + ".float64_mismatches", "more than numel");
  KFORGE_ASSIGN_OR_RETURN(out.rel_l2_bound, c.Number(v["rel_l2_bound"], path + ".rel_l2_bound"));
  if (!(out.rel_l2_bound > 0) || !std::isfinite(out.rel_l2_bound))
    return c.Error(path + ".rel_l2_bound", "must be a finite number > 0");
  KFORGE_ASSIGN_OR_RETURN(out.ill_conditioned, Bool(c, v["ill_conditioned"], path + ".ill_conditioned"));
  KFORGE_RETURN_IF_ERROR(ParseVariantName(c, v, task, path, out.variant));
  if (!v.contains("outputs")) return Status::Ok();
  const json& outputs = v["outputs"];
  KFORGE_RETURN_IF_ERROR(c.Object(outputs, path + ".outputs"));
  for (auto it = outputs.begin(); it != outputs.end(); ++it) {
    std::string out_path = path + ".outputs." + KeyText(it.key());
    KFORGE_RETURN_IF_ERROR(CheckOutputName(c, task, it.key(), out_path));
    KFORGE_RETURN_IF_ERROR(c.Object(it.value(), out_path));
    KFORGE_RETURN_IF_ERROR(c.OnlyKeys(it.value(), out_path, {"float64_rel_l2", "noise"}));
    KFORGE_RETURN_IF_ERROR(c.Require(it.value(), out_path, "noise"));
    OutputConditioning& o = out.outputs[it.key()];
    if (it.value().contains("float64_rel_l2"))
      KFORGE_RETURN_IF_ERROR(
          ParseRelL2(c, it.value()["float64_rel_l2"], out_path + ".float64_rel_l2", o.float64_rel_l2));
    KFORGE_ASSIGN_OR_RETURN(o.noise, Bool(c, it.value()["noise"], out_path + ".noise"));
  }
  return Status::Ok();
}

Status ParseBehaviour(const Checker& c, const json& v, const Task& task, Behaviour& out) {
  const std::string path = "behaviour";
  KFORGE_RETURN_IF_ERROR(c.Object(v, path));
  const std::initializer_list<std::string_view> fields = {"variant", "outputs", "rerun_mismatches",
                                                          "degenerate", "nondeterministic"};
  KFORGE_RETURN_IF_ERROR(c.OnlyKeys(v, path, fields));
  for (std::string_view key : fields) KFORGE_RETURN_IF_ERROR(c.Require(v, path, key));
  KFORGE_RETURN_IF_ERROR(ParseVariantName(c, v, task, path, out.variant));
  KFORGE_RETURN_IF_ERROR(c.Object(v["outputs"], path + ".outputs"));
  for (auto it = v["outputs"].begin(); it != v["outputs"].end(); ++it) {
    std::string out_path = path + ".outputs." + KeyText(it.key());
    KFORGE_RETURN_IF_ERROR(CheckOutputName(c, task, it.key(), out_path));
    KFORGE_ASSIGN_OR_RETURN(std::string kind, c.String(it.value(), out_path));
    std::optional<OutputDependence> parsed;
    for (OutputDependence d : {OutputDependence::kVaries, OutputDependence::kConstant, OutputDependence::kZero})
      if (OutputDependenceName(d) == kind) parsed = d;
    if (!parsed) return c.Error(out_path, "expected \"varies\", \"constant\" or \"zero\", got " + Quote(kind));
    out.outputs[it.key()] = *parsed;
  }
  KFORGE_ASSIGN_OR_RETURN(out.rerun_mismatches, Count(c, v["rerun_mismatches"], path + ".rerun_mismatches"));
  KFORGE_ASSIGN_OR_RETURN(out.degenerate, Bool(c, v["degenerate"], path + ".degenerate"));
  KFORGE_ASSIGN_OR_RETURN(out.nondeterministic, Bool(c, v["nondeterministic"], path + ".nondeterministic"));
  return Status::Ok();
}

Status ParseDomains(const Checker& c, const json& v, const Task& task, std::vector<InputDomain>& out) {
  KFORGE_RETURN_IF_ERROR(c.Array(v, "domains"));
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string path = "domains[" + std::to_string(i) + "]";
    const json& d = v[i];
    KFORGE_RETURN_IF_ERROR(c.Object(d, path));
    KFORGE_RETURN_IF_ERROR(c.OnlyKeys(d, path, {"name", "inputs", "float64_rel_l2", "float64_mismatches"}));
    KFORGE_RETURN_IF_ERROR(c.Require(d, path, "name"));
    KFORGE_RETURN_IF_ERROR(c.Require(d, path, "inputs"));
    InputDomain domain;
    KFORGE_ASSIGN_OR_RETURN(domain.name, c.String(d["name"], path + ".name"));
    KFORGE_RETURN_IF_ERROR(c.Object(d["inputs"], path + ".inputs"));
    if (d["inputs"].empty()) return c.Error(path + ".inputs", "names no input");
    for (auto it = d["inputs"].begin(); it != d["inputs"].end(); ++it) {
      std::string in_path = path + ".inputs." + KeyText(it.key());
      auto spec = std::find_if(task.inputs.begin(), task.inputs.end(),
                               [&](const TensorSpec& s) { return s.name == it.key(); });
      if (spec == task.inputs.end()) return c.Error(in_path, "not an input of the task");
      InitSpec init;
      KFORGE_RETURN_IF_ERROR(ParseInit(c, it.value(), in_path, init));
      if (!IsFloating(spec->dtype) && init.dist != InitSpec::Dist::kRandint)
        return c.Error(in_path, "a domain draws floating inputs only");
      domain.inputs[it.key()] = init;
    }
    out.push_back(std::move(domain));
  }
  return Status::Ok();
}

}  // namespace

Status ParseMeasures(const Checker& c, const json& root, Task& task) {
  if (root.contains("conditioning")) {
    task.conditioning.emplace();
    KFORGE_RETURN_IF_ERROR(ParseConditioning(c, root["conditioning"], task, *task.conditioning));
  }
  if (root.contains("behaviour")) {
    task.behaviour.emplace();
    KFORGE_RETURN_IF_ERROR(ParseBehaviour(c, root["behaviour"], task, *task.behaviour));
  }
  if (root.contains("domains")) KFORGE_RETURN_IF_ERROR(ParseDomains(c, root["domains"], task, task.domains));
  return Status::Ok();
}

}  // namespace task_json

std::string_view OutputDependenceName(OutputDependence dependence) {
  switch (dependence) {
    case OutputDependence::kVaries:
      return "varies";
    case OutputDependence::kConstant:
      return "constant";
    case OutputDependence::kZero:
      return "zero";
  }
  return "varies";
}

bool Task::NoiseOutput(std::string_view name) const {
  if (!conditioning) return false;
  auto it = conditioning->outputs.find(std::string(name));
  return it != conditioning->outputs.end() && it->second.noise;
}

Judgeability Task::WhyUnjudgeable() const {
  if (behaviour && behaviour->degenerate) return Judgeability::kDegenerate;
  if (behaviour && behaviour->nondeterministic) return Judgeability::kNondeterministic;
  if (conditioning && conditioning->ill_conditioned) return Judgeability::kIllConditioned;
  return Judgeability::kJudgeable;
}

bool Task::Unjudgeable() const { return WhyUnjudgeable() != Judgeability::kJudgeable; }

}  // namespace kforge::common
