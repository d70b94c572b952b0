// Fuzzes trajectory records as a hostile teacher or a careless edit leaves them: every mutant of the
// seed records is either refused by TrajectoryFromJson with one line naming the record, or read; and
// FitRecord brings any record (read or not) within its line cap without throwing, keeping a
// readable record readable. Seeds: records built here, hostile ones among them (replies of 100 KB,
// control bytes, fields of the wrong type, deep nesting).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "fakes/fuzz.h"
#include "kforge/dataset/trajectory.h"

namespace kforge::dataset {
namespace {

using nlohmann::json;

constexpr size_t kCap = 16 * 1024;

Trajectory Base() {
  Trajectory t;
  t.id = "r1/demo/relu/0";
  t.run_id = "r1";
  t.task.id = "demo/relu";
  t.task.level = 1;
  t.task.tags = {"elementwise"};
  t.messages = {common::Message::System("You write CUDA kernels."), common::Message::User("write relu"),
                common::Message::Assistant("```cuda\n__global__ void k(){}\n```")};
  Attempt a;
  a.turn = 1;
  a.status = common::VerdictStatus::kOk;
  a.compiled = a.correct = true;
  a.speedup = 1.25;
  a.solution.emplace();
  a.solution->source = "__global__ void k(){}";
  t.attempts = {a};
  t.best = 0;
  t.stop = StopReason::kTargetReached;
  return t;
}

std::vector<std::string> Seeds() {
  std::vector<std::string> seeds;
  seeds.push_back(ToJson(Base()).dump());
  Trajectory big = Base();
  big.messages[2].content = std::string(100000, 'a');
  seeds.push_back(ToJson(big).dump());
  Trajectory control = Base();
  control.task.id = "evil/\x1b[2J\x07";
  control.messages[2].content = std::string("\x00\x01\x1b]0;x\x07\n\n\n", 11) + std::string(30000, '\n');
  seeds.push_back(ToJson(control).dump());
  json wrong = ToJson(Base());
  wrong["attempts"][0]["solution"]["source"] = 42;
  wrong["usage"]["input_tokens"] = -180000;
  seeds.push_back(wrong.dump());
  json deep = ToJson(Base());
  json nest = "x";
  for (int i = 0; i < 200; ++i) nest = json::array({nest});
  deep["messages"][1]["content"] = nest;
  seeds.push_back(deep.dump());
  json many = ToJson(Base());
  for (int i = 0; i < 3000; ++i) many["messages"].push_back({{"role", "user"}, {"content", "y"}});
  seeds.push_back(many.dump());
  return seeds;
}

/// Replaces a random string of the record with a long one, or a random value with another type.
std::string MutateRecord(const std::string& parent, std::mt19937_64& rng) {
  json j = json::parse(parent, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return parent;
  std::vector<json*> values;
  std::vector<json*> stack = {&j};
  while (!stack.empty()) {
    json* v = stack.back();
    stack.pop_back();
    values.push_back(v);
    if (v->is_structured())
      for (json& child : *v) stack.push_back(&child);
  }
  json& target = *values[rng() % values.size()];
  switch (rng() % 5) {
    case 0:
      target = std::string(rng() % 50000, static_cast<char>('a' + rng() % 26));
      break;
    case 1:
      target = -static_cast<int64_t>(rng() >> 1);
      break;
    case 2:
      target = json::array({target, target});
      break;
    case 3:
      target = nullptr;
      break;
    default:
      target = std::string(rng() % 20000, '\n');
  }
  return j.dump();
}

fakes::FuzzOutcome Property(const std::string& text) {
  json record = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded()) return {"", "not json"};
  StatusOr<Trajectory> read = TrajectoryFromJson(record, "record");
  if (!read.ok()) {
    const std::string& m = read.status().message();
    if (m.rfind("record", 0) != 0) return {"error does not name the record: " + m.substr(0, 200), ""};
    if (m.find('\n') != std::string::npos) return {"error spans lines: " + m.substr(0, 200), ""};
  }
  if (!record.is_object()) return {"", "not an object"};
  json fitted = record;
  bool cut = FitRecord(fitted, kCap);
  size_t size = fitted.dump(-1, ' ', false, json::error_handler_t::replace).size() + 1;
  if (size > kCap) return {"FitRecord left " + std::to_string(size) + " bytes", ""};
  if (cut != (fitted != record)) return {"FitRecord's answer does not say whether it cut", ""};
  if (read.ok() && record.is_object() && !TrajectoryFromJson(fitted, "record").ok())
    return {"a readable record is no longer readable once fitted", ""};
  return {"", std::string(read.ok() ? "read" : fakes::MessageLabel(read.status().message())) +
                  (cut ? " cut" : "")};
}

TEST(TrajectoryFuzzTest, EveryRecordIsReadOrRefusedAndFitsItsLine) {
  fakes::FuzzTarget target;
  target.name = "trajectory record";
  target.seeds = Seeds();
  target.dictionary = {"\"truncated\": true", "\"best\": 99", "\"attempts\": {}", "\"messages\": 1",
                       "-1", "1e400", "\"\\u0000\"", "\xff", "[[[[[[[[", "\"id\": 5"};
  target.max_bytes = 1 << 18;
  target.property = Property;
  target.mutate = MutateRecord;
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(), fakes::FuzzSeed());
  std::printf("fuzz trajectory record: %s\n", report.Summary().c_str());
  RecordProperty("executions", std::to_string(report.executions));
  EXPECT_EQ(report.seeds, 6u);
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
}

}  // namespace
}  // namespace kforge::dataset
