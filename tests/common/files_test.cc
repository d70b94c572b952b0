#include "kforge/common/files.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "fakes/special_files.h"

namespace kforge::common {
namespace {

namespace fs = std::filesystem;

class FilesTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(testing::TempDir()) / "kforge_files_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(FilesTest, WriteAtomicReplacesWholeAndLeavesNoTemporaryFile) {
  fs::path file = dir_ / "a.bin";
  std::string bytes("x\0y", 3);
  ASSERT_TRUE(WriteFileAtomic(file, bytes).ok());
  ASSERT_TRUE(WriteFileAtomic(file, "second").ok());
  auto back = ReadFile(file);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, "second");
  ASSERT_TRUE(WriteFileAtomic(file, bytes).ok());
  EXPECT_EQ(ReadFile(file).value(), bytes);
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) entries += entry.path() == file ? 0 : 1;
  EXPECT_EQ(entries, 0) << "a temporary file was left behind";
}

TEST_F(FilesTest, WriteAtomicWritesIntoADeviceOrAFifoAndNeverReplacesIt) {
  const fs::path device = dir_ / "null";
  if (!fakes::MakeNullDevice(device)) GTEST_SKIP() << "mknod is not allowed here (it needs CAP_MKNOD)";
  Status written = WriteFileAtomic(device, "discarded");
  EXPECT_TRUE(written.ok()) << written.message();
  EXPECT_TRUE(fakes::IsNullDevice(device)) << "the device was replaced";
  fs::create_symlink(device, dir_ / "link-to-null");
  EXPECT_TRUE(WriteFileAtomic(dir_ / "link-to-null", "x").ok());
  EXPECT_TRUE(fs::is_symlink(dir_ / "link-to-null"));
  EXPECT_TRUE(fakes::IsNullDevice(device));

  const fs::path fifo = dir_ / "fifo";
  {
    fakes::FifoReader reader(fifo);
    ASSERT_TRUE(reader.ok());
    std::string big(300000, 'x');  // more than a pipe holds: the reader drains it meanwhile
    written = WriteFileAtomic(fifo, big);
    EXPECT_TRUE(written.ok()) << written.message();
    EXPECT_EQ(reader.Finish(), big);
  }
  EXPECT_TRUE(fakes::IsFifo(fifo));
  Status no_reader = WriteFileAtomic(fifo, "x");  // nobody reads it now: refused, not waited on
  EXPECT_FALSE(no_reader.ok());
  EXPECT_NE(no_reader.message().find("no reader"), std::string::npos) << no_reader.message();
  EXPECT_TRUE(fakes::IsFifo(fifo));

  int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string socket_path = (dir_ / "sock").string();
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  Status socket_refused = WriteFileAtomic(socket_path, "x");
  ::close(listener);
  EXPECT_NE(socket_refused.message().find("a socket, not a file"), std::string::npos) << socket_refused.message();
  EXPECT_TRUE(fs::is_socket(socket_path));
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) entries += entry.path().filename().string().find(".tmp.") != std::string::npos;
  EXPECT_EQ(entries, 0) << "a temporary file was left behind";
}

TEST_F(FilesTest, SameFileAndIsInsideCompareByNameAndByInode) {
  fs::create_directories(dir_ / "run/sub");
  std::ofstream(dir_ / "run/run.json") << "{}";
  fs::create_directory_symlink(dir_ / "run", dir_ / "alias");
  // By name: a file not created yet, spelled through `..` and a link to its folder.
  EXPECT_TRUE(SameFile(dir_ / "run/new.jsonl", dir_ / "run/sub/../new.jsonl"));
  EXPECT_TRUE(SameFile(dir_ / "alias/new.jsonl", dir_ / "run/new.jsonl"));
  EXPECT_FALSE(SameFile(dir_ / "run/new.jsonl", dir_ / "run/other.jsonl"));
  // By inode: a hard link.
  fs::create_hard_link(dir_ / "run/run.json", dir_ / "elsewhere.json");
  EXPECT_TRUE(SameFile(dir_ / "elsewhere.json", dir_ / "run/run.json"));

  EXPECT_TRUE(IsInside(dir_ / "run/report.html", dir_ / "run"));
  EXPECT_TRUE(IsInside(dir_ / "run", dir_ / "run/"));
  EXPECT_TRUE(IsInside(dir_ / "alias/sub/x", dir_ / "run"));
  EXPECT_TRUE(IsInside(dir_ / "run/sub/../../run/x", dir_ / "run"));
  EXPECT_FALSE(IsInside(dir_ / "runs/x", dir_ / "run")) << "a name that starts the same is not inside";
  EXPECT_FALSE(IsInside(dir_ / "elsewhere.json", dir_ / "run"));
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_ / "run/sub");
  EXPECT_TRUE(IsInside("../x.html", dir_ / "run"));
  EXPECT_TRUE(IsInside("x.html", "."));
  fs::current_path(cwd);
}

TEST_F(FilesTest, ErrorsNameTheFile) {
  auto missing = ReadFile(dir_ / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  Status no_folder = WriteFileAtomic(dir_ / "no/such/folder/x", "y");
  ASSERT_FALSE(no_folder.ok());
  EXPECT_NE(no_folder.message().find("no/such/folder"), std::string::npos);
}

/// Sets an environment variable for the scope's lifetime.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(CacheRootTest, FollowsTheEnvironment) {
  {
    ScopedEnv root("KFORGE_CACHE_DIR", "/tmp/kforge-cache-test");
    EXPECT_EQ(CacheRoot(), fs::path("/tmp/kforge-cache-test"));
  }
  ScopedEnv no_root("KFORGE_CACHE_DIR", nullptr);
  ScopedEnv xdg("XDG_CACHE_HOME", "/tmp/xdg");
  EXPECT_EQ(CacheRoot(), fs::path("/tmp/xdg/kforge"));
}

TEST_F(FilesTest, AFolderLockRefusesASecondHolderAndNamesThePid) {
  fs::path path = dir_ / "run.lock";
  StatusOr<FolderLock> held = FolderLock::Acquire(path);
  ASSERT_TRUE(held.ok()) << held.status().message();
  StatusOr<FolderLock> second = FolderLock::Acquire(path);  // another open file: flock refuses it
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(second.status().message().find("held by pid " + std::to_string(::getpid())), std::string::npos)
      << second.status().message();
  *held = FolderLock();  // released
  EXPECT_TRUE(FolderLock::Acquire(path).ok());
}

TEST_F(FilesTest, WriteAtomicReplacesALinkInsteadOfFollowingIt) {
  fs::path outside = dir_ / "outside.txt";
  ASSERT_TRUE(WriteFileAtomic(outside, "keep").ok());
  fs::create_symlink(outside, dir_ / "out.txt");
  ASSERT_TRUE(WriteFileAtomic(dir_ / "out.txt", "new").ok());
  EXPECT_EQ(ReadFile(outside).value(), "keep");
  EXPECT_FALSE(fs::is_symlink(dir_ / "out.txt"));
  EXPECT_EQ(ReadFile(dir_ / "out.txt").value(), "new");
  EXPECT_EQ(FileIdentity(outside), FileIdentity(outside));
  EXPECT_NE(FileIdentity(outside), FileIdentity(dir_ / "out.txt"));
  EXPECT_FALSE(FileIdentity(dir_ / "missing").has_value());
}

}  // namespace
}  // namespace kforge::common
