// The teach-and-measure loop on a CPU: a tiny randomly initialised model (made here, nothing
// downloaded) is fine-tuned by `kforge finetune-launch --backend trl --launcher local` on a repeated
// batch of tool-calling conversations; the loss must be finite and fall, the checkpoint must load
// in transformers, and the checkpoint served by scripts/eval-student.sh must answer a chat request.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/local_slurm.h"
#include "fakes/task_root.h"
#include "kforge/common/hash.h"
#include "kforge/common/python.h"
#include "kforge/finetune/run.h"

namespace {

namespace fs = std::filesystem;
using kforge::fakes::RunCommand;
using kforge::fakes::ShellQuote;
using nlohmann::json;

const fs::path kSource = KFORGE_SOURCE_DIR;

/// The Python kforge picks without --python.
std::string Python() { return kforge::common::FindPython(); }

/// Four conversations, each with a system prompt, a tool call, its result and a final answer.
std::string Conversations() {
  std::string lines;
  for (int i = 0; i < 4; ++i) {
    const std::string source =
        "extern \"C\" __global__ void relu" + std::to_string(i) +
        "(const float* x, float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; "
        "if (i < n) y[i] = x[i] > 0 ? x[i] : 0; }";
    const std::string id = "call_" + std::to_string(i);
    json record = {
        {"messages",
         {{{"role", "system"}, {"content", "You write fast CUDA kernels."}},
          {{"role", "user"}, {"content", "Write a relu kernel, number " + std::to_string(i) + "."}},
          {{"role", "assistant"},
           {"content", "Let me compile it."},
           {"tool_calls",
            {{{"id", id},
              {"type", "function"},
              {"function", {{"name", "compile"}, {"arguments", {{"source", source}}}}}}}}},
          {{"role", "tool"}, {"tool_call_id", id}, {"content", "status: ok"}},
          {{"role", "assistant"}, {"content", "```cuda\n" + source + "\n```"}}}},
        {"tools",
         {{{"type", "function"},
           {"function",
            {{"name", "compile"},
             {"description", "Compile a CUDA kernel"},
             {"parameters",
              {{"type", "object"},
               {"properties", {{"source", {{"type", "string"}}}}},
               {"required", {"source"}}}}}}}}}};
    lines += record.dump() + "\n";
  }
  return lines;
}

/// The losses of the `kforge-train` lines in a training log, in order.
std::vector<double> Losses(const fs::path& log) {
  std::ifstream in(log);
  std::vector<double> losses;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("kforge-train ", 0) != 0) continue;
    json step = json::parse(line.substr(13), nullptr, false);
    if (step.is_object() && step.contains("loss") && step["loss"].is_number()) losses.push_back(step["loss"]);
  }
  return losses;
}

/// The package versions and the tiny model, made once per build for every entry of this suite (ctest
/// runs each test in a process of its own; the checks and the model took ~6 s of CPU each time). Kept
/// under the build folder, keyed by the Python and make_tiny_model.py, and published by a rename, so
/// entries that start together never read a half-made model. Empty `error` when ready.
/// Environment of every trainer run: nothing is fetched, nothing is reported.
constexpr const char* kOffline = "HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 AXOLOTL_DO_NOT_TRACK=1 ";

struct SharedModel {
  fs::path tiny;
  json versions;
  std::string error;
};

