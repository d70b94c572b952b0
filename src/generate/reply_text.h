// The solution of a text-protocol reply, read as models write it: fences at line starts (indented
// too, as inside a list), reasoning in <think> sections skipped, the usual language tags (cuda, cu,
// c, c++, cpp, `cuda title=...`), an unlabelled block that holds a plan or a kernel, JSON with
// comments and trailing commas, a scalar grid or block, numbers as kernel arguments (typed by the
// kernel's own parameter list). What is accepted becomes a normal Solution, so the record holds
// exactly what was judged.
#pragma once

#include <string>
#include <string_view>

#include "kforge/common/solution.h"
#include "kforge/common/status.h"

namespace kforge::generate {

/// The last kernel block and the last plan block of `text`. Errors are one line, for the teacher.
StatusOr<common::Solution> ParseReplyText(std::string_view text);

/// `text` without its <think>...</think> sections (an unclosed one runs to the end).
std::string WithoutThinking(std::string_view text);

/// JSON text with // and /* */ comments and trailing commas removed (strings left alone).
std::string RelaxedJson(std::string_view text);

}  // namespace kforge::generate
