// Synthetic trajectory records for export and report tests and benchmarks: a text- or tools-protocol
// episode of a few turns whose last attempt is correct or not, built with the dataset types.
#pragma once

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/library_ops.h"
#include "kforge/common/plan_split.h"
#include "kforge/common/verdict.h"
#include "kforge/dataset/trajectory.h"

namespace kforge::testing {

inline constexpr const char* kReluSource =
    "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
    "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = fmaxf(x[i], 0.f);\n}\n";

inline constexpr const char* kReluReference =
    "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
    "        return torch.relu(x)\n\n\nbatch_size = 16\ndim = 16384\n\n\ndef get_inputs():\n"
    "    return [torch.randn(batch_size, dim)]\n\n\ndef get_init_inputs():\n    return []\n";

struct RecordSpec {
  std::string task = "kernelbench/level1/19_ReLU";
  std::optional<int> level = 1;
  std::vector<std::string> tags = {"elementwise"};
  std::string run = "run1";
  int sample = 0;
  std::string protocol = "text";  ///< "text" or "tools"
  int turns = 2;                  ///< assistant turns; the last one holds the final attempt
  bool correct = true;            ///< of the final attempt
  std::optional<double> speedup = 1.5;
  std::string source = kReluSource;
  std::string reference = kReluReference;
  std::string stop = "target_reached";
  bool harness_error = false;  ///< the final attempt's status is harness_error (then not correct)
  std::string reasoning;       ///< on every assistant turn
  std::optional<double> sol_pct;
  /// The final plan has a library op (kforge.solution/2) that took this share of its GPU time: the
  /// verdict's timing.plan_split and checks.library_ops, and the bench record's plan_split and
  /// library_ops, as generate records them.
  std::optional<double> ops_fraction;
  int64_t tokens = 1000;
  double cost = 0.01;
  /// A bench flag of common::kSuspectTimingFlags on the final (correct) attempt: its timing refused,
  /// as generate records it (no speedup, `suspect_timing` set, the measurement in the bench record).
  std::string suspect_timing;
  /// The final verdict's checks.shape_general ("pass", "fail"); empty: no verdict kept.
  std::string shape_general;
};

inline nlohmann::json ReluLaunches() {
  return nlohmann::json::parse(
      R"J([{"kernel": "relu", "grid": ["cdiv(numel(x), 256)"], "block": [256], "args": ["x", "out0", "i64:numel(x)"]}])J");
}

inline nlohmann::json SolutionJson(const RecordSpec& s) {
  return {{"schema", "kforge.solution/1"},
          {"task", s.task},
          {"source", s.source},
          {"launches", ReluLaunches()},
          {"scratch", nlohmann::json::array()},
          {"options", nlohmann::json::array()}};
}

/// The relu kernel after a library op: a plan v2 solution.
inline nlohmann::json SolutionWithOpJson(const RecordSpec& s) {
  nlohmann::json solution = SolutionJson(s);
  solution["schema"] = "kforge.solution/2";
  solution["scratch"] =
      nlohmann::json::parse(R"J([{"name": "y", "dtype": "float32", "shape": ["numel(x)"]}])J");
  solution["launches"] = nlohmann::json::parse(
      R"J([{"op": "relu", "args": ["x"], "out": "y"},
           {"kernel": "relu", "grid": ["cdiv(numel(x), 256)"], "block": [256], "args": ["y", "out0", "i64:numel(x)"]}])J");
  return solution;
}

/// {kernels_ms, ops_ms, ops_fraction} of a 1 ms plan.
inline nlohmann::json PlanSplitJson(double ops_fraction) {
  return common::PlanSplitToJson({1 - ops_fraction, ops_fraction, ops_fraction});
}

/// The verdict of the final attempt when its plan has library ops (a correct one carries the split).
inline nlohmann::json VerdictWithOpsJson(const RecordSpec& s, const std::string& status) {
  nlohmann::json verdict = {{"schema", "kforge.verdict/1"},
                            {"task", s.task},
                            {"status", status},
                            {"checks", {{"guard_regions", "pass"}, {"inputs_unchanged", "pass"}}},
                            {"timing", {{"gpu_ms", 40.0}, {"reference_load_ms", 0.0}}}};
  if (status == "ok") {
    verdict["checks"]["library_ops"] = common::LibraryOpsShare(*s.ops_fraction);
    verdict["timing"][common::kPlanSplitKey] = PlanSplitJson(*s.ops_fraction);
  }
  return verdict;
}