SharedModel MakeOrReuseTinyModel() {
  SharedModel shared;
  const fs::path script = kSource / "scripts/finetune/make_tiny_model.py";
  std::ifstream in(script);
  std::stringstream text;
  text << Python() << "\n" << in.rdbuf();
  const fs::path cache = fs::path(KFORGE_BINARY).parent_path() / "test-cache" /
                         ("finetune-" + kforge::common::Sha256Hex(text.str()).substr(0, 16));
  shared.tiny = cache / "tiny";
  if (fs::exists(cache / "versions.json") && fs::exists(shared.tiny / "config.json")) {
    shared.versions = json::parse(std::ifstream(cache / "versions.json"), nullptr, false);
    return shared;
  }
  kforge::fakes::CommandResult versions = RunCommand(
      ShellQuote(Python()) + " " + (kSource / "scripts/finetune/sft_trl.py").string() + " --versions");
  if (versions.exit_code != 0) {
    shared.error = Python() + " cannot run; run scripts/setup.sh";
    return shared;
  }
  shared.versions = json::parse(versions.out, nullptr, false);
  for (const char* package : {"torch", "transformers", "trl", "datasets", "tokenizers", "peft", "accelerate"}) {
    if (shared.versions.value(package, json()).is_null()) {
      shared.error = Python() + " lacks " + package +
                     ": run scripts/setup.sh --finetune (pip install -r scripts/requirements-finetune.txt)";
      return shared;
    }
  }
  const fs::path making = cache / ("making-" + std::to_string(getpid()));
  fs::create_directories(making);
  kforge::fakes::CommandResult tiny = RunCommand(std::string(kOffline) + ShellQuote(Python()) + " " +
                                                 script.string() + " " + (making / "tiny").string() + " 2>&1");
  if (tiny.exit_code != 0) {
    shared.error = "make_tiny_model.py failed: " + tiny.out;
    fs::remove_all(making);
    return shared;
  }
  std::ofstream(making / "versions.json") << versions.out;
  std::error_code ignored;  // another entry may have published first: its model is as good
  fs::rename(making / "tiny", shared.tiny, ignored);
  fs::rename(making / "versions.json", cache / "versions.json", ignored);
  fs::remove_all(making, ignored);
  return shared;
}

