// What export and report share on the command line: RUN_DIR arguments to records files, and
// malformed-record warnings on stderr (the first few in full, then a count).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/export/scan.h"

namespace kforge::cli {

/// The records file of every argument (exporter::ResolveRun); the first bad one is the error.
StatusOr<std::vector<std::filesystem::path>> ResolveRuns(const std::vector<std::string>& arguments);

/// Prints warnings as `kforge <command>: <message>`, the first 20 of them, then how many more there were.
class WarningPrinter {
 public:
  explicit WarningPrinter(std::string command) : command_(std::move(command)) {}
  exporter::WarningSink Sink();
  /// Prints the count of warnings not shown.
  void Finish() const;

 private:
  std::string command_;
  int64_t seen_ = 0;
};

}  // namespace kforge::cli
