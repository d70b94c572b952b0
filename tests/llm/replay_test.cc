// Reading a cassette (replay:FILE) line by line: errors name the file and the line, blank lines count.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "llm/providers.h"

namespace kforge::llm {
namespace {

namespace fs = std::filesystem;

TEST(ReplayTest, CassetteErrorsNameTheFileAndLine) {
  const fs::path dir = fs::temp_directory_path() / ("kforge_replay_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "c.jsonl").string();
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {"\n  \n{not json\n", path + ":3: not JSON (at byte 3)"},
      {"[1]\n", path + ":1: a JSON value that is not an object"},
      {"{\"schema\": \"kforge.cassette/1\", \"key\": \"ab\n",
       path + ":1: cut short: the line ends inside its JSON (a torn write?)"},
      {"{\"schema\": \"kforge.cassette/1\", \"key\": \"\xc3\n",
       path + ":1: cut short: the line ends inside its JSON (a torn write?)"},
      {"{\"schema\": \"kforge.cassette/1\", \"key\": \"\xff\xfe\", \"response\": {}}\n",
       path + ":1: not UTF-8 (byte 41)"},
      {"{\"schema\": \"kforge.cassette/2\"}\n", path + ":1: schema must be kforge.cassette/1"},
      {"\n{\"schema\": \"kforge.cassette/1\", \"key\": \"k\"}", path + ":2: missing response"},
      {"{\"schema\": \"kforge.cassette/1\", \"response\": {}}\n", path + ":1: needs a \"key\" or a \"tag\""},
  };
  for (const auto& c : cases) {
    std::ofstream(path) << c.text;
    auto provider = MakeReplayProvider(path);
    ASSERT_FALSE(provider.ok()) << c.text;
    EXPECT_EQ(provider.status().message(), c.message) << c.text;
  }
  auto missing = MakeReplayProvider((dir / "none.jsonl").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cassette " + (dir / "none.jsonl").string() + ": cannot open");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kforge::llm
