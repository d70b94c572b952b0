// Plan environments from task specs.
#include "kforge/cuda/plan_env.h"

#include <cmath>

namespace kforge::cuda {

StatusOr<PlanEnv> PlanEnvFor(const common::Task& task, const common::Variant& variant) {
  KFORGE_ASSIGN_OR_RETURN(auto shapes, common::ResolveShapes(task, variant.name));
  PlanEnv env;
  env.symbols = variant.symbols;
  for (const auto& [name, value] : task.constants) {
    // Integral constants in int64's range (2^63 itself is not: the cast would be undefined).
    if (value == std::floor(value) && value >= -9223372036854775808.0 && value < 9223372036854775808.0)
      env.symbols[name] = static_cast<int64_t>(value);
  }
  auto add = [&](const std::vector<common::TensorSpec>& specs, bool writable) {
    for (const common::TensorSpec& spec : specs)
      env.tensors[spec.name] = {spec.dtype, shapes.at(spec.name), writable};
  };
  add(task.inputs, false);
  add(task.params, false);
  add(task.outputs, true);
  return env;
}

}  // namespace kforge::cuda