inline dataset::Trajectory MakeRecord(const RecordSpec& s) {
  using nlohmann::json;
  dataset::Trajectory t;
  t.run_id = s.run;
  t.sample = s.sample;
  t.id = s.run + "/" + s.task + "/" + std::to_string(s.sample);
  t.task.id = s.task;
  t.task.level = s.level;
  t.task.tags = s.tags;
  t.task.view = "code";
  t.task.source = "kernelbench";
  t.task.license = "MIT";
  t.task.reference_source = s.reference;
  t.task.reference_hash = dataset::TextHash(s.reference);
  t.teacher = {"replay", "teacher-1", {{"temperature", 0.0}}};
  t.protocol = *dataset::kProtocolNames.Parse(s.protocol);
  t.kforge_version = "0.1.0";
  t.created_at = "2025-01-01T00:00:00Z";
  json solution = s.ops_fraction ? SolutionWithOpJson(s) : SolutionJson(s);
  bool tools = s.protocol == "tools";
  if (tools)
    t.tools.push_back(*common::ToolSpecFromRecord(
        json{{"type", "function"},
             {"function",
              {{"name", "run"},
               {"description", "Compile and check a solution"},
               {"parameters",
                {{"type", "object"},
                 {"properties", {{"source", {{"type", "string"}}}, {"launches", {{"type", "array"}}}}},
                 {"required", {"source", "launches"}}}}}}}));
  // Messages as a record holds them (its tool calls without the `function` object), read as records are.
  json messages = json::array({{{"role", "system"}, {"content", "You write CUDA kernels."}},
                               {{"role", "user"}, {"content", "Write a kernel for " + s.task + "."}}});
  for (int turn = 1; turn <= s.turns; ++turn) {
    bool last = turn == s.turns;
    std::string call_id = "call_" + std::to_string(turn);
    json assistant = {{"role", "assistant"}};
    if (tools) {
      assistant["content"] = "";
      assistant["tool_calls"] =
          json::array({{{"id", call_id},
                        {"name", "run"},
                        {"arguments", {{"source", s.source}, {"launches", ReluLaunches()}}}}});
    } else {
      assistant["content"] = "Here is a kernel.\n```cuda\n" + s.source +
                             "```\n```json\n{\"launches\": " + ReluLaunches().dump() + "}\n```\n";
    }
    if (!s.reasoning.empty()) assistant["reasoning_content"] = s.reasoning;
    assistant["blocks"] = json::array({{{"type", "thinking"}, {"thinking", "secret"}, {"signature", "sig"}}});
    messages.push_back(assistant);
    dataset::Attempt a;
    a.turn = turn;
    a.tool_call_id = tools ? call_id : "";
    a.solution = *common::SolutionFromJson(solution, "test");  // as a record holds it, bytes included
    if (common::SolutionToJson(*a.solution) != solution) a.solution_as_read = std::make_shared<const json>(solution);
    if (!last) {
      a.status = common::VerdictStatus::kCompileError;
    } else if (s.harness_error) {
      a.status = common::VerdictStatus::kHarnessError;
      a.compiled = true;
    } else {
      a.status = s.correct ? common::VerdictStatus::kOk : common::VerdictStatus::kMismatch;
      a.compiled = true;
      a.correct = s.correct;
      if (s.correct) a.speedup = s.speedup;
      // Read as records written with these keys only: they are written back with the same ones.
      if (s.ops_fraction) a.verdict = *common::Verdict::FromJson(VerdictWithOpsJson(s, std::string(a.StatusName())));
      if (!s.shape_general.empty()) {
        json verdict = {{"schema", "kforge.verdict/1"},
                        {"task", s.task},
                        {"status", a.StatusName()},
                        {"checks", {{"shape_general", s.shape_general}}}};
        if (s.shape_general == "fail") verdict["checks"]["shape_general_detail"] = "crash: misaligned address (variant small)";
        a.verdict = *common::Verdict::FromJson(verdict);
      }
      if (s.correct && s.speedup) {
        json bench = {{"schema", "kforge.bench/1"},
                      {"status", "ok"},
                      {"roofline", {{"sol_pct", s.sol_pct ? json(*s.sol_pct) : json(nullptr)}}}};
        if (!s.suspect_timing.empty()) {
          bench["speedup"] = {{"ratio", *s.speedup}};
          bench["flags"] = json::array({"implausible_speedup", s.suspect_timing});
          a.speedup.reset();
          a.suspect_timing = s.suspect_timing;
        }
        if (s.ops_fraction) {
          bench[common::kPlanSplitKey] = PlanSplitJson(*s.ops_fraction);
          bench["library_ops"] = common::LibraryOpsShare(*s.ops_fraction);
          bench["flags"] = *s.ops_fraction > common::kMostlyLibraryOps ? json::array({"mostly_library_ops"})
                                                                       : json::array();
        }
        a.bench = *common::BenchResultFromJson(bench, "bench");
      }
    }
    std::string feedback = a.Is(common::VerdictStatus::kOk) ? "ok" : std::string(a.StatusName()) + ": try again";
    if (tools) {
      messages.push_back({{"role", "tool"}, {"tool_call_id", call_id}, {"content", feedback}});
    } else if (!last) {
      messages.push_back({{"role", "user"}, {"content", feedback}});
    }
    t.attempts.push_back(a);
  }
  for (const json& m : messages) t.messages.push_back(*common::MessageFromRecord(m));
  t.best = static_cast<int>(t.attempts.size()) - 1;
  t.stop = s.harness_error ? dataset::StopReason::kHarnessError : *dataset::kStopReasonNames.Parse(s.stop);
  t.usage.input_tokens = s.tokens;
  t.usage.cost_usd = s.cost;
  return t;
}

/// Writes records as JSON lines; `torn` appends a last line cut in the middle.
inline void WriteRecords(const std::string& path, const std::vector<dataset::Trajectory>& records,
                         const std::string& extra_lines = "") {
  std::ofstream out(path, std::ios::binary);
  for (const dataset::Trajectory& t : records) out << dataset::ToJson(t).dump() << "\n";
  out << extra_lines;
}

}  // namespace kforge::testing