/// The data in a folder of this process, and the shared tiny model.
class FinetuneSlowTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("kforge_finetune_slow_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "data.jsonl") << Conversations();
    SharedModel shared = MakeOrReuseTinyModel();
    tiny_ = shared.tiny;
    versions_ = shared.versions;
    setup_error_ = shared.error;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void SetUp() override { ASSERT_TRUE(setup_error_.empty()) << setup_error_; }

  /// `kforge finetune-launch ARGS` with stdout and stderr together.
  static kforge::fakes::CommandResult Launch(const std::string& args) {
    return RunCommand(std::string(kOffline) + KFORGE_BINARY + " finetune-launch --data " +
                      (dir_ / "data.jsonl").string() + " " + args + " 2>&1");
  }

  /// A copy of the tiny model whose chat template is `jinja`.
  static fs::path WithTemplate(const std::string& name, const std::string& jinja) {
    const fs::path model = dir_ / name;
    fs::copy(tiny_, model, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    std::ofstream(model / "chat_template.jinja", std::ios::trunc) << jinja;
    return model;
  }

  static inline fs::path dir_;
  static inline std::string setup_error_;
  static inline json versions_;
  static inline fs::path tiny_;  ///< the shared tiny model: read, never written
};

TEST_F(FinetuneSlowTest, TinyModelLearnsIsSavedAndServed) {
  const std::string python = Python();
  const std::string offline = kOffline;
  const auto start = std::chrono::steady_clock::now();
  // The same four records every step (one batch), a high constant rate, no intermediate saves.
  std::ofstream(dir_ / "over.json") << R"({"logging_steps": 1, "save_strategy": "no", "lr_scheduler_type": )"
                                    << R"("constant", "warmup_steps": 0, "activation_checkpointing": false})";
  const fs::path out = dir_ / "run";
  kforge::fakes::CommandResult trained = Launch(
      "--backend trl --launcher local --model " + tiny_.string() + " --out " + out.string() +
      " --max-steps 30 --lr 3e-3 --batch-size 4 --grad-accum 1 --config " + (dir_ / "over.json").string());
  const double train_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(trained.exit_code, 0) << trained.out;

  const std::vector<double> losses = Losses(out / "train.log");
  ASSERT_EQ(losses.size(), 30u) << trained.out;
  for (double loss : losses) EXPECT_TRUE(std::isfinite(loss)) << loss;
  const double first = (losses[0] + losses[1] + losses[2]) / 3;
  const double last = (losses[27] + losses[28] + losses[29]) / 3;
  EXPECT_LT(last, 0.8 * first) << "the loss did not fall on a repeated batch: " << first << " -> " << last;
  std::cout << "finetune: loss " << losses.front() << " -> " << losses.back() << " in 30 steps; kforge run "
            << train_s << " s\n";

  std::ifstream manifest_in(out / "manifest.json");
  json manifest = json::parse(manifest_in, nullptr, false);
  EXPECT_EQ(manifest["exit_status"], 0);
  EXPECT_EQ(manifest["dataset"]["sha256"], kforge::common::Sha256Hex(Conversations()));
  EXPECT_EQ(manifest["dataset"]["tool_calls"], 4);
  EXPECT_EQ(manifest["command"][0], python);
  EXPECT_EQ(manifest["versions"]["trl"], versions_["trl"]);
  EXPECT_EQ(manifest["result"]["steps"], 30);
  EXPECT_FALSE(manifest["ended_at"].is_null());
  // The default sequence length is the measured longest row's, so every row trains whole.
  EXPECT_EQ(manifest["settings"]["max_seq_len_basis"], "measured");
  const int64_t longest = manifest["chat_template_check"]["tokens"]["max"];
  EXPECT_EQ(manifest["chat_template_check"]["tokens"]["rows"], 4);
  EXPECT_GE(manifest["settings"]["max_seq_len"].get<int64_t>(), longest);
  EXPECT_EQ(manifest["trainer_config"]["max_length"], manifest["settings"]["max_seq_len"]);
  std::cout << "finetune: longest row " << longest << " tokens; max_seq_len "
            << manifest["settings"]["max_seq_len"] << " (measured)\n";
  // The model card.
  std::ifstream card_in(out / "model/README.md");
  const std::string card((std::istreambuf_iterator<char>(card_in)), {});
  EXPECT_NE(card.find(kforge::common::Sha256Hex(Conversations())), std::string::npos) << card;
  EXPECT_NE(card.find("| steps | 30 |"), std::string::npos) << card;
  EXPECT_NE(card.find("| base model | `" + tiny_.string() + "` |"), std::string::npos) << card;
  EXPECT_NE(card.find("\n# run: tiny fine-tuned on CUDA kernels\n"), std::string::npos) << card;
  EXPECT_NE(card.find("\nlicense: other\n"), std::string::npos) << card;

  // The checkpoint loads, has the tiny model's shape, and differs from it.
  kforge::fakes::CommandResult loaded =
      RunCommand(offline + ShellQuote(python) +
                 " -c 'import sys; from transformers import AutoModelForCausalLM as M\n"
                 "a, b = M.from_pretrained(sys.argv[1]), M.from_pretrained(sys.argv[2])\n"
                 "pa, pb = dict(a.named_parameters()), dict(b.named_parameters())\n"
                 "print(sum(p.numel() for p in pa.values()), sum(p.numel() for p in pb.values()), "
                 "max(float((pa[k] - pb[k]).abs().max()) for k in pa))' " +
                 (out / "model").string() + " " + tiny_.string() + " 2>/dev/null");
  ASSERT_EQ(loaded.exit_code, 0) << "transformers could not load " << (out / "model").string();
  std::istringstream figures(loaded.out);
  long trained_params = 0, tiny_params = 0;
  double changed = 0;
  figures >> trained_params >> tiny_params >> changed;
  EXPECT_GT(trained_params, 0);
  EXPECT_EQ(trained_params, tiny_params);
  EXPECT_GT(changed, 0) << "the saved weights are the initial ones";

  // The student, served by an existing OpenAI-compatible server, answers a chat completion.
  kforge::fakes::CommandResult served = RunCommand(offline + (kSource / "scripts/eval-student.sh").string() +
                                                   " --check " + (out / "model").string());
  ASSERT_EQ(served.exit_code, 0) << served.out;
  json reply = json::parse(served.out, nullptr, false);
  ASSERT_TRUE(reply.is_object()) << served.out;
  EXPECT_EQ(reply["choices"][0]["message"]["role"], "assistant") << served.out;
  EXPECT_EQ(reply["model"], fs::canonical(out / "model").string());
  EXPECT_GT(reply["usage"]["completion_tokens"].get<int>(), 0);
  // The student measured the same way as the teacher: generate (compile-only) on the demo tasks through the
  // served checkpoint, then report over that run. A tiny model's kernels do not compile; the loop must run.
  // The paths are relative to the caller's folder, not the repository's.
  kforge::fakes::TaskRoot demo({"demo"});
  const fs::path eval = dir_ / "eval";
  kforge::fakes::CommandResult measured = RunCommand(
      "cd " + ShellQuote(dir_.string()) + " && " + offline + "KFORGE_STUDENT_MAX_TOKENS=48 " +
      (kSource / "scripts/eval-student.sh").string() + " " + fs::relative(out / "model", dir_).string() + " " +
      ShellQuote(demo.path().string()) + " eval 2>&1");
  ASSERT_EQ(measured.exit_code, 0) << measured.out;
  std::ifstream run_in(eval / "run/trajectories.jsonl");
  int episodes = 0, requests = 0;
  for (std::string line; std::getline(run_in, line);) {
    json record = json::parse(line);
    EXPECT_EQ(record["teacher"]["provider"], "openai");
    EXPECT_TRUE(record["compile_only"].get<bool>());
    requests += record["usage"]["requests"].get<int>();
    ++episodes;
  }
  EXPECT_EQ(episodes, 3) << measured.out;
  EXPECT_GE(requests, 3) << "the student was asked for every task";
  std::ifstream report_in(eval / "report.txt");
  std::string report((std::istreambuf_iterator<char>(report_in)), {});
  EXPECT_NE(report.find("3 episodes of 3 tasks"), std::string::npos) << report;
  std::cout << "finetune: the student's run: " << episodes << " episodes, " << requests
            << " requests; report:\n"
            << report;

  std::cout << "finetune: the loop from launch to reply "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
            << " s; student replied " << reply["choices"][0]["message"]["content"].dump() << "\n";
}

/// The step of each `kforge-train` line of a log (the progress lines, not the done line).
std::vector<int> Steps(const fs::path& log) {
  std::ifstream in(log);
  std::vector<int> steps;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("kforge-train ", 0) != 0) continue;
    json step = json::parse(line.substr(13), nullptr, false);
    if (step.is_object() && step.contains("loss") && step.contains("step")) steps.push_back(step["step"]);
  }
  return steps;
}

