// Parquet files from JSON lines rows, written by an external program (pyarrow in kforge's Python):
// kforge's own build has no Parquet library.
#include <unistd.h>

#include <cerrno>
#include <string>

#include "export/sinks.h"
#include "kforge/common/subprocess.h"

namespace kforge::exporter::internal {
namespace {

/// Everything the child writes on `fd` until it closes it (at most 64 KiB kept: the end).
std::string Drain(int fd) {
  std::string text;
  char buffer[4096];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > (64u << 10)) text.erase(0, text.size() - (64u << 10));
  }
  return text;
}

std::string LastLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  size_t start = text.rfind('\n');
  return start == std::string::npos ? text : text.substr(start + 1);
}

}  // namespace

Status WriteParquet(const std::vector<std::string>& writer, const nlohmann::json& features,
                    const std::filesystem::path& rows, const std::filesystem::path& out) {
  if (writer.empty()) return Status::InvalidArgument("Parquet output needs a writer program");
  std::vector<std::string> argv = writer;
  for (std::string arg : {std::string("--features"), features.dump(), std::string("--in"), rows.string(),
                          std::string("--out"), out.string()})
    argv.push_back(std::move(arg));
  common::SpawnOptions options;
  options.stdin_mode = common::SpawnOptions::Stream::kNull;
  options.stdout_mode = common::SpawnOptions::Stream::kNull;
  options.stderr_mode = common::SpawnOptions::Stream::kPipe;
  options.search_path = writer[0].find('/') == std::string::npos;
  options.die_with_parent = true;
  KFORGE_ASSIGN_OR_RETURN(common::Subprocess child, common::Subprocess::Spawn(argv, options));
  std::string err = Drain(child.stderr_fd());
  int status = child.Wait();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  std::string why = LastLine(err);
  return Status::Unavailable(out.string() + ": the Parquet writer (" + writer[0] + ") failed, " +
                             common::DescribeExit(status) + (why.empty() ? "" : ": " + why));
}

}  // namespace kforge::exporter::internal
