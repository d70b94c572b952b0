// Task views and the tensor table.
#include "generate/task_view.h"

#include <sstream>

#include "kforge/common/dtype.h"

namespace kforge::generate {
namespace {

std::string CodeBlock(const std::string& language, const std::string& text) {
  return "```" + language + "\n" + text + (text.empty() || text.back() == '\n' ? "" : "\n") + "```";
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

}  // namespace

StatusOr<std::string> RenderTaskView(const common::Task& task, View view,
                                     const std::string& reference_source) {
  bool nl = false, spec = false;
  switch (view) {
    case View::kCode:
      return "The PyTorch reference program:\n\n" + CodeBlock("python", reference_source);
    case View::kKernelBench:
      // KernelBench's framing: the architecture, to be replaced by custom CUDA kernels for speed.
      return "You are given the following architecture:\n\n" + CodeBlock("python", reference_source) +
             "\n\nReplace the PyTorch operators in the given architecture with custom CUDA kernels to get "
             "speedups. You may replace several operators, fuse them, or change the algorithm.";
    case View::kNl:
      nl = true;
      break;
    case View::kSpec:
      spec = true;
      break;
    case View::kNlSpec:
      nl = spec = true;
      break;
  }
  if (nl && task.description.empty())
    return Status::InvalidArgument("task " + task.id + " has no description for the \"nl\" view");
  if (spec && task.spec.empty())
    return Status::InvalidArgument("task " + task.id + " has no spec for the \"spec\" view");
  std::string out;
  if (nl) out += task.description + "\n";
  if (spec) out += (out.empty() ? "" : "\n") + CodeBlock("", task.spec);
  return out;
}

std::string RenderTensorTable(const common::Task& task) {
  std::ostringstream out;
  if (!task.symbols.empty()) {
    std::vector<std::string> symbols;
    for (const auto& [name, value] : task.symbols) symbols.push_back(name + " = " + std::to_string(value));
    out << "Symbols: " << Join(symbols, ", ") << "\n";
  }
  auto shapes = common::ResolveShapes(task, "default");
  auto row = [&](const char* kind, const common::TensorSpec& spec) {
    out << "- " << kind << " `" << spec.name << "`: " << common::DTypeName(spec.dtype) << "["
        << Join(spec.shape, ", ") << "]";
    if (shapes.ok() && shapes->count(spec.name)) {
      std::vector<std::string> dims;
      for (int64_t d : shapes->at(spec.name)) dims.push_back(std::to_string(d));
      std::string resolved = Join(dims, ", ");
      if (resolved != Join(spec.shape, ", ")) out << " = [" << resolved << "]";
    }
    out << "\n";
  };
  for (const auto& t : task.inputs) row("input", t);
  for (const auto& t : task.params) row("parameter", t);
  for (const auto& t : task.outputs) row("output", t);
  for (const common::Variant& variant : task.variants) {
    if (variant.name == "default") continue;
    std::vector<std::string> symbols;
    for (const auto& [name, value] : variant.symbols) symbols.push_back(name + " = " + std::to_string(value));
    out << "Also checked on variant `" << variant.name << "`: " << Join(symbols, ", ") << "\n";
  }
  for (const auto& [name, value] : task.constants) out << "Constant " << name << " = " << value << "\n";
  out << "Tolerance: atol " << task.tolerance.atol << ", rtol " << task.tolerance.rtol << "\n";
  return out.str();
}

}  // namespace kforge::generate