// --resume continues from the last checkpoint: the step count goes on where it stopped, with an
// evaluation set evaluated along the way.
TEST_F(FinetuneSlowTest, ResumeContinuesFromTheLastCheckpoint) {
  std::ofstream(dir_ / "ckpt.json") << R"({"logging_steps": 1, "save_strategy": "steps", "save_steps": 2, )"
                                    << R"("lr_scheduler_type": "constant", "warmup_steps": 0})";
  const fs::path out = dir_ / "resumed";
  const std::string common = "--model " + tiny_.string() + " --out " + out.string() +
                             " --lr 1e-3 --batch-size 2 --grad-accum 1 --eval-data " +
                             (dir_ / "data.jsonl").string() + " --config " + (dir_ / "ckpt.json").string();
  kforge::fakes::CommandResult first = Launch(common + " --max-steps 4");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_EQ(Steps(out / "train.log"), (std::vector<int>{1, 2, 3, 4}));
  ASSERT_TRUE(fs::exists(out / "checkpoints/checkpoint-4")) << first.out;

  kforge::fakes::CommandResult again = Launch(common + " --max-steps 6");
  EXPECT_EQ(again.exit_code, 2) << "a previous run is not replaced silently";
  kforge::fakes::CommandResult resumed = Launch(common + " --max-steps 6 --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("resuming from " + (out / "checkpoints/checkpoint-4").string()),
            std::string::npos)
      << resumed.out;
  EXPECT_EQ(Steps(out / "train.log"), (std::vector<int>{5, 6})) << "the steps go on from the checkpoint";
  std::ifstream manifest_in(out / "manifest.json");
  json manifest = json::parse(manifest_in, nullptr, false);
  EXPECT_EQ(manifest["result"]["steps"], 6);
  EXPECT_TRUE(manifest["result"]["eval_loss"].is_number()) << manifest["result"].dump();
  EXPECT_EQ(manifest["settings"]["resume"], true);
  ASSERT_EQ(manifest["segments"].size(), 1u) << "the first segment's manifest is kept";
  EXPECT_EQ(manifest["segments"][0]["result"]["steps"], 4);
  EXPECT_EQ(manifest["segments"][0]["settings"]["resume"], false);
  std::cout << "finetune: resumed at step 5 from checkpoint-4, ended at step " << manifest["result"]["steps"]
            << "\n";
}

