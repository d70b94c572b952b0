// What the teacher sees of a task: the view (the reference program, its description, its spec, or
// KernelBench's own framing of the program) and the table of tensors the solution must use.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "kforge/common/status.h"
#include "kforge/common/task.h"
#include "kforge/generate/generate.h"

namespace kforge::generate {

/// The task under `view`; InvalidArgument when the task lacks what the view needs (a description
/// for "nl", a spec for "spec").
StatusOr<std::string> RenderTaskView(const common::Task& task, View view,
                                     const std::string& reference_source);

/// The most of a task's reference program the teacher is sent; a longer one is cut with a note.
inline constexpr size_t kMaxReferenceBytes = size_t{256} << 10;

/// The task's reference program as the teacher is shown it: its own file (a symbolic link on the way
/// is refused), cut at a line after kMaxReferenceBytes with a note saying so. `total_bytes` gets the file's size.
StatusOr<std::string> ReadTaskReference(const common::Task& task, size_t& total_bytes);

/// Symbols with their values, then one line per input, parameter and output: name, dtype, shape
/// as written and as resolved for the default variant, plus the other variants' symbols.
std::string RenderTensorTable(const common::Task& task);

}  // namespace kforge::generate
