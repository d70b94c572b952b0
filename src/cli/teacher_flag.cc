// --teacher (cli/teacher_flag.h).
#include "cli/teacher_flag.h"

namespace kforge::cli {

Status ParseTeacher(const std::string& text, std::optional<llm::ProviderSpec>& teacher) {
  StatusOr<llm::ProviderSpec> spec = llm::ParseProviderSpec(text);
  if (!spec.ok()) return spec.status().WithContext("--teacher");
  teacher = std::move(*spec);
  return Status::Ok();
}

}  // namespace kforge::cli
