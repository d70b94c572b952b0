// Fuzzes the source policy and the option allowlist through their public API: every source gets
// the same decision twice and at most one bounded line, and a source it accepts still gets
// rejected once an #include of /etc/passwd follows it. Seeds: the sources in examples/ and tests/.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/source_policy.h"
#include "fakes/fuzz.h"

namespace kforge::cuda {
namespace {

std::vector<std::string> SourceSeeds() {
  std::vector<std::string> seeds = {
      "#include <cuda_fp16.h>\n#if __has_include(<cuda_fp8.h>)\n#endif\n",
      "#define S(x) #x\n_Pragma(\"unroll\") for(;;){}\nauto s = R\"x(*/)x\";\n",
      "// c \\\nx\n/* a\n b */ %:include <cuda_bf16.h>\nchar a = '\"', b = '\\'';\n"};
  std::string root = KFORGE_SOURCE_DIR;
  for (const char* dir : {"/examples", "/tests/verify/adversarial", "/tests/bench/adversarial"}) {
    for (const std::string& text : fakes::ReadFilesUnder(root + dir, ".json")) {
      nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (j.is_object() && j.contains("source") && j["source"].is_string()) seeds.push_back(j["source"]);
    }
  }
  return seeds;
}

std::string CheckMessage(const Status& s) {
  const std::string& m = s.message();
  if (m.find('\n') != std::string::npos) return "message spans lines: " + m.substr(0, 300);
  if (m.size() > 300) return "message of " + std::to_string(m.size()) + " bytes";
  return "";
}

fakes::FuzzOutcome SourceProperty(const std::string& source) {
  Status first = CheckSourcePolicy(source);
  Status second = CheckSourcePolicy(source);
  if (first.ok() != second.ok() || first.message() != second.message())
    return {"two different decisions", ""};
  if (!first.ok()) {
    std::string bad = CheckMessage(first);
    if (!bad.empty()) return {bad, ""};
    size_t colon = first.message().find(": ");
    return {"", fakes::MessageLabel(colon == std::string::npos ? first.message()
                                                               : first.message().substr(colon))};
  }
  if (source.size() + 40 <= kMaxSourceBytes && CheckSourcePolicy(source + "\n#include </etc/passwd>\n").ok())
    return {"accepted with an #include of /etc/passwd appended", ""};
  return {"", "ok"};
}

TEST(SourcePolicyFuzzTest, EverySourceGetsOneStableDecision) {
  fakes::FuzzTarget target;
  target.name = "source policy";
  target.seeds = SourceSeeds();
  target.dictionary = {"#include",
                       "<cuda_fp16.h>",
                       "</etc/passwd>",
                       "\"../x\"",
                       "__has_include(",
                       "#define",
                       "#pragma",
                       "_Pragma(",
                       "R\"(",
                       ")\"",
                       "R\"x(",
                       ")x\"",
                       "/*",
                       "*/",
                       "//",
                       "\\\n",
                       "\\\r\n",
                       "%:",
                       "?\?=",
                       "#",
                       "\"",
                       "'",
                       "\n",
                       "\r",
                       std::string(1, '\0'),
                       "\xff",
                       "\xe2\x80\xae",
                       "#if 0\n",
                       "#endif\n",
                       "##",
                       "#line 1\n",
                       "__FILE__",
                       "u8R\"(",
                       "\\u0075",
                       "include"};
  target.max_bytes = 1 << 16;
  target.property = SourceProperty;
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(), fakes::FuzzSeed());
  std::printf("fuzz source policy: %s\n", report.Summary().c_str());
  RecordProperty("executions", std::to_string(report.executions));
  EXPECT_GT(report.seeds, 10u);
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
}

TEST(SourcePolicyFuzzTest, EveryOptionListGetsOneLine) {
  fakes::FuzzTarget target;
  target.name = "compile options";
  target.seeds = {"--use_fast_math\n--ftz=true", "-DBLOCK=256\n-DUSE_X\n--maxrregcount=64",
                  "--std=c++20\n-lineinfo", "-I/etc", "-include\n/etc/passwd"};
  target.dictionary = {"-D",   "=",   "--", "-I", "/etc/passwd", "\n", "c++17", "99999999999999999999",
                       "\xff", "</x>"};
  target.max_bytes = 1024;
  target.property = [](const std::string& text) -> fakes::FuzzOutcome {
    std::vector<std::string> options;
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      options.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    Status s = CheckCompileOptions(options);
    std::string bad = s.ok() ? "" : CheckMessage(s);
    return {bad, s.ok() ? "ok" : fakes::MessageLabel(s.message())};
  };
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(1.0), fakes::FuzzSeed());
  std::printf("fuzz compile options: %s\n", report.Summary().c_str());
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
}

}  // namespace
}  // namespace kforge::cuda
