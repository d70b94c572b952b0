// Solutions as KernelBench programs: a `ModelNew` Python file whose forward runs the solution's
// kernels exactly as its launch plan says (outputs and scratch allocated, memsets, every launch with
// its grid, block, shared memory and scalar arguments evaluated from the inputs' shapes), built by
// torch.utils.cpp_extension.load_inline; named and laid out as KernelBench's own runs are.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kforge/common/solution.h"
#include "kforge/common/status.h"
#include "kforge/common/task.h"

namespace kforge::exporter {

/// A KernelBench problem: `level<level>/<name>.py`, whose name starts with its number.
struct KernelBenchProblem {
  int level = 0;
  int number = 0;
  std::string name;  ///< "19_ReLU"
};

/// The problem of a task id such as "kernelbench/level1/19_ReLU" (a `level<N>` segment followed by the
/// problem's name), or nullopt when the id names none.
std::optional<KernelBenchProblem> KernelBenchProblemOf(std::string_view task_id);

/// KernelBench's run layout: "level_1_problem_19_sample_0_kernel.py".
std::string KernelBenchFileName(const KernelBenchProblem& problem, int sample);

/// The ModelNew program of `solution` for `task`. `reference_source` is the task's PyTorch program;
/// when the task has parameters it is included and ModelNew derives from its Model, so that
/// KernelBench's seeded construction gives ModelNew the same weights, found by their module paths.
/// `label` goes into the file's header comment. InvalidArgument when the plan cannot be rendered
/// (a kernel named by its mangled symbol, an expression naming an unknown symbol or tensor, a memset
/// value that is not a repeated byte).
StatusOr<std::string> RenderModelNew(const common::Solution& solution, const common::Task& task,
                                     std::string_view reference_source, std::string_view label);

/// `text` as a Python triple-quoted string literal that evaluates to `text` exactly.
std::string PythonTripleQuoted(std::string_view text);

}  // namespace kforge::exporter
