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
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/task_root.h"
#include "kforge/common/hash.h"
#include "kforge/finetune/run.h"

namespace {

namespace fs = std::filesystem;
using kforge::fakes::RunCommand;
using kforge::fakes::ShellQuote;
using nlohmann::json;

const fs::path kSource = KFORGE_SOURCE_DIR;

/// The Python kforge picks without --python.
std::string Python() { return kforge::finetune::DefaultPython(); }

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

TEST(FinetuneTrainSlowTest, TinyModelLearnsIsSavedAndServed) {
  const std::string python = Python();
  const auto start = std::chrono::steady_clock::now();
  kforge::fakes::CommandResult versions = RunCommand(
      ShellQuote(python) + " " + (kSource / "scripts/finetune/sft_trl.py").string() + " --versions");
  ASSERT_EQ(versions.exit_code, 0) << python << " cannot run; run scripts/setup.sh";
  json found = json::parse(versions.out, nullptr, false);
  for (const char* package : {"torch", "transformers", "trl", "datasets", "tokenizers", "peft", "accelerate"})
    ASSERT_FALSE(found.value(package, json()).is_null())
        << python << " lacks " << package
        << ": run scripts/setup.sh (pip install -r scripts/requirements.txt)";

  const fs::path dir = fs::temp_directory_path() / ("kforge_finetune_train_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string offline =
      "HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 KFORGE_PYTHON=" + ShellQuote(python) + " ";
  kforge::fakes::CommandResult tiny = RunCommand(offline + ShellQuote(python) + " " +
                                                 (kSource / "scripts/finetune/make_tiny_model.py").string() +
                                                 " " + (dir / "tiny").string() + " 2>&1");
  ASSERT_EQ(tiny.exit_code, 0) << tiny.out;

  const std::string conversations = Conversations();
  std::ofstream(dir / "data.jsonl") << conversations;
  // The same four records every step (one batch), a high constant rate, no intermediate saves.
  std::ofstream(dir / "over.json")
      << R"({"logging_steps": 1, "save_strategy": "no", "lr_scheduler_type": "constant",)"
      << R"( "warmup_steps": 0, "activation_checkpointing": false})";
  const fs::path out = dir / "run";
  const std::string launch =
      offline + std::string(KFORGE_BINARY) + " finetune-launch --backend trl --launcher local --data " +
      (dir / "data.jsonl").string() + " --model " + (dir / "tiny").string() + " --out " + out.string() +
      " --max-steps 30 --lr 3e-3 --batch-size 4 --grad-accum 1 --config " + (dir / "over.json").string() +
      " 2>&1";
  const auto train_start = std::chrono::steady_clock::now();
  kforge::fakes::CommandResult trained = RunCommand(launch);
  const double train_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - train_start).count();
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
  EXPECT_EQ(manifest["dataset"]["sha256"], kforge::common::Sha256Hex(conversations));
  EXPECT_EQ(manifest["dataset"]["tool_calls"], 4);
  EXPECT_EQ(manifest["command"][0], python);
  EXPECT_EQ(manifest["versions"]["trl"], found["trl"]);
  EXPECT_EQ(manifest["result"]["steps"], 30);
  EXPECT_FALSE(manifest["ended_at"].is_null());

  // The checkpoint loads, has the tiny model's shape, and differs from it.
  kforge::fakes::CommandResult loaded =
      RunCommand(offline + ShellQuote(python) +
                 " -c 'import sys; from transformers import AutoModelForCausalLM as M\n"
                 "a, b = M.from_pretrained(sys.argv[1]), M.from_pretrained(sys.argv[2])\n"
                 "pa, pb = dict(a.named_parameters()), dict(b.named_parameters())\n"
                 "print(sum(p.numel() for p in pa.values()), sum(p.numel() for p in pb.values()), "
                 "max(float((pa[k] - pb[k]).abs().max()) for k in pa))' " +
                 (out / "model").string() + " " + (dir / "tiny").string() + " 2>/dev/null");
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
  std::cout << "finetune: whole loop "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
            << " s; student replied " << reply["choices"][0]["message"]["content"].dump() << "\n";
  fs::remove_all(dir);
}

}  // namespace