// A chat template that loses the tool calls, or lacks what assistant-only loss needs, stops the
// launch before the trainer starts, with one line naming the record or the fix.
TEST_F(FinetuneSlowTest, ChatTemplatesThatCannotTrainOnTheDataAreRefused) {
  const fs::path drops =
      WithTemplate("drops-calls",
                   "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
                   "{% endfor %}");
  kforge::fakes::CommandResult dropped =
      Launch("--model " + drops.string() + " --out " + (dir_ / "r1").string());
  EXPECT_EQ(dropped.exit_code, 2) << dropped.out;
  EXPECT_NE(dropped.out.find("data.jsonl:1: the chat template of " + drops.string() + " drops tool calls"),
            std::string::npos)
      << dropped.out;
  EXPECT_FALSE(fs::exists(dir_ / "r1/manifest.json"));
  // --chat-template gives the check and the trainer a template that renders the tool calls.
  std::ofstream(dir_ / "nosave.json") << R"({"save_strategy": "no"})";
  kforge::fakes::CommandResult given =
      Launch("--model " + drops.string() + " --chat-template " +
             (tiny_ / "chat_template.jinja").string() + " --out " + (dir_ / "r1b").string() +
             " --max-steps 1 --batch-size 4 --grad-accum 1 --config " + (dir_ / "nosave.json").string());
  EXPECT_EQ(given.exit_code, 0) << given.out;

  std::ifstream in(tiny_ / "chat_template.jinja");
  std::string jinja((std::istreambuf_iterator<char>(in)), {});
  for (const std::string marker : {"{% generation %}", "{% endgeneration %}"})
    jinja.erase(jinja.find(marker), marker.size());
  const fs::path unmarked = WithTemplate("no-markers", jinja);
  kforge::fakes::CommandResult refused =
      Launch("--model " + unmarked.string() + " --out " + (dir_ / "r2").string());
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find("has no {% generation %} markers and TRL has no training template for it: set "
                             "assistant_only_loss: false in --config"),
            std::string::npos)
      << refused.out;

  std::ofstream(dir_ / "whole.json") << R"({"assistant_only_loss": false, "save_strategy": "no"})";
  kforge::fakes::CommandResult whole =
      Launch("--model " + unmarked.string() + " --out " + (dir_ / "r3").string() +
             " --max-steps 1 --batch-size 4 --grad-accum 1 --config " + (dir_ / "whole.json").string());
  EXPECT_EQ(whole.exit_code, 0) << whole.out;
}

// The axolotl backend end to end where axolotl is installed. axolotl pins its own transformers and
// trl, so it usually has a venv of its own: KFORGE_AXOLOTL_PYTHON names its Python.
TEST_F(FinetuneSlowTest, AxolotlBackendTrainsTheTinyModel) {
  const char* axolotl_python = std::getenv("KFORGE_AXOLOTL_PYTHON");
  if (axolotl_python == nullptr || *axolotl_python == '\0')
    GTEST_SKIP() << "KFORGE_AXOLOTL_PYTHON is not set (the Python of a venv with axolotl)";
  std::ofstream(dir_ / "axolotl.json")
      << R"({"logging_steps": 1, "save_strategy": "no", "lr_scheduler": "constant", "warmup_ratio": 0.0})";
  const fs::path out = dir_ / "axolotl-run";
  kforge::fakes::CommandResult trained = Launch(
      "--backend axolotl --python " + ShellQuote(axolotl_python) + " --model " + tiny_.string() +
      " --out " + out.string() + " --max-steps 10 --lr 3e-3 --batch-size 2 --grad-accum 1 --config " +
      (dir_ / "axolotl.json").string());
  ASSERT_EQ(trained.exit_code, 0) << trained.out;
  std::ifstream log(out / "train.log");
  const std::string text((std::istreambuf_iterator<char>(log)), {});
  static const std::regex kLoss(R"('loss': '?([0-9.eE+-]+))");
  std::vector<double> losses;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kLoss); it != std::sregex_iterator(); ++it)
    losses.push_back(std::stod((*it)[1].str()));
  ASSERT_EQ(losses.size(), 10u) << text.substr(text.size() > 3000 ? text.size() - 3000 : 0);
  for (double loss : losses) EXPECT_TRUE(std::isfinite(loss)) << loss;
  EXPECT_LT(losses.back(), 0.8 * losses.front());
  EXPECT_TRUE(fs::exists(out / "model/model.safetensors"));
  std::cout << "finetune: axolotl loss " << losses.front() << " -> " << losses.back() << " in 10 steps\n";
}

