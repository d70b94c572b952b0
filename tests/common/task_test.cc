#include "kforge/common/task.h"

#include <gtest/gtest.h>
#include <cstdint>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

namespace kforge::common {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A scratch task tree under the system temp folder, removed at the end of the test.
class TaskTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("kforge_task_test_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path Write(const std::string& id, const std::string& text, bool with_reference = true) {
    fs::path dir = root_ / id;
    fs::create_directories(dir);
    std::ofstream(dir / "task.json") << text;
    if (with_reference) std::ofstream(dir / "reference.py") << "import torch\n";
    return dir;
  }

  static json Good(const std::string& id = "core/scale") {
    return json::parse(R"J({
      "schema": "kforge.task/1",
      "id": ")J" + id + R"J(",
      "level": 1,
      "tags": ["elementwise"],
      "description": "y = x * w",
      "reference": "reference.py",
      "symbols": {"N": 1024, "B": 2},
      "constants": {"alpha": 0.5},
      "inputs": [{"name": "x", "dtype": "float32", "shape": ["B", "N"], "init": {"dist": "uniform", "low": -2, "high": 2}},
                 {"name": "idx", "dtype": "int64", "shape": [4]}],
      "params": [{"name": "lin.weight", "dtype": "float16", "shape": ["N"]}],
      "outputs": [{"name": "out0", "dtype": "float32", "shape": ["B", "cdiv(N, 2) * 2"]}],
      "variants": [{"name": "small", "symbols": {"N": 7}}],
      "cost": {"flops": "numel(x)", "bytes": "4 * (numel(x) + numel(out0))"},
      "artifacts": {"packages": {"default": {"cpu": "ref.default.cpu.pt2", "cuda": "ref.default.cuda.pt2"}},
                    "params": "params.safetensors",
                    "golden": {"seed": 3, "variant": "default", "file": "golden.safetensors"}}
    })J");
  }

  fs::path root_;
};

