// docs/architecture.md's "How to add ..." recipes name the files a change touches: each must exist.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = KFORGE_SOURCE_DIR;

/// The text of the section of `markdown` that starts with the heading `heading`.
std::string Section(const std::string& markdown, const std::string& heading) {
  size_t start = markdown.find("\n" + heading + "\n");
  if (start == std::string::npos) return "";
  size_t end = markdown.find("\n## ", start + heading.size() + 2);
  return markdown.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(DocsRecipesTest, EveryFileARecipeNamesExists) {
  std::ifstream in(kRoot / "docs/architecture.md");
  ASSERT_TRUE(in) << "docs/architecture.md not found under " << kRoot;
  std::stringstream text;
  text << in.rdbuf();
  const std::string recipes = Section(text.str(), "## How to add ...");
  ASSERT_FALSE(recipes.empty()) << "no \"How to add\" section";
  // A path of the tree: it starts with a top-level folder and ends with a letter, digit or '/'.
  const std::regex path(
      R"(\b(?:src|include|tests|docs|scripts|cmake|prompts|python|benchmarks)/[A-Za-z0-9_./-]*[A-Za-z0-9_/])");
  int named = 0;
  for (auto it = std::sregex_iterator(recipes.begin(), recipes.end(), path); it != std::sregex_iterator();
       ++it) {
    ++named;
    EXPECT_TRUE(fs::exists(kRoot / it->str())) << it->str() << " is named by a recipe but does not exist";
  }
  EXPECT_GT(named, 20) << "the recipes name files";
}

}  // namespace
