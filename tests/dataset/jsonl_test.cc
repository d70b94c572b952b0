#include "kforge/dataset/jsonl.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace kforge::dataset {
namespace {

namespace fs = std::filesystem;

class JsonlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge-jsonl-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
  std::string Read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  fs::path dir_;
};

TEST_F(JsonlTest, AppendThenReopenKnowsEveryId) {
  fs::path path = dir_ / "log.jsonl";
  {
    auto log = AppendLog::Open(path);
    ASSERT_TRUE(log.ok()) << log.status().message();
    ASSERT_TRUE((*log)->Append({{"id", "a"}, {"x", 1}}).ok());
    ASSERT_TRUE((*log)->Append({{"id", "b"}}).ok());
    EXPECT_FALSE((*log)->Append({{"id", "a"}}).ok()) << "an id is written once";
    EXPECT_FALSE((*log)->Append({{"x", 1}}).ok());
  }
  auto log = AppendLog::Open(path);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ((*log)->size(), 2u);
  EXPECT_TRUE((*log)->Contains("a"));
  EXPECT_TRUE((*log)->Contains("b"));
  EXPECT_EQ((*log)->torn_lines(), 0);
}

TEST_F(JsonlTest, TornLastLineIsCutAndTheLogGoesOn) {
  fs::path path = dir_ / "log.jsonl";
  Write(path, "{\"id\":\"a\"}\n{\"id\":\"b\",\"x\":[1,2");
  {
    auto log = AppendLog::Open(path);
    ASSERT_TRUE(log.ok()) << log.status().message();
    EXPECT_EQ((*log)->torn_lines(), 1);
    EXPECT_FALSE((*log)->Contains("b"));
    ASSERT_TRUE((*log)->Append({{"id", "b"}}).ok());
  }
  EXPECT_EQ(Read(path), "{\"id\":\"a\"}\n{\"id\":\"b\"}\n");
}

TEST_F(JsonlTest, ACompleteLineThatIsNotARecordIsAnErrorWithItsLine) {
  fs::path path = dir_ / "log.jsonl";
  Write(path, "{\"id\":\"a\"}\nnot json\n");
  auto log = AppendLog::Open(path);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("log.jsonl:2"), std::string::npos) << log.status().message();
  Write(path, "{\"id\":\"a\"}\n[1]\n");
  log = AppendLog::Open(path);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find(":2: a record without"), std::string::npos) << log.status().message();
  EXPECT_EQ(Read(path), "{\"id\":\"a\"}\n[1]\n") << "nothing written is lost";
}

TEST_F(JsonlTest, ReaderNumbersLinesSkipsBlanksAndMarksATornLast) {
  fs::path path = dir_ / "r.jsonl";
  Write(path, "{\"a\":1}\n\n  \nbad\n{\"b\":2}");
  auto reader = JsonlReader::Open(path);
  ASSERT_TRUE(reader.ok());
  auto l1 = (*reader)->Next();
  ASSERT_TRUE(l1 && l1->value.ok());
  EXPECT_EQ(l1->number, 1);
  auto l4 = (*reader)->Next();
  ASSERT_TRUE(l4);
  EXPECT_EQ(l4->number, 4);
  EXPECT_FALSE(l4->value.ok());
  EXPECT_NE(l4->value.status().message().find("r.jsonl:4"), std::string::npos);
  auto l5 = (*reader)->Next();
  ASSERT_TRUE(l5 && l5->value.ok());
  EXPECT_TRUE(l5->torn);
  EXPECT_FALSE((*reader)->Next());
}

TEST_F(JsonlTest, ReaderGivesOffsetsAndSeeksBackToALine) {
  fs::path path = dir_ / "r.jsonl";
  Write(path, "{\"a\":1}\n\n{\"b\":22}\n{\"c\":3}\n");
  auto reader = JsonlReader::Open(path);
  ASSERT_TRUE(reader.ok());
  auto a = (*reader)->Next();
  auto b = (*reader)->Next();
  auto c = (*reader)->Next();
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->offset, 0u);
  EXPECT_EQ(b->offset, 9u) << "after the first line and the blank one";
  EXPECT_EQ(b->number, 3);
  EXPECT_EQ(c->offset, 18u);
  ASSERT_TRUE((*reader)->Seek(b->offset, b->number).ok());
  auto again = (*reader)->Next();
  ASSERT_TRUE(again && again->value.ok());
  EXPECT_EQ(again->number, 3);
  EXPECT_EQ(again->offset, 9u);
  EXPECT_EQ((*again->value)["b"], 22);
  EXPECT_EQ((*reader)->Next()->number, 4);
}

TEST_F(JsonlTest, TwoLogsOnOneFileAppendWholeLinesAtTheEnd) {
  // Two writers on one file (what the run folder's lock prevents) still never splice lines: every
  // write lands at the end (O_APPEND), one write per record.
  fs::path path = dir_ / "log.jsonl";
  auto first = AppendLog::Open(path);
  auto second = AppendLog::Open(path);
  ASSERT_TRUE(first.ok() && second.ok());
  const std::string padding(1000, 'p');
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE((*first)->Append({{"id", "a" + std::to_string(i)}, {"pad", padding}}).ok());
    ASSERT_TRUE((*second)->Append({{"id", "b" + std::to_string(i)}}).ok());
  }
  auto reader = JsonlReader::Open(path);
  ASSERT_TRUE(reader.ok());
  int lines = 0;
  while (auto line = (*reader)->Next()) {
    ASSERT_TRUE(line->value.ok()) << line->value.status().message();
    ++lines;
  }
  EXPECT_EQ(lines, 40);
}

TEST_F(JsonlTest, ALogThatIsALinkIsRefused) {
  fs::path outside = dir_ / "outside.jsonl";
  Write(outside, "");
  fs::create_symlink(outside, dir_ / "log.jsonl");
  auto log = AppendLog::Open(dir_ / "log.jsonl");
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("symbolic link"), std::string::npos) << log.status().message();
  EXPECT_EQ(Read(outside), "");
}

TEST_F(JsonlTest, OpenErrorsNameThePath) {
  auto missing = JsonlReader::Open(dir_ / "nope.jsonl");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope.jsonl"), std::string::npos);
  auto folder = JsonlReader::Open(dir_);
  ASSERT_FALSE(folder.ok());
  auto log = AppendLog::Open(dir_ / "no" / "such" / "log.jsonl");
  ASSERT_FALSE(log.ok());
}

}  // namespace
}  // namespace kforge::dataset