TEST_F(TaskTreeTest, LoadsAGoodTask) {
  fs::path dir = Write("core/scale", Good().dump(2));
  StatusOr<Task> task = LoadTask(dir);
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_EQ(task->id, "core/scale");
  EXPECT_EQ(task->level, 1);
  EXPECT_EQ(task->tags, std::vector<std::string>{"elementwise"});
  EXPECT_EQ(task->reference, dir / "reference.py");
  EXPECT_EQ(task->constants.at("alpha"), 0.5);
  ASSERT_EQ(task->inputs.size(), 2u);
  EXPECT_EQ(task->inputs[0].init.dist, InitSpec::Dist::kUniform);
  EXPECT_EQ(task->inputs[0].init.low, -2);
  EXPECT_EQ(task->inputs[1].dtype, DType::kInt64);
  EXPECT_EQ(task->inputs[1].init.dist, InitSpec::Dist::kRandint);  // default for integers
  EXPECT_EQ(task->inputs[1].shape, std::vector<std::string>{"4"});
  EXPECT_EQ(task->params[0].name, "lin.weight");
  ASSERT_EQ(task->variants.size(), 2u);
  EXPECT_EQ(task->variants[0].name, "default");
  EXPECT_EQ(task->variants[1].symbols.at("N"), 7);
  EXPECT_EQ(task->variants[1].symbols.at("B"), 2);  // inherited
  EXPECT_EQ(task->variants[0].kind, VariantKind::kDeclared);
  EXPECT_EQ(task->variants[1].kind, VariantKind::kDeclared);  // no kind: the task's own sizes
  EXPECT_DOUBLE_EQ(task->tolerance.atol, 1e-4);     // fp32 output default
  EXPECT_FALSE(task->tolerance_explicit);
  EXPECT_EQ(task->artifacts.packages.at("default").at("cuda"), dir / "ref.default.cuda.pt2");
  EXPECT_EQ(task->artifacts.golden->seed, 3u);
  EXPECT_EQ(*task->artifacts.params, dir / "params.safetensors");

  auto small = ResolveShape(task->outputs[0], task->variants[1].symbols);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(*small, (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(task->cost_derived, "");  // hand-written
  auto flops = EvalCost(*task, task->cost_bytes, "small");
  ASSERT_TRUE(flops.ok()) << flops.status().ToString();
  EXPECT_EQ(*flops, 4 * (2 * 7 + 2 * 8));
  auto shapes = ResolveShapes(*task, "default");
  ASSERT_TRUE(shapes.ok());
  EXPECT_EQ(shapes->at("lin.weight"), std::vector<int64_t>{1024});
  EXPECT_FALSE(ResolveShapes(*task, "huge").ok());
}

// The import's `small` variant is derived: it probes generality and decides no verdict.
TEST_F(TaskTreeTest, LoadsAVariantsKind) {
  json j = Good();
  j["variants"][0]["kind"] = "derived";
  StatusOr<Task> task = LoadTask(Write("core/scale", j.dump(2)));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_EQ(task->variants[1].kind, VariantKind::kDerived);
  j["variants"][0]["kind"] = "declared";
  task = LoadTask(Write("core/scale", j.dump(2)));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_EQ(task->variants[1].kind, VariantKind::kDeclared);
}

TEST_F(TaskTreeTest, LoadsTheLicence) {
  StatusOr<Task> without = LoadTask(Write("core/scale", Good().dump(2)));
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  EXPECT_EQ(without->license, "") << "task.json files written before the field still load";
  for (const char* license : {"MIT", "Apache-2.0", "MIT OR Apache-2.0"}) {
    json doc = Good();
    doc["license"] = license;
    StatusOr<Task> task = LoadTask(Write("core/scale", doc.dump(2)));
    ASSERT_TRUE(task.ok()) << task.status().ToString();
    EXPECT_EQ(task->license, license);
  }
}

TEST_F(TaskTreeTest, LoadsADerivedCost) {
  json doc = Good();
  doc["cost"] = {{"flops", "B * N"}, {"bytes", "8 * B * N + 2 * N"}, {"derived", "torch-flop-counter/1"}};
  StatusOr<Task> task = LoadTask(Write("core/scale", doc.dump(2)));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_EQ(task->cost_derived, "torch-flop-counter/1");
  auto bytes = EvalCost(*task, task->cost_bytes, "small");
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, 8 * 2 * 7 + 2 * 7);
}

TEST_F(TaskTreeTest, ToleranceDefaultsFollowTheLoosestOutput) {
  json j = Good();
  j["outputs"].push_back({{"name", "out1"}, {"dtype", "bfloat16"}, {"shape", {1}}});
  StatusOr<Task> task = LoadTask(Write("core/scale", j.dump()));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_DOUBLE_EQ(task->tolerance.atol, 1e-2);
  j["tolerance"] = {{"atol", 0.5}};
  task = LoadTask(Write("core/scale", j.dump()));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_DOUBLE_EQ(task->tolerance.atol, 0.5);
  EXPECT_DOUBLE_EQ(task->tolerance.rtol, 1e-4);  // from outputs[0], float32
  EXPECT_TRUE(task->tolerance_explicit);
}

json IllConditioned() {
  return {{"float64_rel_l2", 0.7963},
          {"float64_mismatches", 2000},
          {"numel", 2000},
          {"rel_l2_bound", 1e-3},
          {"ill_conditioned", true}};
}

TEST_F(TaskTreeTest, LoadsConditioning) {
  StatusOr<Task> task = LoadTask(Write("core/scale", Good().dump()));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_FALSE(task->conditioning.has_value());

  json j = Good();
  j["conditioning"] = IllConditioned();
  task = LoadTask(Write("core/scale", j.dump()));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  ASSERT_TRUE(task->conditioning.has_value());
  EXPECT_DOUBLE_EQ(task->conditioning->float64_rel_l2.value(), 0.7963);
  EXPECT_EQ(task->conditioning->float64_mismatches, 2000);
  EXPECT_EQ(task->conditioning->numel, 2000);
  EXPECT_DOUBLE_EQ(task->conditioning->rel_l2_bound, 1e-3);
  EXPECT_TRUE(task->conditioning->ill_conditioned);

  j["conditioning"]["float64_rel_l2"] = "inf";  // a float32 overflow the float64 run does not have
  task = LoadTask(Write("core/scale", j.dump()));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_TRUE(std::isinf(task->conditioning->float64_rel_l2.value()));

  j["conditioning"]["float64_rel_l2"] = nullptr;  // every output zero within atol
  j["conditioning"]["ill_conditioned"] = false;
  task = LoadTask(Write("core/scale", j.dump()));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_FALSE(task->conditioning->float64_rel_l2.has_value());
  EXPECT_FALSE(task->conditioning->ill_conditioned);
}

TEST_F(TaskTreeTest, LoadsWhatTheImportMeasured) {
  json j = Good();
  j["conditioning"] = IllConditioned();
  j["conditioning"]["ill_conditioned"] = false;
  j["conditioning"]["variant"] = "small";
  j["conditioning"]["outputs"] = {{"out0", {{"float64_rel_l2", nullptr}, {"noise", true}}}};
  j["behaviour"] = {{"variant", "small"}, {"outputs", {{"out0", "zero"}}}, {"rerun_mismatches", 0},
                    {"degenerate", true}, {"nondeterministic", false}};
  j["domains"] = {{{"name", "signed"},
                   {"inputs", {{"x", {{"dist", "uniform"}, {"low", -1.5}, {"high", 2.5}}}}},
                   {"float64_rel_l2", 0.0},
                   {"float64_mismatches", 0}}};
  StatusOr<Task> task = LoadTask(Write("core/scale", j.dump()));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_EQ(task->conditioning->variant, "small");
  EXPECT_TRUE(task->NoiseOutput("out0"));
  EXPECT_FALSE(task->NoiseOutput("out1"));
  ASSERT_TRUE(task->behaviour.has_value());
  EXPECT_EQ(task->behaviour->outputs.at("out0"), OutputDependence::kZero);
  EXPECT_TRUE(task->Unjudgeable());
  EXPECT_EQ(task->UnjudgeableReason(), "degenerate");
  ASSERT_EQ(task->domains.size(), 1u);
  EXPECT_EQ(task->domains[0].name, "signed");
  const InitSpec& init = task->domains[0].inputs.at("x");
  EXPECT_EQ(init.dist, InitSpec::Dist::kUniform);
  EXPECT_DOUBLE_EQ(init.low, -1.5);
  EXPECT_DOUBLE_EQ(init.high, 2.5);

  j["behaviour"]["degenerate"] = false;
  j["behaviour"]["nondeterministic"] = true;
  task = LoadTask(Write("core/scale", j.dump()));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_EQ(task->UnjudgeableReason(), "nondeterministic");
  j["behaviour"]["nondeterministic"] = false;
  task = LoadTask(Write("core/scale", j.dump()));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_FALSE(task->Unjudgeable());
}

TEST_F(TaskTreeTest, LoadsAnInputsFactor) {
  json j = Good();
  j["inputs"][0]["init"] = {{"dist", "rand"}, {"factor", {{"low", 0}, {"high", 0.5}}}};
  StatusOr<Task> task = LoadTask(Write("core/scale", j.dump()));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  ASSERT_TRUE(task->inputs[0].init.factor.has_value());
  EXPECT_EQ(task->inputs[0].init.factor->low, 0);
  EXPECT_EQ(task->inputs[0].init.factor->high, 0.5);
  EXPECT_FALSE(task->inputs[1].init.factor.has_value());
}

TEST_F(TaskTreeTest, LoadsAnInputsStructure) {
  json j = Good();
  j["inputs"][0]["structure"] = "lower";
  StatusOr<Task> task = LoadTask(Write("core/scale", j.dump()));
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_EQ(task->inputs[0].structure, Structure::kLower);
  EXPECT_EQ(task->inputs[1].structure, Structure::kNone);
}

struct BadCase {
  const char* label;
  std::function<void(json&)> mutate;
  const char* error;  // expected substring, after "<file>: "
};

TEST_F(TaskTreeTest, RejectsBadTasks) {
  const BadCase cases[] = {
      {"bad dtype", [](json& j) { j["inputs"][0]["dtype"] = "float33"; },
       "inputs[0].dtype: unknown dtype \"float33\""},
      {"unknown top field", [](json& j) { j["inptus"] = json::array(); }, "inptus: unknown field"},
      {"unknown tensor field", [](json& j) { j["outputs"][0]["dtyp"] = "x"; },
       "outputs[0].dtyp: unknown field"},
      {"unknown init field", [](json& j) { j["inputs"][0]["init"]["mean"] = 1; },
       "inputs[0].init.mean: unknown field"},
      {"bad expression", [](json& j) { j["inputs"][0]["shape"][1] = "N +* 2"; }, "inputs[0].shape[1]: "},
      {"unknown symbol", [](json& j) { j["inputs"][0]["shape"][1] = "M"; }, "inputs[0].shape: "},
      {"negative variant dim", [](json& j) { j["variants"][0]["symbols"]["N"] = -3; },
       "inputs[0].shape (variant \"small\")"},
      {"variant unknown symbol", [](json& j) { j["variants"][0]["symbols"]["Q"] = 3; },
       "variants[0].symbols.Q"},
      {"variant named default", [](json& j) { j["variants"][0]["name"] = "default"; }, "duplicate variant"},
      {"variant kind", [](json& j) { j["variants"][0]["kind"] = "probe"; },
       "variants[0].kind: \"probe\" is not \"declared\" or \"derived\""},
      {"schema major", [](json& j) { j["schema"] = "kforge.task/2"; }, "schema: unsupported version"},
      {"schema kind", [](json& j) { j["schema"] = "kforge.solution/1"; }, "schema: expected"},
      {"missing id", [](json& j) { j.erase("id"); }, "missing field \"id\""},
      {"id mismatch", [](json& j) { j["id"] = "core/other"; }, "id: \"core/other\" does not match"},
      {"level type", [](json& j) { j["level"] = "one"; }, "level: expected an integer"},
      {"fraction dim", [](json& j) { j["inputs"][1]["shape"][0] = 1.5; },
       "inputs[1].shape[0]: expected an integer or"},
      {"tag type", [](json& j) { j["tags"][0] = 3; }, "tags[0]: expected a string"},
      {"licence type", [](json& j) { j["license"] = 1; }, "license: expected a string"},
      {"empty licence", [](json& j) { j["license"] = ""; }, "license: expected an SPDX licence id"},
      {"licence with a newline", [](json& j) { j["license"] = "MIT\nx"; }, "license: expected an SPDX licence id"},
      {"output names", [](json& j) { j["outputs"][0]["name"] = "y"; },
       "outputs[0].name: outputs are named out0"},
      {"duplicate name", [](json& j) { j["params"][0]["name"] = "x"; },
       "params[0].name: duplicate tensor name"},
      {"randint fraction",
       [](json& j) {
         j["inputs"][1]["init"] = {{"dist", "randint"}, {"low", 0}, {"high", 2.5}};
       },
       "inputs[1].init.high: expected an integer"},
      {"bad dist",
       [](json& j) {
         j["inputs"][0]["init"] = {{"dist", "normal"}};
       },
       "unknown distribution \"normal\""},
      {"low above high", [](json& j) { j["inputs"][0]["init"]["low"] = 3; },
       "\"low\" must be below \"high\""},
      {"factor without high", [](json& j) { j["inputs"][0]["init"]["factor"] = {{"low", 0}}; },
       "inputs[0].init.factor: missing field \"high\""},
      {"empty factor", [](json& j) { j["inputs"][0]["init"]["factor"] = {{"low", 1}, {"high", 1}}; },
       "inputs[0].init.factor: \"low\" and \"high\" must be finite, \"low\" below \"high\""},
      {"factor field", [](json& j) { j["inputs"][0]["init"]["factor"] = {{"low", 0}, {"high", 1}, {"dist", "rand"}}; },
       "inputs[0].init.factor.dist: unknown field"},
      {"unknown structure", [](json& j) { j["inputs"][0]["structure"] = "diagonal"; },
       "inputs[0].structure: \"diagonal\" is not lower, upper or symmetric"},
      {"structure of an integer input", [](json& j) { j["inputs"][1]["structure"] = "lower"; },
       "inputs[1].structure: only floating inputs have a structure"},
      {"structure of an output", [](json& j) { j["outputs"][0]["structure"] = "upper"; },
       "outputs[0].structure: only inputs have a structure"},
      {"structure of a vector",
       [](json& j) {
         j["inputs"][0]["shape"] = {"N"};
         j["inputs"][0]["structure"] = "symmetric";
       },
       "inputs[0].structure: a structure needs a matrix: two dimensions or more"},
      {"tolerance negative",
       [](json& j) {
         j["tolerance"] = {{"atol", -1}};
       },
       "tolerance.atol: must be"},
      {"cost unknown tensor", [](json& j) { j["cost"]["flops"] = "numel(z)"; }, "cost.flops: "},
      {"cost derived empty", [](json& j) { j["cost"]["derived"] = ""; }, "cost.derived: expected the counter"},
      {"cost derived number", [](json& j) { j["cost"]["derived"] = 1; }, "cost.derived: "},
      {"artifact escape", [](json& j) { j["artifacts"]["params"] = "../x.safetensors"; },
       "artifacts.params: path leaves"},
      {"artifact device", [](json& j) { j["artifacts"]["packages"]["default"]["tpu"] = "x"; },
       "artifacts.packages.default.tpu: unknown field"},
      {"artifact variant",
       [](json& j) {
         j["artifacts"]["packages"]["large"] = {{"cpu", "x.pt2"}};
       },
       "artifacts.packages.large: no such variant"},
      {"no outputs", [](json& j) { j["outputs"] = json::array(); },
       "outputs: a task has at least one output"},
      {"constant type", [](json& j) { j["constants"]["alpha"] = "x"; }, "constants.alpha: expected a number"},
      {"conditioning type", [](json& j) { j["conditioning"] = true; }, "conditioning: expected an object"},
      {"conditioning missing field",
       [](json& j) {
         j["conditioning"] = IllConditioned();
         j["conditioning"].erase("numel");
       },
       "conditioning: missing field \"numel\""},
      {"conditioning unknown field",
       [](json& j) {
         j["conditioning"] = IllConditioned();
         j["conditioning"]["float32_rel_l2"] = 0;
       },
       "conditioning.float32_rel_l2: unknown field"},
      {"conditioning flag type",
       [](json& j) {
         j["conditioning"] = IllConditioned();
         j["conditioning"]["ill_conditioned"] = "yes";
       },
       "conditioning.ill_conditioned: expected true or false"},
      {"conditioning negative error",
       [](json& j) {
         j["conditioning"] = IllConditioned();
         j["conditioning"]["float64_rel_l2"] = -0.5;
       },
       "conditioning.float64_rel_l2: must be a number >= 0"},
      {"conditioning error string",
       [](json& j) {
         j["conditioning"] = IllConditioned();
         j["conditioning"]["float64_rel_l2"] = "large";
       },
       "conditioning.float64_rel_l2: expected a number"},
      {"conditioning mismatches",
       [](json& j) {
         j["conditioning"] = IllConditioned();
         j["conditioning"]["float64_mismatches"] = 2001;
       },
       "conditioning.float64_mismatches: more than numel"},
      {"conditioning bound",
       [](json& j) {
         j["conditioning"] = IllConditioned();
         j["conditioning"]["rel_l2_bound"] = 0;
       },
       "conditioning.rel_l2_bound: must be a finite number > 0"},
      {"conditioning output name",
       [](json& j) {
         j["conditioning"] = IllConditioned();
         j["conditioning"]["outputs"] = {{"out7", {{"noise", true}}}};
       },
       "conditioning.outputs.out7: not an output of the task"},
      {"conditioning variant",
       [](json& j) {
         j["conditioning"] = IllConditioned();
         j["conditioning"]["variant"] = "tiny";
       },
       "conditioning.variant: no such variant \"tiny\""},
      {"behaviour kind",
       [](json& j) {
         j["behaviour"] = {{"variant", "default"}, {"outputs", {{"out0", "flat"}}}, {"rerun_mismatches", 0},
                           {"degenerate", false}, {"nondeterministic", false}};
       },
       "behaviour.outputs.out0: expected \"varies\", \"constant\" or \"zero\""},
      {"behaviour missing flag",
       [](json& j) { j["behaviour"] = {{"variant", "default"}, {"outputs", json::object()}, {"rerun_mismatches", 0},
                                       {"degenerate", false}}; },
       "behaviour: missing field \"nondeterministic\""},
      {"domain input", [](json& j) { j["domains"] = {{{"name", "signed"}, {"inputs", {{"y", {{"dist", "rand"}}}}}}}; },
       "domains[0].inputs.y: not an input of the task"},
      {"domain init", [](json& j) { j["domains"] = {{{"name", "signed"}, {"inputs", {{"x", {{"dist", "normal"}}}}}}}; },
       "domains[0].inputs.x.dist: unknown distribution"},
  };
  for (const BadCase& c : cases) {
    json j = Good();
    c.mutate(j);
    fs::path dir = Write("core/scale", j.dump(2));
    StatusOr<Task> task = LoadTask(dir);
    ASSERT_FALSE(task.ok()) << c.label;
    const std::string& msg = task.status().message();
    EXPECT_EQ(msg.rfind((dir / "task.json").string() + ": ", 0), 0u) << c.label << ": " << msg;
    EXPECT_NE(msg.find(c.error), std::string::npos) << c.label << ": " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << c.label;
  }
}

TEST_F(TaskTreeTest, MalformedJsonNamesLineAndColumn) {
  fs::path dir = Write("core/scale", "{\n  \"schema\": \"kforge.task/1\",\n  \"id\": oops\n}\n");
  StatusOr<Task> task = LoadTask(dir);
  ASSERT_FALSE(task.ok());
  EXPECT_EQ(task.status().code(), Status::Code::kParseError);
  EXPECT_NE(task.status().message().find("task.json: line 3, column"), std::string::npos)
      << task.status().message();
}

TEST_F(TaskTreeTest, MissingReferenceFile) {
  fs::path dir = Write("core/scale", Good().dump(), /*with_reference=*/false);
  StatusOr<Task> task = LoadTask(dir);
  ASSERT_FALSE(task.ok());
  EXPECT_NE(task.status().message().find("reference: missing reference file"), std::string::npos)
      << task.status().message();
}

TEST_F(TaskTreeTest, TreeFindsEveryTaskAndChecksIds) {
  Write("core/scale", Good("core/scale").dump());
  Write("suite/deep/b", Good("suite/deep/b").dump());
  fs::create_directories(root_ / "empty/folder");
  StatusOr<std::vector<Task>> tasks = LoadTaskTree(root_);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[0].id, "core/scale");
  EXPECT_EQ((*tasks)[1].id, "suite/deep/b");

  StatusOr<Task> found = FindTask(root_, "suite/deep/b");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->dir, root_ / "suite/deep/b");
  EXPECT_EQ(FindTask(root_, "suite/none").status().code(), Status::Code::kNotFound);
  EXPECT_FALSE(FindTask(root_, "../x").ok());

  // Same trailing components, wrong prefix: LoadTask accepts "deep/b", the tree does not.
  Write("other/deep/b", Good("deep/b").dump());
  EXPECT_TRUE(LoadTask(root_ / "other/deep/b").ok());
  StatusOr<std::vector<Task>> bad = LoadTaskTree(root_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("does not match its folder \"other/deep/b\""), std::string::npos)
      << bad.status().message();
}

