// Fuzzes the solution parser (JSON objects and model replies) and the static plan check: every
// input gets a solution or a one-line error, never a signal or an exception; a parsed solution
// hashes, survives its canonical JSON form, and its plan resolves or is rejected for every variant
// of its task. Seeds: the solutions in examples/ and tests/, and the same as model replies.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/fuzz.h"
#include "kforge/common/solution.h"
#include "kforge/common/task.h"
#include "kforge/cuda/launch_plan.h"
#include "kforge/cuda/plan_env.h"

namespace kforge::verify {
namespace {

std::vector<std::string> Seeds() {
  std::vector<std::string> seeds;
  std::string root = KFORGE_SOURCE_DIR;
  for (const char* dir : {"/examples", "/tests/verify/adversarial", "/tests/bench/adversarial"}) {
    for (const std::string& text : fakes::ReadFilesUnder(root + dir, ".json")) {
      nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (!j.is_object() || !j.contains("source")) continue;
      seeds.push_back(text);
      nlohmann::json plan = j;
      plan.erase("source");
      plan.erase("schema");
      seeds.push_back("Here is the kernel.\n```cuda\n" + j["source"].get<std::string>() + "\n```\n```json\n" +
                      plan.dump(2) + "\n```\n");
    }
  }
  return seeds;
}

// The bundled tasks by id, for the plan check.
const std::map<std::string, common::Task>& Tasks() {
  static const std::map<std::string, common::Task> tasks = [] {
    std::map<std::string, common::Task> out;
    auto tree = common::LoadTaskTree(std::string(KFORGE_SOURCE_DIR) + "/tasks");
    if (tree.ok())
      for (common::Task& t : *tree) out.emplace(t.id, std::move(t));
    return out;
  }();
  return tasks;
}

// Replaces one expression of a JSON solution (a grid or block size, shared_bytes, a scalar argument
// or a scratch size) with a random expression over the relu task's names.
std::string MutateExpression(const std::string& parent, std::mt19937_64& rng) {
  nlohmann::json j = nlohmann::json::parse(parent, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("launches") || !j["launches"].is_array()) return parent;
  std::vector<nlohmann::json*> slots;
  for (nlohmann::json& step : j["launches"]) {
    if (!step.is_object()) continue;
    for (const char* key : {"grid", "block", "args"})
      if (step.contains(key) && step[key].is_array())
        for (nlohmann::json& v : step[key]) slots.push_back(&v);
    if (step.contains("shared_bytes")) slots.push_back(&step["shared_bytes"]);
  }
  if (j.contains("scratch") && j["scratch"].is_array())
    for (nlohmann::json& b : j["scratch"])
      if (b.is_object() && b.contains("shape") && b["shape"].is_array())
        for (nlohmann::json& v : b["shape"]) slots.push_back(&v);
  if (slots.empty()) return parent;
  nlohmann::json& slot = *slots[rng() % slots.size()];
  std::string e = fakes::RandomExpression(rng, {"N", "M"}, {"x", "out0"}, 3);
  if (slot.is_string() && slot.get<std::string>().size() > 4 && slot.get<std::string>()[3] == ':')
    slot = slot.get<std::string>().substr(0, 4) + e;
  else
    slot = e;
  return j.dump();
}

fakes::FuzzOutcome Property(const std::string& text) {
  StatusOr<common::Solution> solution = common::ParseSolutionText(text, "fuzz.json");
  if (!solution.ok()) {
    const std::string& m = solution.status().message();
    if (m.rfind("fuzz.json", 0) != 0) return {"error does not name the input: " + m.substr(0, 300), ""};
    if (m.find('\n') != std::string::npos) return {"error spans lines: " + m.substr(0, 300), ""};
    if (m.size() > 700) return {"error of " + std::to_string(m.size()) + " bytes", ""};
    return {"", fakes::MessageLabel(m.substr(9))};
  }
  std::string hash = common::SolutionHash(*solution);
  StatusOr<common::Solution> again =
      common::ParseSolutionText(common::SolutionToJson(*solution).dump(), "canonical");
  if (!again.ok()) return {"canonical form does not parse: " + again.status().message(), ""};
  if (common::SolutionHash(*again) != hash) return {"canonical form hashes differently", ""};

  auto it = Tasks().find(solution->task);
  if (it == Tasks().end()) it = Tasks().find("demo/relu");
  if (it == Tasks().end()) return {"no demo/relu task to check plans against", ""};
  std::string label = "ok";
  for (const common::Variant& variant : it->second.variants) {
    StatusOr<cuda::PlanEnv> env = cuda::PlanEnvFor(it->second, variant);
    if (!env.ok()) return {"task " + it->first + " has no plan environment", ""};
    cuda::LaunchLimits limits;
    Status scratch = cuda::AddScratch(*solution, limits, *env);
    Status plan = scratch.ok() ? cuda::ResolvePlan(*solution, *env, limits).status() : scratch;
    if (!plan.ok() && plan.message().find('\n') != std::string::npos)
      return {"plan error spans lines: " + plan.message().substr(0, 300), ""};
    label += plan.ok() ? "+" : " " + fakes::MessageLabel(plan.message());
  }
  return {"", label};
}

TEST(SolutionFuzzTest, EveryInputGetsASolutionOrOneLineError) {
  fakes::FuzzTarget target;
  target.name = "solution";
  target.seeds = Seeds();
  target.dictionary = {"1e400",
                       "-1e400",
                       "18446744073709551615",
                       "9223372036854775808",
                       "-9223372036854775807-1",
                       "cdiv(",
                       "-1",
                       "\xff",
                       "\xc3\x28",
                       "\xed\xa0\x80",
                       "\\ud800",
                       "\xef\xbb\xbf",
                       "\"launches\"",
                       "\"grid\"",
                       "\"block\"",
                       "\"args\"",
                       "\"scratch\"",
                       "\"options\"",
                       "\"task\"",
                       "\"source\"",
                       "\"memset\": \"out0\"",
                       "\"value\": 1e308",
                       "\"i64:numel(x)\"",
                       "\"f32:1e39\"",
                       "\"u64:-1\"",
                       "\"x\": 1, \"x\": 2",
                       "numel(x)",
                       "size(x, -1)",
                       "```cuda\n",
                       "```json\n",
                       "\n```",
                       "[[[[[[[[[[[[[[[[",
                       "{\"a\":{\"a\":{\"a\":{\"a\":"};
  target.max_bytes = 1 << 16;
  target.property = Property;
  target.mutate = MutateExpression;
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(), fakes::FuzzSeed());
  std::printf("fuzz solution: %s\n", report.Summary().c_str());
  RecordProperty("executions", std::to_string(report.executions));
  EXPECT_GT(report.seeds, 20u);
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
}

}  // namespace
}  // namespace kforge::verify
