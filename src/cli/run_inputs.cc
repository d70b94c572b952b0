// RUN_DIR arguments and record warnings for export and report.
#include "cli/run_inputs.h"

#include <cstdio>

namespace kforge::cli {

constexpr int64_t kWarningsShown = 20;

StatusOr<std::vector<std::filesystem::path>> ResolveRuns(const std::vector<std::string>& arguments) {
  std::vector<std::filesystem::path> files;
  for (const std::string& argument : arguments) {
    KFORGE_ASSIGN_OR_RETURN(std::filesystem::path file, exporter::ResolveRun(argument));
    files.push_back(std::move(file));
  }
  return files;
}

exporter::WarningSink WarningPrinter::Sink() {
  return [this](const std::string& message) {
    if (++seen_ <= kWarningsShown)
      std::fprintf(stderr, "kforge %s: skipped %s\n", command_.c_str(), message.c_str());
  };
}

void WarningPrinter::Finish() const {
  if (seen_ > kWarningsShown)
    std::fprintf(stderr, "kforge %s: ... and %lld more records skipped\n", command_.c_str(),
                 static_cast<long long>(seen_ - kWarningsShown));
}

}  // namespace kforge::cli