// One grammar for ids everywhere (scripts/kforge_tasks/schema.py has the same): nothing that could
// name a folder outside the task root, or an option.
TEST(TaskIdTest, Grammar) {
  for (const char* id : {"core/softmax", "kernelbench/level1/19_ReLU",
                         "kernelbench/level1/1_Square_matrix_.x-y", "a/b/c/d/e/f/g/h", "_/9"}) {
    EXPECT_TRUE(CheckTaskId(id).ok()) << id;
  }
  for (const char* id : {"", "b", "../../victim", "core/..", "core/.", "core/../x", "/abs/x", "core//x",
                         "core/x/", "/core/x", "core/.hidden", "core/-x", "core/a b", "core/x\\y",
                         "a/b/c/d/e/f/g/h/i", "kernelbench/level1/.", "core/\xc3\xa9"}) {
    Status s = CheckTaskId(id);
    EXPECT_FALSE(s.ok()) << id;
    EXPECT_EQ(s.message().find('\n'), std::string::npos);
  }
  EXPECT_FALSE(CheckTaskId("core/" + std::string(129, 'a')).ok());
  EXPECT_NE(CheckTaskId("core/" + std::string(129, 'a')).message().find("segments of 1 to 128 letters"),
            std::string::npos)
      << "the error names the length limit";
  EXPECT_TRUE(CheckTaskId("core/" + std::string(128, 'a')).ok());
}

