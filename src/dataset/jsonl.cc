// JSON lines: a crash-safe append-only log.
#include "kforge/dataset/jsonl.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kforge/common/json_fields.h"

namespace kforge::dataset {

using common::IsBlankLine;
using common::JsonLineLimits;
using common::ReadLine;

StatusOr<std::unique_ptr<AppendLog>> AppendLog::Open(const std::filesystem::path& path) {
  // O_APPEND: every write lands at the end, whatever else holds the file; O_NOFOLLOW: a link planted
  // in the folder does not send the records elsewhere.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ELOOP)
    return Status::InvalidArgument(path.string() + ": a symbolic link; the log must be a plain file");
  if (fd < 0) return Status::IoError(path.string() + ": " + std::strerror(errno));
  std::unique_ptr<AppendLog> log(new AppendLog(fd, path));
  // Index what is there (through the same open file); `good_end` is the byte offset after the last
  // complete line.
  int read_fd = ::dup(fd);
  std::FILE* file = read_fd >= 0 ? ::fdopen(read_fd, "rb") : nullptr;
  if (!file) {
    if (read_fd >= 0) ::close(read_fd);
    return Status::IoError(path.string() + ": " + std::strerror(errno));
  }
  std::rewind(file);
  std::string text;
  bool complete = false, too_long = false;
  uint64_t consumed = 0;
  int number = 0;
  off_t good_end = 0;
  Status status = Status::Ok();
  while (ReadLine(file, text, complete, too_long, consumed)) {
    ++number;
    std::string where = path.string() + ":" + std::to_string(number);
    if (too_long) {
      status = Status::InvalidArgument(where + ": line too long; not a kforge log");
      break;
    }
    if (!complete) {
      ++log->torn_lines_;  // a crash while writing: the record was never acknowledged
      break;
    }
    good_end = std::ftell(file);
    if (IsBlankLine(text)) continue;
    StatusOr<nlohmann::json> record = common::ParseJson(text, where, JsonLineLimits());
    if (!record.ok()) {
      status = record.status();
      break;
    }
    if (!record->is_object() || !record->contains("id") || !(*record)["id"].is_string()) {
      status = Status::InvalidArgument(where + ": a record without a string \"id\"");
      break;
    }
    log->ids_.insert((*record)["id"].get<std::string>());
  }
  std::fclose(file);
  if (!status.ok()) return status;
  if (log->torn_lines_ > 0 && ::ftruncate(fd, good_end) != 0)
    return Status::IoError(path.string() + ": cannot cut the torn last line: " + std::strerror(errno));
  if (::lseek(fd, 0, SEEK_END) < 0) return Status::IoError(path.string() + ": " + std::strerror(errno));
  return log;
}

AppendLog::~AppendLog() {
  if (fd_ >= 0) ::close(fd_);
}

bool AppendLog::Contains(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ids_.count(id) > 0;
}

size_t AppendLog::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ids_.size();
}

Status AppendLog::Append(const nlohmann::json& record) {
  if (!record.is_object() || !record.contains("id") || !record["id"].is_string())
    return Status::InvalidArgument("a log record needs a string \"id\"");
  std::string id = record["id"].get<std::string>();
  std::string line = common::JsonText(record) + "\n";
  if (line.size() > kMaxLineBytes)
    return Status::InvalidArgument("record " + id + " is larger than a line may be");
  std::lock_guard<std::mutex> lock(mu_);
  if (ids_.count(id)) return Status::InvalidArgument("record " + id + " is already in " + path_.string());
  // One write() of the whole line, at the end (O_APPEND), so that no other writer can splice into it.
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IoError(path_.string() + ": write failed: " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd_) != 0) return Status::IoError(path_.string() + ": fsync failed: " + std::strerror(errno));
  ids_.insert(std::move(id));
  return Status::Ok();
}

}  // namespace kforge::dataset