// A dry run for axolotl where axolotl does not import (it lives in a venv of its own) still measures the
// rows with the model's tokenizer through transformers: axolotl drops rows longer than sequence_len.
TEST_F(FinetuneSlowTest, AnAxolotlDryRunMeasuresTokensWithTransformersAlone) {
  if (!versions_.value("axolotl", json()).is_null()) GTEST_SKIP() << "axolotl imports in " << Python();
  const fs::path out = dir_ / "axolotl-dry";
  kforge::fakes::CommandResult dry =
      Launch("--backend axolotl --dry-run --model " + tiny_.string() + " --out " + out.string());
  ASSERT_EQ(dry.exit_code, 0) << dry.out;
  EXPECT_NE(dry.out.find("the axolotl backend needs axolotl"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("measured tokens, percentile 100"), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find("estimate"), std::string::npos) << dry.out;
  static const std::regex kLongest(R"(tokens per row over 4 rows: p50 \d+, p95 \d+, p99 \d+, max (\d+))");
  std::smatch longest;
  ASSERT_TRUE(std::regex_search(dry.out, longest, kLongest)) << dry.out;
  std::ifstream yaml_in(out / "axolotl.yaml");
  const std::string yaml((std::istreambuf_iterator<char>(yaml_in)), {});
  const int64_t tokens = std::stoll(longest[1].str());
  EXPECT_NE(yaml.find("\nsequence_len: " + std::to_string((tokens + 63) / 64 * 64) + "\n"), std::string::npos)
      << "longest row " << tokens << " tokens:\n" << yaml;
}

TEST_F(FinetuneSlowTest, ASlurmJobOnARealOneNodeClusterTrainsAndCompletesItsManifest) {
  kforge::fakes::LocalSlurm slurm(dir_ / "slurm");
  ASSERT_EQ(slurm.started().exit_code, 0) << slurm.started().out;
  std::ofstream(dir_ / "slurm-over.json") << R"({"logging_steps": 1, "save_strategy": "no", "activation_checkpointing": false})";
  const fs::path out = dir_ / "slurm-run";
  const auto start = std::chrono::steady_clock::now();
  // A CPU-only job (--gpus-per-node 0): one process, no GPU asked of the node, and no more CPUs than
  // sinfo says the node has (the default 8 would pend forever on a 2-CPU node).
  kforge::fakes::CommandResult submitted = RunCommand(
      slurm.Env() + kOffline + KFORGE_BINARY + " finetune-launch --data " + (dir_ / "data.jsonl").string() +
      " --backend trl --launcher slurm --gpus-per-node 0 --time 20 --model " +
      tiny_.string() + " --out " + out.string() + " --max-steps 8 --lr 3e-3 --batch-size 4 --grad-accum 1 "
      "--config " + (dir_ / "slurm-over.json").string() + " 2>&1");
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out;
  EXPECT_NE(submitted.out.find("sbatch submitted job"), std::string::npos) << submitted.out;
  std::ifstream script_in(out / "launch.sbatch");
  const std::string script((std::istreambuf_iterator<char>(script_in)), {});
  EXPECT_EQ(script.find("--gpus-per-node"), std::string::npos) << script;
  // The job writes its end into the manifest itself.
  json manifest;
  for (int i = 0; i < 1200; ++i) {
    std::ifstream in(out / "manifest.json");
    manifest = json::parse(in, nullptr, false);
    if (manifest.is_object() && !manifest.value("ended_at", json()).is_null()) break;
    usleep(250000);
  }
  const double job_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(manifest.is_object() && !manifest.value("ended_at", json()).is_null())
      << "the job did not finish; " << RunCommand("tail -20 " + out.string() + "/slurm-*.log").out;
  EXPECT_EQ(manifest["exit_status"], 0) << RunCommand("tail -20 " + out.string() + "/slurm-*.log").out;
  EXPECT_FALSE(manifest.value("slurm_job_id", std::string()).empty());
  // The job's own log (slurm-JOBID.log) has the training's step lines.
  EXPECT_EQ(Losses(out / ("slurm-" + manifest.value("slurm_job_id", std::string()) + ".log")).size(), 8u);
  EXPECT_TRUE(fs::exists(out / "model/model.safetensors"));
  std::cout << "finetune: a Slurm job (job " << manifest.value("slurm_job_id", std::string()) << ") trained 8 steps "
            << "on a one-node cluster in " << job_s << " s from sbatch to the manifest's end\n";
}

// A job at its time limit: Slurm warns the batch script with SIGTERM (--signal=B:TERM@120, so with a
// 3-minute limit about a minute in), which stops the training and records the signal in the manifest;
// --status then says how the job ended and how to resume it.
TEST_F(FinetuneSlowTest, ASlurmJobAtItsTimeLimitRecordsTheSignalAndStatusSaysHowToResume) {
  kforge::fakes::LocalSlurm slurm(dir_ / "slurm-limit");
  ASSERT_EQ(slurm.started().exit_code, 0) << slurm.started().out;
  std::ofstream(dir_ / "limit-over.json")
      << R"({"logging_steps": 1, "save_strategy": "steps", "save_steps": 2, "activation_checkpointing": false})";
  const fs::path out = dir_ / "limit-run";
  kforge::fakes::CommandResult submitted = RunCommand(
      slurm.Env() + kOffline + KFORGE_BINARY + " finetune-launch --data " + (dir_ / "data.jsonl").string() +
      " --backend trl --launcher slurm --gpus-per-node 0 --time 3 --model " + tiny_.string() +
      " --out " + out.string() + " --max-steps 100000 --lr 1e-3 --batch-size 4 --grad-accum 1 --config " +
      (dir_ / "limit-over.json").string() + " 2>&1");
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out;
  const auto start = std::chrono::steady_clock::now();
  json manifest;
  for (int i = 0; i < 1000; ++i) {
    std::ifstream in(out / "manifest.json");
    manifest = json::parse(in, nullptr, false);
    if (manifest.is_object() && !manifest.value("ended_at", json()).is_null()) break;
    usleep(250000);
  }
  const double job_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(manifest.value("ended_at", json()).is_null())
      << "the job did not record its end; " << RunCommand("tail -20 " + out.string() + "/slurm-*.log").out;
  EXPECT_EQ(manifest["job_signal"], "TERM") << manifest.dump();
  EXPECT_NE(manifest["exit_status"], 0);
  kforge::fakes::CommandResult status =
      RunCommand(slurm.Env() + KFORGE_BINARY + " finetune-launch --status " + out.string());
  EXPECT_EQ(status.exit_code, 1) << status.out;
  EXPECT_NE(status.out.find("(stopped by SIGTERM: the time limit's warning, or scancel)"), std::string::npos)
      << status.out;
  const bool resumable = status.out.find("; resume from its last checkpoint: cd ") != std::string::npos &&
                         status.out.find(" --time 3 ") != std::string::npos &&
                         status.out.find(" --resume\n") != std::string::npos;
  EXPECT_TRUE(resumable || status.out.find("no checkpoint-N was saved") != std::string::npos) << status.out;
  std::cout << "finetune: a Slurm job with a 3-minute limit got SIGTERM and recorded it " << job_s
            << " s after sbatch; --status: " << status.out;
}

}  // namespace
