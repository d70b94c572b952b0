// The C++ side of a KernelBench ModelNew: a host function that runs a solution's launch plan on
// PyTorch tensors, and the table of the plan's kernel addresses appended to the CUDA source.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/solution.h"
#include "kforge/common/status.h"
#include "kforge/common/task.h"

namespace kforge::exporter::internal {

struct HostCode {
  std::string cpp;          ///< load_inline's cpp_sources: `std::vector<torch::Tensor> forward(tensors)`
  std::string cuda_suffix;  ///< appended to the solution's source: `kforge_kernel(step)`
  std::vector<std::string> nvcc_flags;  ///< the solution's options, as nvcc spells them
};

/// `forward` takes the task's inputs, then its params, in task order, and returns the outputs.
StatusOr<HostCode> RenderHostCode(const common::Solution& solution, const common::Task& task);

/// A plan expression as C++ over int64_t: symbols become `sym_<name>`, tensors the variables of
/// `tensor_var`, cdiv/min/max/numel/size calls of helpers. InvalidArgument for a name it does not know.
StatusOr<std::string> TranslateExpr(std::string_view expr, const std::vector<std::string>& symbols,
                                    const std::vector<std::pair<std::string, std::string>>& tensor_vars);

/// The namespaces declared at file scope in `source` ("ops", "a::b").
std::vector<std::string> FileScopeNamespaces(std::string_view source);

}  // namespace kforge::exporter::internal
