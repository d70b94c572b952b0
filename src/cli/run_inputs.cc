// RUN_DIR arguments, stdin spools and record warnings for export, report and finetune-launch.
#include "cli/run_inputs.h"

#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kforge/common/files.h"
#include "kforge/common/hash.h"

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

StdinSpool::~StdinSpool() {
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

Status StdinSpool::Replace(std::vector<std::string>& arguments) {
  int dashes = 0;
  for (std::string& argument : arguments) {
    if (argument != "-") continue;
    if (++dashes > 1) return Status::InvalidArgument("-: stdin given twice");
    KFORGE_RETURN_IF_ERROR(Replace(argument));
  }
  return Status::Ok();
}

Status StdinSpool::Replace(std::string& argument) {
  namespace fs = std::filesystem;
  if (argument != "-") return Status::Ok();
  if (!file_.empty()) return Status::InvalidArgument("-: stdin given twice");
  std::string bytes;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) bytes.append(buffer, n);
  if (std::ferror(stdin))
    return Status::IoError(std::string("-: cannot read stdin: ") + std::strerror(errno));
  std::error_code ec;
  if (keep_ == Keep::kInCache) {
    fs::path dir = common::CacheRoot() / "stdin";
    fs::create_directories(dir, ec);
    file_ = dir / (common::Sha256Hex(bytes).substr(0, 32) + ".jsonl");
  } else {
    std::string pattern = (fs::temp_directory_path(ec) / "kforge-stdin-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      return Status::IoError("-: cannot make a folder for stdin: " + std::string(std::strerror(errno)));
    dir_ = pattern;
    file_ = dir_ / "stdin.jsonl";
  }
  if (Status written = common::WriteFileAtomic(file_, bytes); !written.ok())
    return Status::IoError("-: saving stdin: " + written.message());
  argument = file_.string();
  return Status::Ok();
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
