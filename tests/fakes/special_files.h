// Files that are not regular files, for tests of writers that must leave them as they are: a
// character device made in a scratch folder (never the machine's own /dev nodes) and a FIFO with a
// reader.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>

namespace kforge::fakes {

/// Makes a character device at `path` with /dev/null's numbers (1, 3): what is written to it is
/// discarded. False when the process may not (mknod needs CAP_MKNOD): the caller skips.
bool MakeNullDevice(const std::filesystem::path& path);

/// Whether `path` is a character device with /dev/null's numbers.
bool IsNullDevice(const std::filesystem::path& path);

/// Whether `path` is a FIFO.
bool IsFifo(const std::filesystem::path& path);

/// Makes a FIFO at `path` and holds it open for reading, collecting what is written to it.
class FifoReader {
 public:
  explicit FifoReader(const std::filesystem::path& path);
  ~FifoReader();
  FifoReader(const FifoReader&) = delete;
  FifoReader& operator=(const FifoReader&) = delete;

  bool ok() const { return fd_ >= 0; }
  /// Everything written, once every writer is done; stops reading.
  std::string Finish();

 private:
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::string bytes_;
  std::thread thread_;
};

}  // namespace kforge::fakes
