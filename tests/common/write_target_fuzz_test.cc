// Fuzzes where the writers of --junit and --html write (common::WriteFileAtomic): any path inside a
// scratch folder that holds a character device, a FIFO nobody reads, a socket, a folder and links to
// each, is written or refused in one line (the path's own lines aside), at once (never waiting on the FIFO), and every one of
// those files is still what it was afterwards, and IsInside says every such path is inside it.
// Seeds: the special files' names and paths through links and `..`.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fakes/fuzz.h"
#include "fakes/special_files.h"
#include "kforge/common/files.h"

namespace kforge::common {
namespace {

namespace fs = std::filesystem;

/// The scratch folder: root/a/b is where paths start, so that `..` twice stays inside root.
class Scratch {
 public:
  Scratch() {
    std::string pattern = (fs::path(testing::TempDir()) / "kforge_write_fuzz_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) return;
    root_ = pattern;
    fs::create_directories(root_ / "a/b/dir");
    has_device_ = fakes::MakeNullDevice(root_ / "a/b/null");
    ::mkfifo((root_ / "a/b/fifo").c_str(), 0600);
    std::ofstream(root_ / "a/b/file") << "kept";
    listener_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, (root_ / "a/b/sock").c_str(), sizeof(addr.sun_path) - 1);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    for (const char* name : {"null", "fifo", "sock", "dir", "file"})
      fs::create_symlink(root_ / "a/b" / name, root_ / "a/b" / (std::string("to-") + name));
    fs::create_directory_symlink(root_ / "a/b/dir", root_ / "a/b/dirlink");
  }
  ~Scratch() {
    if (listener_ >= 0) ::close(listener_);
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  const fs::path& root() const { return root_; }

  /// Why a special file is not what it was, or "".
  std::string Changed() const {
    auto kind = [](const fs::path& p) {
      struct stat st {};
      return ::lstat(p.c_str(), &st) == 0 ? st.st_mode & S_IFMT : 0;
    };
    const fs::path b = root_ / "a/b";
    if (has_device_ && !fakes::IsNullDevice(b / "null")) return "the device changed";
    if (kind(b / "fifo") != S_IFIFO) return "the FIFO changed";
    if (kind(b / "sock") != S_IFSOCK) return "the socket changed";
    if (kind(b / "dir") != S_IFDIR) return "the folder changed";
    if (kind(b / "dirlink") != S_IFLNK) return "the link to the folder changed";
    for (const char* name : {"to-null", "to-fifo", "to-sock", "to-dir"})
      if (kind(b / name) != S_IFLNK) return std::string("the link ") + name + " changed";
    return "";
  }

 private:
  fs::path root_;
  bool has_device_ = false;
  int listener_ = -1;
};

TEST(WriteTargetFuzzTest, SpecialFilesStayWhatTheyWereWhateverThePath) {
  Scratch scratch;
  ASSERT_FALSE(scratch.root().empty());
  const fs::path start = scratch.root() / "a/b";
  fakes::FuzzTarget target;
  target.name = "write_targets";
  target.seeds = {"null", "fifo", "sock", "dir", "file", "to-null", "to-fifo", "to-sock", "to-dir", "to-file",
                  "dirlink/x", "../b/null", "./fifo", "dir/", "dirlink", "../../a/b/to-fifo", "new.xml"};
  target.dictionary = {"/", "..", "../", "./", "null", "fifo", "sock", "dir", "file", "to-", "dirlink", "x"};
  target.max_bytes = 64;
  target.property = [&](const std::string& input) -> fakes::FuzzOutcome {
    // Paths of names, `.` and `..` (at most twice, so they stay in the scratch folder).
    if (input.empty() || input[0] == '/' || input.find('\0') != std::string::npos) return {"", "skipped"};
    size_t ups = 0;
    for (size_t at = input.find(".."); at != std::string::npos; at = input.find("..", at + 2)) ++ups;
    if (ups > 2) return {"", "skipped"};
    const fs::path path = start / input;
    if (!IsInside(path, scratch.root())) return {"IsInside says a path in the folder is outside it", ""};
    Status written = WriteFileAtomic(path, "<report/>");
    if (!written.ok() && std::count(written.message().begin(), written.message().end(), '\n') >
                             std::count(input.begin(), input.end(), '\n'))  // the path is named as given
      return {"an error of several lines", ""};
    if (std::string changed = scratch.Changed(); !changed.empty()) return {changed, ""};
    std::error_code ec;
    // New regular files are removed so that the next input meets the same folder.
    struct stat st {};
    if (written.ok() && ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && path.filename() != "file")
      fs::remove(path, ec);
    return {"", written.ok() ? "written" : fakes::MessageLabel(written.message().substr(written.message().rfind(':') + 1))};
  };
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(), fakes::FuzzSeed());
  std::printf("fuzz write_targets: %s\n", report.Summary().c_str());
  RecordProperty("executions", std::to_string(report.executions));
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
}

}  // namespace
}  // namespace kforge::common
