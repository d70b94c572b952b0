// Fuzzes what `kforge verify --rejudge FILE` reads (any file a user names): every input is taken or
// refused in one line naming the file, never an exception; one with no trajectory record is refused;
// what is taken gives one solution line per best attempt, each a JSON object naming its task. Seeds:
// the records of tests/golden/run and lines that are almost records.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/rejudge.h"
#include "fakes/fuzz.h"
#include "kforge/common/files.h"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

TEST(RejudgeFuzzTest, EveryInputIsTakenOrRefusedInOneLine) {
  std::string pattern = (fs::path(::testing::TempDir()) / "kforge_rejudge_fuzz_XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern, records = dir / "in.jsonl", solutions = dir / "solutions.jsonl";
  std::vector<std::string> seeds;
  for (const std::string& text : fakes::ReadFilesUnder(std::string(KFORGE_SOURCE_DIR) + "/tests/golden/run", ".jsonl"))
    seeds.push_back(text.substr(0, 60000));
  seeds.push_back("root:x:0:0:root:/root:/bin/bash\n");
  seeds.push_back("{\"id\": \"x\"}\n{\"schema\": \"kforge.trajectory/1\"}\n");
  seeds.push_back("");
  fakes::FuzzTarget target;
  target.name = "rejudge_inputs";
  target.seeds = seeds;
  target.dictionary = {"\n", "{", "}", "null", "\"best\"", "\"attempts\"", "\"solution\"", "\"schema\"",
                       "\"kforge.trajectory/1\"", "\"id\"", "0", "-1", "\xff", std::string(1, '\0')};
  target.max_bytes = 65536;
  target.property = [&](const std::string& input) -> fakes::FuzzOutcome {
    std::ofstream(records, std::ios::binary | std::ios::trunc) << input;
    StatusOr<size_t> best = CollectBestAttempts(records, solutions);
    if (!best.ok()) {
      const std::string& m = best.status().message();
      if (m.find('\n') != std::string::npos) return {"an error of several lines", ""};
      if (m.find(records.string()) == std::string::npos) return {"an error that does not name the file", ""};
      return {"", fakes::MessageLabel(m.substr(records.string().size()))};
    }
    if (input.find("\"id\"") == std::string::npos) return {"a file without an id taken as records", ""};
    std::ifstream in(solutions);
    size_t lines = 0;
    for (std::string line; std::getline(in, line); ++lines) {
      nlohmann::json solution = nlohmann::json::parse(line, nullptr, false);
      if (!solution.is_object() || !solution.contains("task") || !solution["task"].is_string())
        return {"a solution line that names no task", ""};
    }
    if (lines != *best) return {"the count is not the number of solution lines", ""};
    return {"", "taken " + std::to_string(std::min<size_t>(*best, 3))};
  };
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(), fakes::FuzzSeed());
  std::printf("fuzz rejudge_inputs: %s\n", report.Summary().c_str());
  RecordProperty("executions", std::to_string(report.executions));
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kforge::cli
