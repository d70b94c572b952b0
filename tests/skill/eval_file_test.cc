// eval.json read back: every field the renderers read is checked, errors are one line naming the file
// and the JSON path.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/skill/eval.h"
#include "kforge/skill/eval_report.h"

namespace kforge::skill {
namespace {

using nlohmann::json;

/// A whole eval.json, its model's numbers made by skill eval's own code.
json ValidEval() {
  EvalEpisode right, wrong;
  right.correct = true;
  right.speedup = right.speedup_low = 1.2;
  wrong.status = "mismatch";
  ArmEpisodes none = {{"core/a", {right, wrong}}, {"core/b", {wrong, wrong}}};
  ArmEpisodes with = {{"core/a", {right, right}}, {"core/b", {right, wrong}}};
  json model = ModelReport({{"none", none}, {"skill", with}}, 2, 50, 1);
  model["model"] = "m";
  model["beneficial"] = false;
  model["verdict"] = "no lift shown";
  return {{"schema", "kforge.skill_eval/1"},
          {"skill", {{"name", "s"}, {"hash", "sha256:0"}}},
          {"tasks", {"core/a", "core/b"}},
          {"left_out", {{{"task", "core/c"}, {"reason", "r"}}}},
          {"samples", 2},
          {"protocol", "text"},
          {"bootstrap", {{"resamples", 50}, {"seed", 1}}},
          {"models", {model}}};
}

TEST(EvalFileTest, EachMalformedFieldIsNamedByItsPath) {
  ASSERT_TRUE(CheckEvalReport(ValidEval(), "e.json").ok()) << CheckEvalReport(ValidEval(), "e.json").message();
  const struct {
    std::function<void(json&)> change;
    std::string message;
  } cases[] = {
      {[](json& e) { e = json::array(); }, "e.json: expected a JSON object"},
      {[](json& e) { e.erase("schema"); }, "e.json: schema: missing"},
      {[](json& e) { e["schema"] = 1; }, "e.json: schema: expected a string, found integer"},
      {[](json& e) { e["schema"] = "kforge.report/1"; },
       "e.json: schema \"kforge.report/1\", not kforge.skill_eval/1 (not a skill eval's output)"},
      {[](json& e) { e["skill"]["hash"] = nullptr; }, "e.json: skill.hash: expected a string, found null"},
      {[](json& e) { e["tasks"][1] = 2.5; }, "e.json: tasks[1]: expected a string, found number"},
      {[](json& e) { e["left_out"][0] = "x"; }, "e.json: left_out[0]: expected an object, found string"},
      {[](json& e) { e["left_out"][0].erase("reason"); }, "e.json: left_out[0].reason: missing"},
      {[](json& e) { e["samples"] = 2.0; }, "e.json: samples: expected an integer, found number"},
      {[](json& e) { e["compile_only"] = "no"; }, "e.json: compile_only: expected true or false, found string"},
      {[](json& e) { e["bootstrap"]["seed"] = "1"; }, "e.json: bootstrap.seed: expected an integer, found string"},
      {[](json& e) { e["models"] = json::object(); }, "e.json: models: expected an array, found object"},
      {[](json& e) { e["models"][0] = 3; }, "e.json: models[0]: expected an object"},
      {[](json& e) { e["models"][0]["beneficial"] = 1; },
       "e.json: models[0].beneficial: expected true or false, found integer"},
      {[](json& e) { e["models"][0]["arms"]["none"]["correct"] = "2"; },
       "e.json: models[0].arms.none.correct: expected an integer, found string"},
      {[](json& e) { e["models"][0]["arms"]["with space"] = 1; },
       "e.json: models[0].arms.\"with space\": expected an object, found integer"},
      {[](json& e) { e["models"][0]["arms"]["none"]["failures"]["odd key"] = "1"; },
       "e.json: models[0].arms.none.failures.\"odd key\": expected an integer, found string"},
      {[](json& e) { e["models"][0]["arms"]["none"]["fast_p"].erase("1.5"); },
       "e.json: models[0].arms.none.fast_p.1.5: missing"},
      {[](json& e) { e["models"][0]["arms"]["none"]["geomean_speedup_vs_none"] = {{"tasks", 1}, {"arm", nullptr}, {"none", 1}}; },
       "e.json: models[0].arms.none.geomean_speedup_vs_none.arm: expected a number, found null"},
      {[](json& e) { e["models"][0]["arms"]["none"]["geomean_speedup_vs_none"] = {{"tasks", 0}, {"arm", nullptr}, {"none", "x"}}; },
       "e.json: models[0].arms.none.geomean_speedup_vs_none.none: expected a number or null, found string"},
      {[](json& e) { e["models"][0]["lifts"]["skill_vs_none"]["mcnemar"]["holm_p"] = "p"; },
       "e.json: models[0].lifts.skill_vs_none.mcnemar.holm_p: expected a number, found string"},
      {[](json& e) { e["models"][0]["lifts"]["skill_vs_none"]["worse_tasks"] = {json::object()}; },
       "e.json: models[0].lifts.skill_vs_none.worse_tasks[0].task: missing"},
      {[](json& e) { e["models"][0]["lifts"]["skill_vs_none"]["worse_tasks"] = {1}; },
       "e.json: models[0].lifts.skill_vs_none.worse_tasks[0]: expected an object, found integer"},
  };
  for (const auto& c : cases) {
    json eval = ValidEval();
    c.change(eval);
    Status checked = CheckEvalReport(eval, "e.json");
    EXPECT_EQ(checked.message(), c.message);
  }
}

}  // namespace
}  // namespace kforge::skill
