#include "kforge/common/files.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

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
