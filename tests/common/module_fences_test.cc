// The build's fences, checked on the source tree: modules include each other only along the one-way
// dependencies of docs/architecture.md, and the heavy libraries stay in their module (LibTorch in
// reference, curl in llm, CLI11 in cli).
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kforge {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = KFORGE_SOURCE_DIR;

/// What each module may include besides itself.
const std::map<std::string, std::set<std::string>> kAllowed = {
    {"common", {}},
    {"cuda", {"common"}},
    {"llm", {"common"}},
    {"dataset", {"common"}},
    {"reference", {"common"}},
    {"verify", {"common", "cuda"}},
    {"bench", {"common", "cuda", "verify"}},
    {"worker", {"common", "cuda", "reference", "verify", "bench"}},
    {"generate", {"common", "cuda", "llm", "dataset", "verify", "bench"}},
    {"skill", {"common", "llm", "dataset", "generate"}},
    {"export", {"common", "llm", "dataset", "reference"}},  // of reference, the op calls' text only
    {"finetune", {"common"}},
    {"cli", {"common", "cuda", "llm", "dataset", "verify", "bench", "generate", "skill", "export", "finetune"}},
};

/// System includes only one module may use: prefix -> module.
const std::map<std::string, std::string> kFenced = {
    {"torch/", "reference"}, {"ATen/", "reference"}, {"c10/", "reference"},
    {"curl/", "llm"},        {"CLI/", "cli"},
};

struct Include {
  fs::path file;
  int line;
  std::string module;  ///< of the including file
  std::string target;  ///< what the #include names
  bool system;         ///< <...> rather than "..."
};

std::vector<Include> IncludesOf(const std::string& module) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::vector<Include> found;
  for (const fs::path& dir : {kRoot / "src" / module, kRoot / "include/kforge" / module}) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cc" && ext != ".cu") continue;
      std::ifstream in(entry.path());
      std::string text;
      int number = 0;
      while (std::getline(in, text)) {
        ++number;
        std::smatch m;
        if (std::regex_search(text, m, kInclude))
          found.push_back({entry.path(), number, module, m[2].str(), m[1].str() == "<"});
      }
    }
  }
  return found;
}

/// The module a project include names ("kforge/cuda/x.h" or "cuda/x.h"), or "" for another header.
std::string ModuleOf(const std::string& target) {
  std::string path = target.rfind("kforge/", 0) == 0 ? target.substr(7) : target;
  std::string first = path.substr(0, path.find('/'));
  return path.find('/') != std::string::npos && kAllowed.count(first) ? first : "";
}

TEST(ModuleFencesTest, EveryModuleIsKnown) {
  for (const auto& entry : fs::directory_iterator(kRoot / "src")) {
    if (!entry.is_directory()) continue;
    EXPECT_TRUE(kAllowed.count(entry.path().filename().string()))
        << entry.path() << " is a module this test does not know: add its allowed dependencies";
  }
}

TEST(ModuleFencesTest, IncludesFollowTheDependencies) {
  int checked = 0;
  for (const auto& [module, allowed] : kAllowed) {
    for (const Include& inc : IncludesOf(module)) {
      ++checked;
      if (inc.system) {
        for (const auto& [prefix, owner] : kFenced) {
          if (inc.target.rfind(prefix, 0) == 0 && owner != module)
            ADD_FAILURE() << inc.file.string() << ":" << inc.line << " includes <" << inc.target << ">: only "
                          << owner << "/ may";
        }
        continue;
      }
      std::string used = ModuleOf(inc.target);
      if (!used.empty() && used != module && !allowed.count(used))
        ADD_FAILURE() << inc.file.string() << ":" << inc.line << " includes \"" << inc.target << "\": " << module
                      << "/ may not depend on " << used << "/";
    }
  }
  EXPECT_GT(checked, 100) << "the source tree was not found at " << kRoot;
}

// The GPU worker sits below verify's parent side: of verify it sees only the protocol both sides
// speak, never the service, the client or plan checks.
TEST(ModuleFencesTest, WorkerUsesOnlyTheProtocolOfVerify) {
  for (const Include& inc : IncludesOf("worker")) {
    if (ModuleOf(inc.target) != "verify") continue;
    EXPECT_EQ(inc.target, "kforge/verify/worker_protocol.h") << inc.file.string() << ":" << inc.line;
  }
}

// Exported KernelBench files carry the text of reference's op calls (a header generated without
// LibTorch); export uses nothing else of reference.
TEST(ModuleFencesTest, ExportUsesOnlyTheOpCallsTextOfReference) {
  for (const Include& inc : IncludesOf("export")) {
    if (ModuleOf(inc.target) != "reference") continue;
    EXPECT_EQ(inc.target, "kforge/reference/library_op_calls_text.h") << inc.file.string() << ":" << inc.line;
  }
}

TEST(ModuleFencesTest, BenchPublicHeadersDoNotPullInTheCudaRuntime) {
  for (const Include& inc : IncludesOf("bench")) {
    if (inc.file.string().find("/include/kforge/bench/") == std::string::npos) continue;
    EXPECT_FALSE(inc.system && inc.target.rfind("cuda", 0) == 0)
        << inc.file.string() << ":" << inc.line << " includes <" << inc.target << ">";
  }
}

TEST(ModuleFencesTest, TheCheckSeesAViolation) {
  // The reverse of an allowed edge must be refused, so the table cannot silently allow everything.
  for (const auto& [module, allowed] : kAllowed)
    for (const std::string& used : allowed) EXPECT_FALSE(kAllowed.at(used).count(module)) << module << " <-> " << used;
  EXPECT_EQ(ModuleOf("kforge/llm/client.h"), "llm");
  EXPECT_EQ(ModuleOf("worker/check.h"), "worker");
  EXPECT_EQ(ModuleOf("nlohmann/json.hpp"), "");
}

}  // namespace
}  // namespace kforge
