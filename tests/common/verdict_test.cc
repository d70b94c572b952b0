#include "kforge/common/verdict.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace kforge::common {
namespace {

TEST(VerdictTest, StatusNamesRoundTrip) {
  const VerdictStatus all[] = {
      VerdictStatus::kOk,          VerdictStatus::kCompileError, VerdictStatus::kInvalidSolution,
      VerdictStatus::kLaunchError, VerdictStatus::kMismatch,     VerdictStatus::kTimeout,
      VerdictStatus::kCrash,       VerdictStatus::kNoGpu,        VerdictStatus::kHarnessError};
  const char* names[] = {"ok",    "compile_error", "invalid_solution", "launch_error", "mismatch", "timeout",
                         "crash", "no_gpu",        "harness_error"};
  for (size_t i = 0; i < std::size(all); ++i) {
    EXPECT_EQ(VerdictStatusName(all[i]), names[i]);
    auto parsed = ParseVerdictStatus(names[i]);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, all[i]);
  }
  EXPECT_FALSE(ParseVerdictStatus("passed").ok());
}

// Verdicts say which judge gave them; a record from before the field was judged by version 1.
TEST(VerdictTest, CarriesTheJudgeVersion) {
  Verdict v;
  v.task = "demo/relu";
  nlohmann::json json = v.ToJson();
  EXPECT_EQ(json["judge"], kJudgeVersion);
  EXPECT_GE(kJudgeVersion, 2);
  auto back = Verdict::FromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->judge, kJudgeVersion);
  json.erase("judge");
  back = Verdict::FromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->judge, 1);
  EXPECT_EQ(back->ToJson(), json) << "read back, an old record keeps its keys: no judge written";
  json["judge"] = "2";
  EXPECT_FALSE(Verdict::FromJson(json).ok());
}

// A record with fewer keys (older, or written by hand) is read with defaults and written back with
// the same keys; errors name the path of the verdict inside its record.
TEST(VerdictTest, KeysARecordLackedStayAbsentWhenWrittenBack) {
  const nlohmann::json fewer = {{"schema", "kforge.verdict/1"},
                                {"task", "demo/relu"},
                                {"status", "ok"},
                                {"timing", {{"gpu_ms", 40.0}}}};
  auto back = Verdict::FromJson(fewer);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->status, VerdictStatus::kOk);
  EXPECT_EQ(back->message, "");
  EXPECT_FALSE(back->compile.has_value());
  EXPECT_EQ(back->judge, 1);
  EXPECT_EQ(back->absent_keys.size(), 11u);
  EXPECT_EQ(back->ToJson().dump(), fewer.dump());

  nlohmann::json bad = fewer;
  bad["status"] = "passed";
  EXPECT_EQ(Verdict::FromJson(bad, "run:3.attempts[0].verdict").status().message(),
            "run:3.attempts[0].verdict.status: unknown verdict status \"passed\"");
  bad.erase("task");
  EXPECT_EQ(Verdict::FromJson(bad, "v").status().message(), "v.task: missing");
}

TEST(VerdictTest, JsonRoundTrip) {
  Verdict v;
  v.task = "demo/relu";
  v.solution = "-:3";
  v.solution_hash = "sha256:ab";
  v.status = VerdictStatus::kMismatch;
  v.message = "out0: 12 of 4096 elements differ";
  v.seed = 18446744073709551615ull;
  v.compile = CompileFacts{12.5, false, "", "sm_90a", {{"relu", KernelStats{10, 0, 0, 0, 0}}}, {}, {}};
  v.memory = MemoryRecord{};
  v.memory->footprint_bytes = int64_t{13743928320};
  v.memory->peak_device_bytes = int64_t{20615919616};
  nlohmann::json json = v.ToJson();
  EXPECT_EQ(json["memory"]["footprint_bytes"], int64_t{13743928320});
  EXPECT_EQ(json["schema"], "kforge.verdict/1");
  EXPECT_EQ(json["status"], "mismatch");
  auto back = Verdict::FromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), json);
  json["schema"] = "kforge.verdict/2";
  EXPECT_FALSE(Verdict::FromJson(json).ok());
}

}  // namespace
}  // namespace kforge::common

namespace kforge::common {
namespace {

// docs/formats.md shows a verdict; its keys are exactly the keys kforge writes.
TEST(VerdictTest, DocumentedExampleHasTheKeysKforgeWrites) {
  std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/docs/formats.md");
  std::stringstream all;
  all << in.rdbuf();
  const std::string doc = all.str();
  size_t section = doc.find("## Verdict");
  ASSERT_NE(section, std::string::npos);
  size_t start = doc.find("```json\n", section);
  ASSERT_NE(start, std::string::npos);
  start += 8;
  size_t end = doc.find("```", start);
  std::string example = std::regex_replace(doc.substr(start, end - start), std::regex("…"), "");
  nlohmann::json documented = nlohmann::json::parse(example, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(documented.is_object()) << "the example in docs/formats.md is not JSON:\n" << example;
  std::set<std::string> want, got;
  const nlohmann::json written = Verdict().ToJson();
  for (const auto& [key, value] : written.items()) want.insert(key);
  for (const auto& [key, value] : documented.items()) got.insert(key);
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace kforge::common

namespace kforge::common {
namespace {

// Every status is exactly one of: ok, the candidate's fault, kforge's side.
TEST(VerdictStatusTest, PredicatesPartitionTheStatuses) {
  struct Case {
    VerdictStatus status;
    bool at_fault, compiled, harness;
  };
  const Case cases[] = {
      {VerdictStatus::kOk, false, true, false},
      {VerdictStatus::kCompileError, true, false, false},
      {VerdictStatus::kInvalidSolution, true, false, false},
      {VerdictStatus::kLaunchError, true, true, false},
      {VerdictStatus::kMismatch, true, true, false},
      {VerdictStatus::kTimeout, true, true, false},
      {VerdictStatus::kCrash, true, true, false},
      {VerdictStatus::kNoGpu, false, true, true},
      {VerdictStatus::kHarnessError, false, false, true},
  };
  ASSERT_EQ(std::size(cases), std::size(kVerdictStatusNames.rows)) << "a case per status";
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(VerdictStatusName(c.status)));
    EXPECT_EQ(AtFault(c.status), c.at_fault);
    EXPECT_EQ(Compiled(c.status), c.compiled);
    EXPECT_EQ(CountsAsHarnessError(c.status), c.harness);
    EXPECT_EQ((c.status == VerdictStatus::kOk) + c.at_fault + c.harness, 1);
  }
}

}  // namespace
}  // namespace kforge::common
