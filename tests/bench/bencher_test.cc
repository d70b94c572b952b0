// The bench pipeline against the fake worker (tests/fakes/fake_worker_main.cc): the typed bench
// request and reply end to end, without a GPU. The fake times the candidate at 1 ms and the
// reference at 2 ms.
#include "kforge/bench/bencher.h"

#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "fakes/task_root.h"
#include "kforge/common/files.h"

namespace kforge::bench {
namespace {

class BencherTest : public testing::Test {
 protected:
  BenchOptions Options() const {
    BenchOptions options;
    options.verify.tasks_root = tasks_.path();
    options.verify.worker_program = KFORGE_FAKE_WORKER;
    options.verify.seed = 11;
    options.verify.trials = 1;
    options.verify.use_cache = false;
    return options;
  }

  /// A .jsonl file of the demo relu, once per marker.
  std::string Lines(const std::vector<std::string>& markers) {
    auto text = common::ReadFile(std::filesystem::path(KFORGE_SOURCE_DIR) / "examples/demo/relu.json");
    EXPECT_TRUE(text.ok());
    path_ = std::filesystem::path(testing::TempDir()) /
            ("bencher-" + std::to_string(getpid()) + "-" +
             testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl");
    std::ofstream out(path_);
    for (const std::string& marker : markers) {
      auto solution = common::ParseSolutionText(*text, "relu.json");
      EXPECT_TRUE(solution.ok());
      solution->source += "// fake:" + marker + "\n";
      out << common::SolutionToJson(*solution).dump() << "\n";
    }
    return path_.string();
  }

  void TearDown() override { std::filesystem::remove(path_); }

  fakes::TaskRoot tasks_{{"demo"}};
  std::filesystem::path path_;
};

TEST_F(BencherTest, TimesSolutionsThatPassAndKeepsTheStatusOfOthers) {
  Bencher bencher(Options());
  verify::SolutionReader reader({Lines({"ok", "mismatch", "bench=crash"})});
  std::vector<BenchResult> results;
  BenchSummary summary = bencher.Run(reader, [&](const BenchResult& r) { results.push_back(r); });
  ASSERT_EQ(results.size(), 3u);
  const BenchResult& timed = results[0];
  EXPECT_EQ(timed.status, common::VerdictStatus::kOk) << timed.message;
  EXPECT_EQ(timed.task, "demo/relu");
  EXPECT_FALSE(timed.solution_hash.empty());
  EXPECT_DOUBLE_EQ(timed.candidate.stats.median, 1.0);
  ASSERT_TRUE(timed.reference.has_value());
  EXPECT_DOUBLE_EQ(timed.reference->stats.median, 2.0);
  EXPECT_DOUBLE_EQ(timed.speedup.ratio, 2.0);
  ASSERT_TRUE(timed.device.has_value());
  EXPECT_EQ(timed.device->name, "Fake GPU");
  EXPECT_EQ(timed.seed, 11u);
  EXPECT_EQ(results[1].status, common::VerdictStatus::kMismatch) << "the verdict's status";
  EXPECT_EQ(results[2].status, common::VerdictStatus::kCrash) << "the timed runs' status";
  EXPECT_EQ(results[2].message, "fake bench: crash");
  EXPECT_EQ(summary.total, 3);
  EXPECT_EQ(summary.ok, 1);
  EXPECT_FALSE(summary.no_gpu);
}

// A speedup above 10x is timed again (fresh draws, the other mode) before it is believed; one the
// second measurement does not find is flagged timing_unconfirmed, which nothing counts.
TEST_F(BencherTest, AnImplausibleSpeedupIsTimedAgainBeforeItIsBelieved) {
  Bencher bencher(Options());
  verify::SolutionReader reader({Lines({"ok", "speedups=50,45", "speedups=60,3"})});
  std::vector<BenchResult> results;
  bencher.Run(reader, [&](const BenchResult& r) { results.push_back(r); });
  ASSERT_EQ(results.size(), 3u);
  EXPECT_FALSE(results[0].recheck_speedup) << "2x is plausible: timed once";
  EXPECT_EQ(results[0].flags, std::vector<std::string>{});

  const BenchResult& confirmed = results[1];
  ASSERT_EQ(confirmed.status, common::VerdictStatus::kOk) << confirmed.message;
  EXPECT_DOUBLE_EQ(confirmed.speedup.ratio, 50);
  ASSERT_TRUE(confirmed.recheck_speedup);
  EXPECT_DOUBLE_EQ(*confirmed.recheck_speedup, 45);
  EXPECT_EQ(confirmed.flags, std::vector<std::string>{"implausible_speedup"});
  EXPECT_EQ(common::SuspectTiming(confirmed), "");

  const BenchResult& refused = results[2];
  ASSERT_EQ(refused.status, common::VerdictStatus::kOk) << refused.message;
  EXPECT_DOUBLE_EQ(refused.speedup.ratio, 60);
  EXPECT_DOUBLE_EQ(refused.recheck_speedup.value_or(0), 3);
  EXPECT_EQ(refused.flags, (std::vector<std::string>{"implausible_speedup", "timing_unconfirmed"}));
  EXPECT_EQ(common::SuspectTiming(refused), "timing_unconfirmed");
  nlohmann::json record = common::BenchResultToJson(refused);
  EXPECT_DOUBLE_EQ(record["recheck_speedup"].get<double>(), 3);
  EXPECT_FALSE(common::BenchResultToJson(results[0]).contains("recheck_speedup"));
}

TEST_F(BencherTest, RecordsSayHowMuchTimeWentToLibraryOps) {
  Bencher bencher(Options());
  verify::SolutionReader reader({Lines({"ok", "ops=0.95", "ops=0.25"})});
  std::vector<nlohmann::json> records;
  bencher.Run(reader, [&](const BenchResult& r) { records.push_back(BenchResultToJson(r)); });
  ASSERT_EQ(records.size(), 3u);
  for (const nlohmann::json& r : records) EXPECT_EQ(r["status"], "ok") << r.dump();
  EXPECT_FALSE(records[0].contains("plan_split")) << "a plan without library ops has no split";
  EXPECT_FALSE(records[0].contains("library_ops"));
  EXPECT_EQ(records[1]["plan_split"],
            nlohmann::json({{"kernels_ms", 1 - 0.95}, {"ops_ms", 0.95}, {"ops_fraction", 0.95}}));
  EXPECT_EQ(records[1]["library_ops"], "most_time");
  EXPECT_EQ(records[1]["flags"], nlohmann::json::array({"mostly_library_ops"}));
  EXPECT_EQ(records[2]["plan_split"]["ops_fraction"], 0.25);
  EXPECT_EQ(records[2]["library_ops"], "some_time");
  EXPECT_EQ(records[2]["flags"], nlohmann::json::array());
}

TEST_F(BencherTest, TimesReferencesAlone) {
  Bencher bencher(Options());
  std::vector<BenchResult> results;
  BenchSummary summary =
      bencher.RunReferences({"demo/relu", "demo/nope"}, [&](const BenchResult& r) { results.push_back(r); });
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].status, common::VerdictStatus::kOk) << results[0].message;
  ASSERT_TRUE(results[0].reference.has_value());
  EXPECT_DOUBLE_EQ(results[0].reference->stats.median, 2.0);
  EXPECT_EQ(results[1].status, common::VerdictStatus::kInvalidSolution);
  EXPECT_EQ(summary.ok, 1);
}

}  // namespace
}  // namespace kforge::bench
