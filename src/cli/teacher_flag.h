// --teacher: the provider spec parsed once, where the flag is read.
#pragma once

#include <optional>
#include <string>

#include "kforge/common/status.h"
#include "kforge/llm/provider.h"

namespace kforge::cli {

/// Parses --teacher's `text` into `teacher`; InvalidArgument "--teacher: unknown provider ..." else.
Status ParseTeacher(const std::string& text, std::optional<llm::ProviderSpec>& teacher);

}  // namespace kforge::cli
