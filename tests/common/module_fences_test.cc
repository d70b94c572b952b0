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
    {"export", {"common", "dataset", "reference"}},  // of reference, the op calls' text only
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

// A module names its own private headers as "M/x.h" and another module's headers only as "kforge/D/x.h";
// a public header names only public headers, since other modules compile it.
TEST(ModuleFencesTest, PrivateHeadersStayInTheirModule) {
  for (const auto& [module, allowed] : kAllowed) {
    for (const Include& inc : IncludesOf(module)) {
      if (inc.system) continue;
      std::string used = ModuleOf(inc.target);
      if (used.empty() || inc.target.rfind("kforge/", 0) == 0) continue;
      bool in_public = inc.file.string().find("/include/kforge/") != std::string::npos;
      if (used != module || in_public)
        ADD_FAILURE() << inc.file.string() << ":" << inc.line << " includes \"" << inc.target
                      << "\", a private header of " << used << "/";
    }
  }
}

/// The public headers of include/kforge/ and the public headers each includes: ("kforge/M/x.h" -> ...).
std::map<std::string, std::vector<std::string>> PublicHeaders() {
  std::map<std::string, std::vector<std::string>> headers;
  for (const auto& [module, allowed] : kAllowed) {
    for (const Include& inc : IncludesOf(module)) {
      std::string file = fs::relative(inc.file, kRoot / "include").generic_string();
      if (file.rfind("kforge/", 0) != 0) continue;
      std::vector<std::string>& included = headers[file];
      if (!inc.system && inc.target.rfind("kforge/", 0) == 0) included.push_back(inc.target);
    }
    if (fs::is_directory(kRoot / "include/kforge" / module))
      for (const auto& entry : fs::directory_iterator(kRoot / "include/kforge" / module))
        headers[fs::relative(entry.path(), kRoot / "include").generic_string()];
  }
  return headers;
}

// include/kforge/ holds only what another module uses: each public header is included by another
// module, by a program outside the modules (benchmarks/, the fake worker), or by a public header of its
// own module that is public for these reasons. Any other header belongs in src/<module>/.
TEST(ModuleFencesTest, PublicHeadersAreUsedOutsideTheirModule) {
  const std::map<std::string, std::vector<std::string>> headers = PublicHeaders();
  ASSERT_GT(headers.size(), 40u) << "no public headers found under " << kRoot / "include";
  std::set<std::string> used;
  for (const auto& [module, allowed] : kAllowed)
    for (const Include& inc : IncludesOf(module))
      if (!inc.system && ModuleOf(inc.target) != module && headers.count(inc.target)) used.insert(inc.target);
  std::vector<fs::path> programs;
  for (const auto& entry : fs::directory_iterator(kRoot / "benchmarks")) programs.push_back(entry.path());
  programs.push_back(kRoot / "tests/fakes/fake_worker_main.cc");
  static const std::regex kPublicInclude(R"re(^\s*#\s*include\s*"(kforge/[^"]+)")re");
  for (const fs::path& program : programs) {
    std::ifstream in(program);
    ASSERT_TRUE(in) << program;
    std::string text;
    std::smatch m;
    while (std::getline(in, text))
      if (std::regex_search(text, m, kPublicInclude)) used.insert(m[1].str());
  }
  for (bool grew = true; grew;) {  // what a used public header includes is used too
    grew = false;
    for (const std::string& header : std::vector<std::string>(used.begin(), used.end()))
      if (headers.count(header))
        for (const std::string& included : headers.at(header)) grew |= used.insert(included).second;
  }
  for (const auto& [header, included] : headers) {
    EXPECT_TRUE(used.count(header)) << "include/" << header << ": no other module uses it; move it to src/"
                                    << header.substr(7) << " (included as \"" << header.substr(7) << "\")";
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
