// Whole-file reads, atomic writes and the cache root.
#include "kforge/common/files.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kforge::common {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

std::filesystem::path CacheRoot() {
  if (const std::string root = Env("KFORGE_CACHE_DIR"); !root.empty()) return root;
  if (const std::string xdg = Env("XDG_CACHE_HOME"); !xdg.empty()) return std::filesystem::path(xdg) / "kforge";
  const std::string home = Env("HOME");
  return std::filesystem::path(home.empty() ? "/tmp" : home) / ".cache" / "kforge";
}

StatusOr<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path.string() + ": cannot open");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Status::IoError(path.string() + ": read failed");
  return buffer.str();
}

Status WriteFileAtomic(const std::filesystem::path& path, std::string_view bytes) {
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IoError(tmp.string() + ": cannot create");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return Status::IoError(tmp.string() + ": write failed");
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return Status::IoError(path.string() + ": " + ec.message());
  }
  return Status::Ok();
}

}  // namespace kforge::common
