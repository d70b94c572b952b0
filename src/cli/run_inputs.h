// What export, report and finetune-launch share on the command line: RUN_DIR arguments to records
// files, "-" (JSON lines on stdin) saved to a file they can read more than once, and malformed-record
// warnings on stderr (the first few in full, then a count).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/export/scan.h"

namespace kforge::cli {

/// The records file of every argument (exporter::ResolveRun); the first bad one is the error.
StatusOr<std::vector<std::filesystem::path>> ResolveRuns(const std::vector<std::string>& arguments);

/// Standard input saved to a file, for "-" arguments: commands that read records make more than one
/// pass over them, which a pipe cannot give. Temporary (removed when the spool is destroyed), or kept
/// under the cache root by content (finetune-launch: a launched trainer reads it later).
class StdinSpool {
 public:
  enum class Keep { kTemporary, kInCache };
  explicit StdinSpool(Keep keep = Keep::kTemporary) : keep_(keep) {}
  ~StdinSpool();
  StdinSpool(const StdinSpool&) = delete;
  StdinSpool& operator=(const StdinSpool&) = delete;

  /// Replaces each "-" of `arguments` with the saved copy of stdin (read once, at the first "-").
  /// InvalidArgument when "-" is given twice, IoError naming stdin when it cannot be read or saved.
  Status Replace(std::vector<std::string>& arguments);
  Status Replace(std::string& argument);

 private:
  Keep keep_;
  std::filesystem::path dir_;   ///< temporary folder, removed on destruction
  std::filesystem::path file_;  ///< the copy; empty until read
};

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
