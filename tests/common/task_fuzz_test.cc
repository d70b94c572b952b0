// Fuzzes task.json loading: every mutant of the bundled task files either loads (and then every
// variant's shapes and costs evaluate without a signal, as `tasks list` and `tasks show` do) or is
// rejected with one line that names the file. Seeds: tasks/ and tests/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "fakes/fuzz.h"
#include "kforge/common/task.h"

namespace kforge::common {
namespace {

namespace fs = std::filesystem;

// Replaces a shape entry, a cost formula or a symbol's value of a task.json with a random
// expression or an extreme integer.
std::string MutateTask(const std::string& parent, std::mt19937_64& rng) {
  nlohmann::json j = nlohmann::json::parse(parent, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return parent;
  std::vector<std::string> symbols;
  if (j.contains("symbols") && j["symbols"].is_object())
    for (auto it = j["symbols"].begin(); it != j["symbols"].end(); ++it) symbols.push_back(it.key());
  std::vector<nlohmann::json*> exprs, ints;
  for (const char* list : {"inputs", "params", "outputs"})
    if (j.contains(list) && j[list].is_array())
      for (nlohmann::json& t : j[list])
        if (t.is_object() && t.contains("shape") && t["shape"].is_array())
          for (nlohmann::json& d : t["shape"]) exprs.push_back(&d);
  if (j.contains("cost") && j["cost"].is_object())
    for (auto& [key, value] : j["cost"].items()) exprs.push_back(&value);
  if (j.contains("symbols") && j["symbols"].is_object())
    for (auto& [key, value] : j["symbols"].items()) ints.push_back(&value);
  if (j.contains("variants") && j["variants"].is_array())
    for (nlohmann::json& v : j["variants"])
      if (v.is_object() && v.contains("symbols") && v["symbols"].is_object())
        for (auto& [key, value] : v["symbols"].items()) ints.push_back(&value);
  static const int64_t kInts[] = {0, 1, -1, 3, INT64_MAX, INT64_MIN, int64_t{1} << 32, int64_t{1} << 62};
  if (!ints.empty() && (exprs.empty() || rng() % 3 == 0)) {
    *ints[rng() % ints.size()] = kInts[rng() % (sizeof kInts / sizeof *kInts)];
  } else if (!exprs.empty()) {
    std::vector<std::string> tensors = {"x", "out0"};
    *exprs[rng() % exprs.size()] = fakes::RandomExpression(rng, symbols, tensors, 3);
  }
  return j.dump(1);
}

class TaskFuzzTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A memory file system where there is one: the target rewrites task.json for every input.
    std::error_code ec;
    fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
    root_ = base /
            ("kforge_task_fuzz_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // The folder for `text`: ROOT/<id> when its id is a plain relative path, so that good mutants can load.
  fs::path FolderFor(const std::string& text) {
    std::string id = "fuzz/task";
    size_t key = text.find("\"id\"");
    size_t open = key == std::string::npos ? key : text.find('"', text.find(':', key + 4) + 1);
    size_t close = open == std::string::npos ? open : text.find('"', open + 1);
    if (close != std::string::npos && close - open - 1 <= 200) {
      std::string candidate = text.substr(open + 1, close - open - 1);
      bool plain =
          candidate.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/") ==
              std::string::npos &&
          candidate.find('/') != std::string::npos && candidate.find("//") == std::string::npos &&
          candidate.front() != '/' && candidate.back() != '/';
      if (plain) id = candidate;
    }
    fs::path dir = root_ / id;
    if (!fs::exists(dir / "reference.py") && ++folders_ > 256)
      dir = root_ / "fuzz/task";  // bounds the disk used
    if (!fs::exists(dir / "reference.py")) {
      fs::create_directories(dir);
      std::ofstream(dir / "reference.py") << "import torch\n";
    }
    return dir;
  }

  fakes::FuzzOutcome Property(const std::string& text) {
    fs::path dir = FolderFor(text);
    std::ofstream(dir / "task.json", std::ios::binary | std::ios::trunc) << text;
    StatusOr<Task> task = LoadTask(dir);
    fs::remove(dir / "task.json");
    if (!task.ok()) {
      const std::string& m = task.status().message();
      std::string file = (dir / "task.json").string();
      if (m.rfind(file + ": ", 0) != 0) return {"error does not name the file: " + m.substr(0, 300), ""};
      if (m.find('\n') != std::string::npos) return {"error spans lines: " + m.substr(0, 300), ""};
      if (m.size() > file.size() + 600) return {"error of " + std::to_string(m.size()) + " bytes", ""};
      return {"", fakes::MessageLabel(m.substr(file.size()))};
    }
    std::string label = "ok";
    for (const Variant& v : task->variants) {
      StatusOr<std::map<std::string, std::vector<int64_t>>> shapes = ResolveShapes(*task, v.name);
      if (!shapes.ok()) return {"loaded, but variant " + v.name + " does not resolve", ""};
      for (const std::string* cost : {&task->cost_flops, &task->cost_bytes}) {
        if (cost->empty()) continue;
        StatusOr<int64_t> value = EvalCost(*task, *cost, v.name);
        label += value.ok() ? "+" : "-";
      }
    }
    return {"", label};
  }

  fs::path root_;
  int folders_ = 0;
};

TEST_F(TaskFuzzTest, EveryTaskJsonLoadsOrGetsOneLineNamingTheFile) {
  fakes::FuzzTarget target;
  target.name = "task.json";
  std::string source = KFORGE_SOURCE_DIR;
  for (const char* dir : {"/tasks", "/tests"})
    for (std::string& text : fakes::ReadFilesUnder(source + dir, "task.json")) target.seeds.push_back(text);
  target.dictionary = {"1e400",
                       "-1e400",
                       "18446744073709551615",
                       "-9223372036854775807-1",
                       "cdiv(",
                       "-1",
                       "0",
                       "\"N\"",
                       "\"shape\"",
                       "\"variants\"",
                       "\"cost\"",
                       "\"flops\": \"cdiv(N, -1)\"",
                       "\"symbols\"",
                       "\"id\"",
                       "\"x\": 1, \"x\": 2",
                       "\xff",
                       "\xef\xbb\xbf",
                       "../",
                       "[[[[[[[[",
                       "\"constants\": {\"k\": 1e308}",
                       "{\"name\": \"v\", \"symbols\": {\"N\": -9223372036854775807}}"};
  target.max_bytes = 1 << 16;
  target.property = [this](const std::string& text) { return Property(text); };
  target.mutate = MutateTask;
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(), fakes::FuzzSeed());
  std::printf("fuzz task.json: %s\n", report.Summary().c_str());
  RecordProperty("executions", std::to_string(report.executions));
  EXPECT_GT(report.seeds, 20u);
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
}

}  // namespace
}  // namespace kforge::common