TEST_F(TaskTreeTest, MalformedIdsAreRefusedEverywhere) {
  Write("core/scale", Good("../../victim").dump());
  StatusOr<Task> loaded = LoadTask(root_ / "core/scale");
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("task.json: id: malformed task id \"../../victim\""),
            std::string::npos)
      << loaded.status().message();
  for (const char* id : {"../core/scale", "core/../core/scale", "/core/scale", "core//scale"}) {
    StatusOr<Task> found = FindTask(root_, id);
    ASSERT_FALSE(found.ok()) << id;
    EXPECT_EQ(found.status().code(), Status::Code::kInvalidArgument) << id;
  }
}

// Inputs that used to abort `tasks list` or a whole verify batch, or gave an error without the file.
TEST_F(TaskTreeTest, HostileTaskJsonGetsOneLineNamingTheFile) {
  std::string good = Good().dump(1);
  auto with = [&good](const std::string& from, const std::string& to) {
    std::string s = good;
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  struct Case {
    std::string text;
    std::string error;
  } cases[] = {
      {with("\"alpha\": 0.5", "\"alpha\": 1e400"), "number out of range"},
      {with("\"N\": 1024", "\"N\": 1024, \"N\": 7"), "symbols.N: duplicate key"},
      {with("\"flops\": \"numel(x)\"", "\"flops\": \"cdiv(-9223372036854775807-1, -1)\""),
       "cost.flops: in \"cdiv(-9223372036854775807-1, -1)\" at 33: integer overflow"},
      {with("\"cdiv(N, 2) * 2\"", "\"cdiv(N, 2) *\\n $\""),
       "outputs[0].shape[1]: in \"cdiv(N, 2) *\\n $\" at 15"},
      {with("\"float32\"", "\"" + std::string(5000, 'f') + "\""), "unknown dtype \"fffff"},
      {"\xEF\xBB\xBF" + with("\"N\": 1024", "\"N\": 1024, \"N\": 7"), "duplicate key"},
      {std::string(20 << 20, ' '), "larger than 16 MiB"},
  };
  for (const Case& c : cases) {
    fs::path dir = Write("core/scale", c.text);
    StatusOr<Task> task = LoadTask(dir);
    ASSERT_FALSE(task.ok()) << c.error;
    const std::string& m = task.status().message();
    EXPECT_EQ(m.rfind((dir / "task.json").string() + ": ", 0), 0u) << m;
    EXPECT_NE(m.find(c.error), std::string::npos) << "got: " << m.substr(0, 300) << "\nwant: " << c.error;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_LE(m.size(), (dir / "task.json").string().size() + 200) << m;
  }
  // A byte order mark alone is fine.
  fs::path dir = Write("core/scale", "\xEF\xBB\xBF" + good);
  EXPECT_TRUE(LoadTask(dir).ok()) << LoadTask(dir).status().ToString();
}

TEST(ResolveShapeTest, Table) {
  struct Case {
    std::vector<std::string> shape;
    std::vector<int64_t> want;  // empty with ok=false means an error
    bool ok;
  };
  const std::map<std::string, int64_t> symbols = {{"N", 10}, {"B", 3}};
  const Case cases[] = {
      {{"N", "B"}, {10, 3}, true},
      {{"cdiv(N, 4)", "max(B, 8)"}, {3, 8}, true},
      {{}, {}, true},
      {{"N - 11"}, {}, false},
      {{"K"}, {}, false},
      {{"N / 0"}, {}, false},
  };
  for (const Case& c : cases) {
    TensorSpec spec;
    spec.shape = c.shape;
    auto got = ResolveShape(spec, symbols);
    ASSERT_EQ(got.ok(), c.ok) << testing::PrintToString(c.shape);
    if (c.ok) {
      EXPECT_EQ(*got, c.want);
    }
  }
}

}  // namespace
}  // namespace kforge::common
