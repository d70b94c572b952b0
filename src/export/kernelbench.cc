// KernelBench ModelNew files: the Python around the host code.
#include "export/kernelbench.h"

#include <cctype>
#include <regex>

#include "export/host_code.h"
#include "kforge/common/hash.h"

namespace kforge::exporter {
namespace {

std::vector<std::string> Segments(std::string_view id) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= id.size()) {
    size_t slash = id.find('/', start);
    if (slash == std::string_view::npos) slash = id.size();
    parts.emplace_back(id.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

/// A one-line Python string literal.
std::string PythonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out + "\"";
}

}  // namespace

std::optional<KernelBenchProblem> KernelBenchProblemOf(std::string_view task_id) {
  static const std::regex kLevel("level(\\d{1,3})");
  static const std::regex kProblem("(\\d{1,6})_.*");
  std::vector<std::string> parts = Segments(task_id);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    std::smatch level, problem;
    if (!std::regex_match(parts[i], level, kLevel) || !std::regex_match(parts[i + 1], problem, kProblem))
      continue;
    return KernelBenchProblem{std::stoi(level[1]), std::stoi(problem[1]), parts[i + 1]};
  }
  return std::nullopt;
}

std::string KernelBenchFileName(const KernelBenchProblem& problem, int sample) {
  return "level_" + std::to_string(problem.level) + "_problem_" + std::to_string(problem.number) +
         "_sample_" + std::to_string(sample) + "_kernel.py";
}

std::string PythonTripleQuoted(std::string_view text) {
  std::string out = "\"\"\"";
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\0':
        out += "\\x00";
        break;
      default:
        out += c;
    }
  }
  return out + "\"\"\"";
}

StatusOr<std::string> RenderModelNew(const common::Solution& solution, const common::Task& task,
                                     std::string_view reference_source, std::string_view label) {
  KFORGE_ASSIGN_OR_RETURN(internal::HostCode host, internal::RenderHostCode(solution, task));
  std::string cuda = solution.source + host.cuda_suffix;
  std::string flags;
  for (const std::string& flag : host.nvcc_flags) flags += (flags.empty() ? "" : ", ") + PythonString(flag);
  std::string name = "kforge_" + common::Sha256Hex(cuda + "\n" + host.cpp + "\n" + flags).substr(0, 16);
  bool derive = !task.params.empty();

  std::string py = "# " + std::string(label) + "\n";
  py += "# KernelBench ModelNew exported by kforge " KFORGE_VERSION " for " + task.id +
        ". The CUDA source is the solution's,\n"
        "# unchanged; the C++ host code runs its launch plan: outputs and scratch, memsets, and every "
        "launch.\n";
  py += "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n\n";
  if (derive) {
    py +=
        "# The task's reference program (KernelBench's problem file): ModelNew derives from its Model, so\n"
        "# KernelBench's seeded construction gives both the same parameters.\n";
    py += std::string(reference_source);
    if (!reference_source.empty() && reference_source.back() != '\n') py += "\n";
    py += "# End of the reference program.\n\n";
  }
  py += "CUDA_SOURCE = " + PythonTripleQuoted(cuda) + "\n\n";
  py += "CPP_SOURCE = " + PythonTripleQuoted(host.cpp) + "\n\n";
  py += "kforge_ext = load_inline(\n    name=" + PythonString(name) +
        ",\n    cpp_sources=[CPP_SOURCE],\n    cuda_sources=[CUDA_SOURCE],\n    functions=[\"forward\"],\n"
        "    extra_cuda_cflags=[" +
        flags + "],\n    verbose=False,\n)\n\n";
  auto list = [](const std::vector<common::TensorSpec>& specs, bool names) {
    std::string out;
    for (const common::TensorSpec& spec : specs)
      out += (out.empty() ? "" : ", ") +
             (names ? PythonString(spec.name) : "torch." + std::string(common::DTypeName(spec.dtype)));
    return "[" + out + "]";
  };
  py +=
      "# The task's dtypes: KernelBench casts every input to its precision (float32), the kernels take them\n"
      "# as the task declares them.\n";
  py += "INPUT_DTYPES = " + list(task.inputs, false) + "\n";
  py += "# The task's parameters and buffers by module path, in the order the host code takes them.\n";
  py += "PARAMS = " + list(task.params, true) + "\n";
  py += "PARAM_DTYPES = " + list(task.params, false) + "\n\n\n";
  py +=
      "def module_tensor(module, path):\n"
      "    for part in path.split(\".\"):\n"
      "        module = getattr(module, part)\n"
      "    return module\n\n\n";
  if (derive) {
    py += "class ModelNew(Model):\n";
    py += "    \"\"\"" + task.id + ": Model's parameters, the solution's kernels.\"\"\"\n\n";
  } else {
    py += "class ModelNew(nn.Module):\n";
    py += "    \"\"\"" + task.id + ": the solution's kernels.\"\"\"\n\n";
    py += "    def __init__(self, *init_inputs):\n        super().__init__()\n\n";
  }
  py +=
      "    def forward(self, *args):\n"
      "        inputs = [a for a in args if isinstance(a, torch.Tensor)]\n"
      "        device = inputs[0].device if inputs else torch.device(\"cuda\")\n"
      "        inputs = [t.to(dtype=d) for t, d in zip(inputs, INPUT_DTYPES)] + inputs[len(INPUT_DTYPES):]\n"
      "        params = [module_tensor(self, p).to(device=device, dtype=d) for p, d in zip(PARAMS, "
      "PARAM_DTYPES)]\n"
      "        outputs = kforge_ext.forward([t.contiguous() for t in inputs + params])\n"
      "        return outputs[0] if len(outputs) == 1 else tuple(outputs)\n";
  return py;
}

}  // namespace kforge::exporter
