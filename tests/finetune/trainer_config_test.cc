// Trainer configurations: kforge's TRL and axolotl settings, --config overrides, and the YAML
// writer, read back by PyYAML and (where axolotl is installed) validated by axolotl itself.
#include "finetune/trainer_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fakes/command.h"
#include "fakes/task_root.h"
#include "kforge/common/python.h"
#include "kforge/finetune/run.h"

namespace kforge::finetune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Python() { return common::FindPython(); }

LaunchOptions Options(Backend backend) {
  LaunchOptions o;
  o.data = "/data/train.jsonl";
  o.model = "/models/tiny";
  o.backend = backend;
  o.out = "/runs/a";
  return o;
}

DatasetStats Stats(DatasetFormat format, int64_t records_with_tools = 1) {
  DatasetStats stats;
  stats.format = format;
  stats.records = 3;
  stats.records_with_tools = records_with_tools;
  stats.max_chars = 350;
  return stats;
}

class TrainerConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_trainer_config_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  fs::path dir_;
};

TEST_F(TrainerConfigTest, TrlDefaultsForCodeSft) {
  LaunchOptions o = Options(Backend::kTrl);
  json messages = TrlConfig(o, Stats(DatasetFormat::kMessages));
  EXPECT_EQ(messages["assistant_only_loss"], true);
  EXPECT_FALSE(messages.contains("completion_only_loss"));
  EXPECT_EQ(messages["max_length"], 512);
  EXPECT_EQ(messages["learning_rate"], 2e-5);
  EXPECT_EQ(messages["output_dir"], "/runs/a/checkpoints");
  EXPECT_EQ(messages["per_device_train_batch_size"], 1);
  EXPECT_EQ(messages["gradient_accumulation_steps"], 8);
  EXPECT_FALSE(messages.contains("max_steps"));
  EXPECT_FALSE(messages.contains("use_peft"));

  json pairs = TrlConfig(o, Stats(DatasetFormat::kPromptCompletion));
  EXPECT_EQ(pairs["completion_only_loss"], true);
  EXPECT_FALSE(pairs.contains("assistant_only_loss"));

  o.training.lora = true;
  o.training.max_steps = 30;
  o.training.max_seq_len = 4096;
  json lora = TrlConfig(o, Stats(DatasetFormat::kMessages));
  EXPECT_EQ(lora["use_peft"], true);
  EXPECT_EQ(lora["lora_r"], 16);
  EXPECT_EQ(lora["lora_target_modules"], "all-linear");
  EXPECT_EQ(lora["learning_rate"], 2e-4);
  EXPECT_EQ(lora["max_steps"], 30);
  EXPECT_EQ(lora["max_length"], 4096);
}

TEST_F(TrainerConfigTest, OverridesMergeReplaceAndRemove) {
  LaunchOptions o = Options(Backend::kTrl);
  o.overrides = {
      {"logging_steps", 1}, {"report_to", nullptr}, {"model_init_kwargs", {{"dtype", "bfloat16"}}}};
  json config = TrlConfig(o, Stats(DatasetFormat::kMessages));
  EXPECT_EQ(config["logging_steps"], 1);
  EXPECT_FALSE(config.contains("report_to"));
  EXPECT_EQ(config["model_init_kwargs"]["dtype"], "bfloat16");

  json merged = MergeOverrides({{"a", {{"x", 1}, {"y", 2}}}, {"b", 1}}, {{"a", {{"y", nullptr}, {"z", 3}}}});
  EXPECT_EQ(merged, (json{{"a", {{"x", 1}, {"z", 3}}}, {"b", 1}}));
}

TEST_F(TrainerConfigTest, AxolotlTrainsOnAssistantTurnsWithTheModelsTemplate) {
  LaunchOptions o = Options(Backend::kAxolotl);
  o.training.lora = true;
  o.training.max_steps = 5;
  json config = AxolotlConfig(o, Stats(DatasetFormat::kMessages));
  EXPECT_EQ(config["base_model"], "/models/tiny");
  EXPECT_EQ(config["chat_template"], "tokenizer_default");
  ASSERT_EQ(config["datasets"].size(), 1u);
  const json& dataset = config["datasets"][0];
  EXPECT_EQ(dataset["path"], "/data/train.jsonl");
  EXPECT_EQ(dataset["type"], "chat_template");
  EXPECT_EQ(dataset["field_messages"], "messages");
  EXPECT_EQ(dataset["field_tools"], "tools");
  EXPECT_EQ(dataset["roles_to_train"], json::array({"assistant"}));
  EXPECT_EQ(config["adapter"], "lora");
  EXPECT_EQ(config["lora_target_linear"], true);
  EXPECT_EQ(config["sequence_len"], 512);
  EXPECT_EQ(config["max_steps"], 5);
  EXPECT_EQ(config["output_dir"], "/runs/a/model");
  EXPECT_FALSE(
      AxolotlConfig(Options(Backend::kAxolotl), Stats(DatasetFormat::kMessages, 0))["datasets"][0].contains(
          "field_tools"));
}

