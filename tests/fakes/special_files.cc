// A character device and a FIFO for tests.
#include "fakes/special_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace kforge::fakes {

bool MakeNullDevice(const std::filesystem::path& path) {
  return ::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
}

bool IsNullDevice(const std::filesystem::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

bool IsFifo(const std::filesystem::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

FifoReader::FifoReader(const std::filesystem::path& path) {
  if (::mkfifo(path.c_str(), 0600) != 0) return;
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // open now, so that writers find a reader
  if (fd_ < 0) return;
  thread_ = std::thread([this] {
    char chunk[1 << 16];
    while (true) {
      ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n > 0) {
        bytes_.append(chunk, static_cast<size_t>(n));
        continue;
      }
      if (stop_) return;  // the writers are done and everything they wrote was read
      ::usleep(5000);
    }
  });
}

std::string FifoReader::Finish() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  return bytes_;
}

FifoReader::~FifoReader() {
  Finish();
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace kforge::fakes
