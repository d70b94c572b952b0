#include "kforge/export/scan.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "export/record_builder.h"

namespace kforge::exporter {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// One record id, finished `wall_s` after 2025-01-01T00:00:00Z; `run_id` tells the copies apart.
json Copy(const std::string& run_id, double wall_s) {
  dataset::Trajectory t = testing::MakeRecord(testing::RecordSpec{});
  json record = dataset::ToJson(t);
  record["run_id"] = run_id;
  record["created_at"] = "2025-01-01T00:00:00Z";
  record["timing"]["wall_s"] = wall_s;
  return record;
}

struct Scanned {
  std::vector<std::string> visited;  ///< run_id of each record visited
  ScanCounts counts;
};

class ScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge-scan-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Scanned Scan(const std::vector<std::string>& lines) {
    fs::path path = dir_ / "records.jsonl";
    {
      std::ofstream out(path);
      for (const std::string& line : lines) out << line << "\n";
    }
    Scanned s;
    Status status = ScanRecords(
        {path}, [&](const RecordRef&, dataset::Trajectory& t) { s.visited.push_back(t.run_id); }, s.counts,
        [](const std::string&) {});
    EXPECT_TRUE(status.ok()) << status.message();
    return s;
  }
  fs::path dir_;
};

TEST_F(ScanTest, ALaterCopyThatIsNotAValidRecordKeepsNoValidOneOut) {
  json valid = Copy("valid", 10);
  json bad_attempt = Copy("bad_attempt", 50);
  bad_attempt["attempts"][0].erase("status");  // TrajectoryFromJson refuses it
  json bad_best = Copy("bad_best", 60);
  bad_best["best"] = 99;
  const std::string duplicate_key = "{\"id\": " + valid["id"].dump() + ", \"id\": " + valid["id"].dump() +
                                    ", \"created_at\": \"2025-01-01T00:00:00Z\", \"timing\": {\"wall_s\": 70}}";
  const std::string not_json = "{\"id\": " + valid["id"].dump() + ", \"created_at\": \"2026-01-01T00:00:00Z\",";
  for (const std::vector<std::string>& lines :
       {std::vector<std::string>{valid.dump(), bad_attempt.dump(), bad_best.dump(), duplicate_key, not_json},
        std::vector<std::string>{not_json, duplicate_key, bad_best.dump(), bad_attempt.dump(), valid.dump()}}) {
    Scanned s = Scan(lines);
    EXPECT_EQ(s.visited, std::vector<std::string>{"valid"});
    EXPECT_EQ(s.counts.records, 1);
    EXPECT_EQ(s.counts.malformed, 4);
    EXPECT_EQ(s.counts.duplicates, 0);
  }
}

TEST_F(ScanTest, TheLastFinishedValidCopyIsKeptBelowAnInvalidOne) {
  json early = Copy("early", 10), late = Copy("late", 20), invalid = Copy("invalid", 30);
  invalid["messages"] = "not an array";
  Scanned s = Scan({late.dump(), invalid.dump(), early.dump()});
  EXPECT_EQ(s.visited, std::vector<std::string>{"late"});
  EXPECT_EQ(s.counts.records, 1);
  EXPECT_EQ(s.counts.duplicates, 1);
  EXPECT_EQ(s.counts.malformed, 1);
}

TEST_F(ScanTest, OnlyTheTopLevelFieldsSayWhenACopyFinished) {
  // Nested "id", "created_at" and "timing" keys, and an object inside timing before wall_s, must not
  // change which copy finished last.
  json later = Copy("later", 0);
  later["timing"] = {{"a_detail", {{"wall_s", 0}}}, {"wall_s", 30}, {"llm_s", 1}};
  json earlier = Copy("earlier", 20);
  earlier["teacher"]["params"]["id"] = "another id";
  earlier["teacher"]["params"]["created_at"] = "2030-01-01T00:00:00Z";
  earlier["teacher"]["params"]["timing"] = {{"wall_s", 1e9}};
  earlier["task"]["timing"] = {{"wall_s", 1e9}};
  for (const std::vector<std::string>& lines :
       {std::vector<std::string>{later.dump(), earlier.dump()}, std::vector<std::string>{earlier.dump(), later.dump()}}) {
    Scanned s = Scan(lines);
    EXPECT_EQ(s.visited, std::vector<std::string>{"later"});
    EXPECT_EQ(s.counts.duplicates, 1);
  }
  // A created_at that is not a time finishes before any that is.
  json untimed = Copy("untimed", 1e6);
  untimed["created_at"] = "yesterday";
  EXPECT_EQ(Scan({earlier.dump(), untimed.dump()}).visited, std::vector<std::string>{"earlier"});
  // Ids are compared whole: another id is another record.
  json other = Copy("other", 5);
  other["id"] = other["id"].get<std::string>() + "x";
  EXPECT_EQ(Scan({other.dump(), earlier.dump()}).visited, (std::vector<std::string>{"other", "earlier"}));
}

TEST_F(ScanTest, OneIdIsOneEpisodeOnlyWhenItsConversationIsTheSameToo) {
  // Two runs of one configuration (a sampling teacher) give their episodes the same ids: each copy whose
  // messages differ is another episode, and is kept.
  json first = Copy("first", 10), second = Copy("second", 20);
  second["messages"][1]["content"] = second["messages"][1]["content"].get<std::string>() + " ";
  Scanned replicas = Scan({first.dump(), second.dump()});
  EXPECT_EQ(replicas.visited, (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(replicas.counts.duplicates, 0);
  // The same conversation judged again (verify --rejudge rewrites a record's verdicts) is one episode.
  json rejudged = Copy("rejudged", 30);
  rejudged["attempts"][0]["status"] = "mismatch";
  Scanned again = Scan({first.dump(), rejudged.dump()});
  EXPECT_EQ(again.visited, std::vector<std::string>{"rejudged"});
  EXPECT_EQ(again.counts.duplicates, 1);
}

}  // namespace
}  // namespace kforge::exporter