TEST_F(TrainerConfigTest, AxolotlPacksWithAnAttentionBackendThatKeepsSamplesApart) {
  LaunchOptions o = Options(Backend::kAxolotl);
  EXPECT_FALSE(AxolotlConfig(o, Stats(DatasetFormat::kMessages)).contains("sdp_attention"));
  o.training.packing = true;
  json config = AxolotlConfig(o, Stats(DatasetFormat::kMessages));
  EXPECT_EQ(config["sample_packing"], true);
  EXPECT_EQ(config["sdp_attention"], true) << "packed samples would attend to each other";
  o.overrides = {{"flash_attention", true}, {"sdp_attention", nullptr}};
  config = AxolotlConfig(o, Stats(DatasetFormat::kMessages));
  EXPECT_EQ(config["flash_attention"], true);
  EXPECT_FALSE(config.contains("sdp_attention"));
}

TEST_F(TrainerConfigTest, YamlScalars) {
  const struct {
    json value;
    std::string yaml;
  } cases[] = {
      {2e-5, "2.0e-05\n"},
      {1e20, "1.0e+20\n"},
      {0.03, "0.03\n"},
      {2.0, "2.0\n"},
      {7, "7\n"},
      {true, "true\n"},
      {nullptr, "null\n"},
      {"yes", "\"yes\"\n"},
      {"a: b", "\"a: b\"\n"},
      {json::object(), "{}\n"},
      {json::array(), "[]\n"},
  };
  for (const auto& c : cases) EXPECT_EQ(ToYaml(c.value), c.yaml) << c.value.dump();
  EXPECT_EQ(ToYaml({{"list", {1, {{"k", "v"}, {"n", {{"deep", 1}}}}}}, {"odd key", 1}}),
            "list:\n  - 1\n  - k: \"v\"\n    n:\n      deep: 1\n\"odd key\": 1\n");
}

TEST_F(TrainerConfigTest, PyYamlReadsTheYamlBackAsTheSameValue) {
  LaunchOptions o = Options(Backend::kAxolotl);
  o.training.lora = true;
  o.overrides = {
      {"special_tokens", {{"pad_token", "<|endoftext|>"}}},
      {"weird", {"quote\" and \\ backslash", "new\nline", "no", "1e5", "~", "# not a comment", 1e-7}}};
  const json config = AxolotlConfig(o, Stats(DatasetFormat::kMessages));
  const fs::path yaml = Write("config.yaml", ToYaml(config));
  fakes::CommandResult read = fakes::RunCommand(
      fakes::ShellQuote(Python()) +
      " -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' " +
      fakes::ShellQuote(yaml.string()));
  ASSERT_EQ(read.exit_code, 0) << Python()
                               << " could not read the YAML back: is PyYAML installed (scripts/setup.sh)?";
  EXPECT_EQ(json::parse(read.out), config);
}

// axolotl's own validation of the rendered config. axolotl pins its own transformers and trl, so
// it usually lives in a separate environment: KFORGE_AXOLOTL_PYTHON names its Python.
TEST_F(TrainerConfigTest, AxolotlValidatesTheRenderedConfig) {
  const char* env = std::getenv("KFORGE_AXOLOTL_PYTHON");
  const std::string python = env && *env ? env : Python();
  if (fakes::RunCommand(fakes::ShellQuote(python) + " -c 'import axolotl' 2>/dev/null").exit_code != 0)
    GTEST_SKIP() << "axolotl is not installed in " << python
                 << " (pip install axolotl into a venv and set KFORGE_AXOLOTL_PYTHON to its python)";
  const fs::path check =
      Write("validate.py",
            "import sys, yaml\n"
            "from axolotl.utils.dict import DictDefault\n"
            "from axolotl.utils.config import validate_config\n"
            "config = validate_config(DictDefault(yaml.safe_load(open(sys.argv[1]))))\n"
            "print(config['sequence_len'], config['adapter'], config['datasets'][0]['type'])\n");
  auto validate = [&](const json& config) {
    const fs::path yaml = Write("axolotl.yaml", ToYaml(config));
    return fakes::RunCommand("AXOLOTL_DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 " + fakes::ShellQuote(python) + " " +
                             check.string() + " " + yaml.string() + " 2>&1");
  };
  LaunchOptions o = Options(Backend::kAxolotl);
  o.training.lora = true;
  json config = AxolotlConfig(o, Stats(DatasetFormat::kMessages));
  fakes::CommandResult ok = validate(config);
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("512 lora chat_template"), std::string::npos) << ok.out;

  config["datasets"][0]["train_on_eos"] = "sometimes";  // the check must be able to fail
  fakes::CommandResult bad = validate(config);
  EXPECT_NE(bad.exit_code, 0) << bad.out;
  EXPECT_NE(bad.out.find("train_on_eos"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace kforge::finetune
