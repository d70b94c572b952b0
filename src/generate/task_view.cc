// Task views, the tensor table and the reference program as the teacher is shown it.
#include "generate/task_view.h"

#include <filesystem>
#include <sstream>

#include "kforge/common/dtype.h"
#include "kforge/common/files.h"

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

StatusOr<std::string> ReadTaskReference(const common::Task& task, size_t& total_bytes) {
  // What is sent to the teacher is the task's own file, never one a link points to: neither the
  // file nor a folder on its way from the task's folder may be a link.
  std::error_code ec;
  std::filesystem::path step = task.dir;
  for (const std::filesystem::path& part : task.reference.lexically_relative(task.dir)) {
    step /= part;
    if (std::filesystem::is_symlink(step, ec))
      return Status::InvalidArgument(step.string() +
                                     ": a symbolic link; a task's reference must be a file of its folder");
  }
  KFORGE_ASSIGN_OR_RETURN(std::string text, common::ReadFile(task.reference));
  total_bytes = text.size();
  if (total_bytes > kMaxReferenceBytes) {
    const size_t total = text.size();
    const size_t line_end = text.rfind('\n', kMaxReferenceBytes);
    text.resize(line_end == std::string::npos ? kMaxReferenceBytes : line_end + 1);
    text += "# ... the reference is cut here: " + std::to_string(text.size()) + " of its " +
            std::to_string(total) + " bytes are shown\n";
  }
  return text;
}

}  // namespace kforge::generate
