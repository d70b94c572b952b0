// Rendering launches: the Slurm batch script for 2 nodes of 8 GPUs, the argument vectors of the
// other launchers, and the combinations that are refused before anything is written.
#include "kforge/finetune/launch.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "finetune/dataset.h"
#include "finetune/launchers.h"

namespace kforge::finetune {
namespace {

namespace fs = std::filesystem;

DatasetStats MessagesStats() {
  DatasetStats stats;
  stats.records = 10;
  stats.max_chars = 3500;  // about 1000 tokens
  return stats;
}

LaunchOptions Options(Backend backend, Launcher launcher) {
  LaunchOptions o;
  o.data = "/data/train.jsonl";
  o.model = "Qwen/Qwen3-8B";
  o.backend = backend;
  o.launcher = launcher;
  o.out = "/runs/qwen-sft";
  o.python = "/opt/venv/bin/python3";  // no torchrun beside it: launchers come from PATH
  o.trl_script = "/src/kforge/scripts/finetune/sft_trl.py";
  return o;
}

size_t Find(const std::vector<std::string>& argv, const std::string& arg) {
  return std::find(argv.begin(), argv.end(), arg) - argv.begin();
}

TEST(LaunchTest, SlurmTwoNodesOfEightGpus) {
  LaunchOptions o = Options(Backend::kTrl, Launcher::kSlurm);
  o.nodes = 2;
  o.gpus_per_node = 8;
  o.training.lora = true;
  auto plan = PlanLaunch(o, MessagesStats());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const std::string& s = plan->sbatch;
  for (const char* line : {"#!/bin/bash\n", "\n#SBATCH --nodes=2\n", "\n#SBATCH --ntasks-per-node=1\n",
                           "\n#SBATCH --gpus-per-node=8\n", "\n#SBATCH --job-name=kforge-finetune\n",
                           "\n#SBATCH --output=/runs/qwen-sft/slurm-%j.log\n",
                           "\nhead_node=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n",
                           "\nrdzv_port=$((20000 + (SLURM_JOB_ID * 7919 + RANDOM) % 20000))\n"})
    EXPECT_NE(s.find(line), std::string::npos) << "missing " << line << " in\n" << s;
  const size_t srun = s.find("\nsrun torchrun ");
  ASSERT_NE(srun, std::string::npos) << s;
  const std::string command = s.substr(srun + 1);
  EXPECT_LT(s.find("head_node="), srun) << "the first node is named before srun uses it";
  for (const char* arg :
       {" --nnodes \"$SLURM_NNODES\"", " --nproc_per_node 8 ", " --rdzv_backend c10d",
        " --rdzv_endpoint \"$head_node:$rdzv_port\"", " --rdzv_id \"$SLURM_JOB_ID\"",
        " /src/kforge/scripts/finetune/sft_trl.py --model Qwen/Qwen3-8B --data /data/train.jsonl",
        " --config /runs/qwen-sft/trl_config.json --save /runs/qwen-sft/model",
        " --adapter-out /runs/qwen-sft/adapter"})
    EXPECT_NE(command.find(arg), std::string::npos) << "missing " << arg << " in\n" << command;
  EXPECT_NE(s.find("\nexport PATH=/opt/venv/bin:\"$PATH\"\n"), std::string::npos) << s;
  EXPECT_EQ(plan->argv, (std::vector<std::string>{"sbatch", "/runs/qwen-sft/launch.sbatch"}));
  ASSERT_EQ(plan->files.size(), 2u);
  EXPECT_EQ(plan->files[1].first, "/runs/qwen-sft/launch.sbatch");
  EXPECT_EQ(plan->files[1].second, s);
}

TEST(LaunchTest, SlurmResourcesAndTheJobCompletingItsManifest) {
  LaunchOptions o = Options(Backend::kTrl, Launcher::kSlurm);
  o.gpus_per_node = 4;
  auto plan = PlanLaunch(o, MessagesStats());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_NE(plan->sbatch.find("\n#SBATCH --cpus-per-task=32\n"), std::string::npos)
      << "8 CPUs per GPU by default, not Slurm's 1 per task\n"
      << plan->sbatch;
  EXPECT_EQ(plan->sbatch.find("--partition"), std::string::npos) << "the cluster's default unless given";
  o.slurm = {
      .partition = "gpu-h100", .account = "lab_42", .time = "1-12:00:00", .mem = "200G", .cpus_per_task = 12};
  plan = PlanLaunch(o, MessagesStats());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const std::string& s = plan->sbatch;
  for (const char* line :
       {"\n#SBATCH --cpus-per-task=12\n", "\n#SBATCH --partition=gpu-h100\n", "\n#SBATCH --account=lab_42\n",
        "\n#SBATCH --time=1-12:00:00\n", "\n#SBATCH --mem=200G\n",
        "\n#SBATCH --signal=B:TERM@120\n", "\nexport SRUN_CPUS_PER_TASK=\"$SLURM_CPUS_PER_TASK\"\n",
        "\nset +e\nsignal=\nsrun ", " &\ntrain=$!\ntrap 'signal=TERM; kill -TERM \"$train\" 2>/dev/null' TERM\n",
        "\nwait \"$train\"\nstatus=$?\n",
        "\n/opt/venv/bin/python3 /src/kforge/scripts/finetune/sft_trl.py --finish-manifest "
        "/runs/qwen-sft --exit-status \"$status\" ${signal:+--signal \"$signal\"}",
        "\nexit \"$status\"\n"})
    EXPECT_NE(s.find(line), std::string::npos) << "missing " << line << " in\n" << s;
  EXPECT_LT(s.find("\nsrun "), s.find("--finish-manifest")) << "the manifest is completed after training";

  const struct {
    SlurmOptions slurm;
    std::string want;
  } bad[] = {
      {{.partition = "gpu\n#SBATCH --x"}, "--partition gpu"},
      {{.account = "a b"}, "--account a b: only letters"},
      {{.time = "1 day"}, "--time 1 day: expected minutes"},
      {{.mem = "lots"}, "--mem lots: expected a size"},
  };
  for (const auto& c : bad) {
    o.slurm = c.slurm;
    auto refused = PlanLaunch(o, MessagesStats());
    ASSERT_FALSE(refused.ok()) << c.want;
    EXPECT_NE(refused.status().message().find(c.want), std::string::npos) << refused.status().message();
  }
  LaunchOptions local = Options(Backend::kTrl, Launcher::kTorchrun);
  local.slurm.partition = "gpu";
  auto refused = PlanLaunch(local, MessagesStats());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("need --launcher slurm"), std::string::npos);
}

TEST(LaunchTest, EvalDataChatTemplateResumeReportAndPacking) {
  LaunchOptions o = Options(Backend::kTrl, Launcher::kLocal);
  o.eval_data = "/data/validation.jsonl";
  o.chat_template = "/templates/chatml.jinja";
  o.chat_template_text = "{{ messages }}";
  o.resume = true;
  o.training.report_to = "tensorboard";
  o.training.packing = true;
  auto plan = PlanLaunch(o, MessagesStats());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const std::vector<std::string>& argv = plan->argv;
  EXPECT_EQ(argv[Find(argv, "--eval-data") + 1], "/data/validation.jsonl");
  EXPECT_EQ(argv[Find(argv, "--chat-template") + 1], "/templates/chatml.jinja");
  EXPECT_LT(Find(argv, "--resume"), argv.size());
  EXPECT_EQ(plan->trainer_config["report_to"], "tensorboard");
  EXPECT_EQ(plan->trainer_config["packing"], true);
  EXPECT_EQ(plan->trainer_config["eval_strategy"], "epoch");

  o.backend = Backend::kAxolotl;
  plan = PlanLaunch(o, MessagesStats());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const nlohmann::json& axolotl = plan->trainer_config;
  EXPECT_EQ(axolotl["sample_packing"], true);
  EXPECT_EQ(axolotl["use_tensorboard"], true);
  EXPECT_EQ(axolotl["test_datasets"][0]["path"], "/data/validation.jsonl");
  EXPECT_EQ(axolotl["chat_template"], "jinja");
  EXPECT_EQ(axolotl["chat_template_jinja"], "{{ messages }}");
  EXPECT_EQ(axolotl["auto_resume_from_checkpoints"], true);
}

TEST(LaunchTest, MeasuredSequenceLengthHoldsTheLongestRow) {
  EXPECT_EQ(MeasuredMaxSeqLen(3577), 3584);
  EXPECT_EQ(MeasuredMaxSeqLen(3584), 3584);
  EXPECT_EQ(MeasuredMaxSeqLen(3585), 3648);
  EXPECT_EQ(MeasuredMaxSeqLen(10), 64);
}

TEST(LaunchTest, SlurmQuotesUserValuesInTheScript) {
  LaunchOptions o = Options(Backend::kTrl, Launcher::kSlurm);
  o.data = "/data/it's here; rm -rf $HOME/x.jsonl";
  o.model = "/models/my model";
  auto plan = PlanLaunch(o, MessagesStats());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_NE(plan->sbatch.find(" --data '/data/it'\\''s here; rm -rf $HOME/x.jsonl' "), std::string::npos)
      << plan->sbatch;
  EXPECT_NE(plan->sbatch.find(" --model '/models/my model' "), std::string::npos) << plan->sbatch;
}

TEST(LaunchTest, TorchrunAndAccelerateArgv) {
  LaunchOptions o = Options(Backend::kTrl, Launcher::kTorchrun);
  o.gpus_per_node = 4;
  auto torchrun = PlanLaunch(o, MessagesStats());
  ASSERT_TRUE(torchrun.ok()) << torchrun.status().message();
  EXPECT_EQ(torchrun->argv,
            (std::vector<std::string>{"torchrun", "--nproc_per_node", "4", "--nnodes", "1",
                                      "/src/kforge/scripts/finetune/sft_trl.py", "--model", "Qwen/Qwen3-8B",
                                      "--data", "/data/train.jsonl", "--config",
                                      "/runs/qwen-sft/trl_config.json", "--save", "/runs/qwen-sft/model"}));

  o.nodes = 2;
  o.master_addr = "10.0.0.1";
  auto two_nodes = PlanLaunch(o, MessagesStats());
  ASSERT_TRUE(two_nodes.ok()) << two_nodes.status().message();
  const auto& argv = two_nodes->argv;
  ASSERT_LT(Find(argv, "--rdzv_endpoint") + 1, argv.size());
  EXPECT_EQ(argv[Find(argv, "--rdzv_endpoint") + 1], "10.0.0.1:29500");
  EXPECT_EQ(argv[Find(argv, "--nnodes") + 1], "2");
  EXPECT_EQ(argv[Find(argv, "--rdzv_backend") + 1], "c10d");

  LaunchOptions a = Options(Backend::kAxolotl, Launcher::kAccelerate);
  a.gpus_per_node = 8;
  auto accelerate = PlanLaunch(a, MessagesStats());
  ASSERT_TRUE(accelerate.ok()) << accelerate.status().message();
  EXPECT_EQ(accelerate->argv, (std::vector<std::string>{"accelerate", "launch", "--num_processes", "8", "-m",
                                                        "axolotl.cli.train", "/runs/qwen-sft/axolotl.yaml"}));
  a.nodes = 2;
  a.master_addr = "10.0.0.1";
  a.node_rank = "1";
  auto accelerate2 = PlanLaunch(a, MessagesStats());
  ASSERT_TRUE(accelerate2.ok()) << accelerate2.status().message();
  const auto& argv2 = accelerate2->argv;
  EXPECT_EQ(argv2[Find(argv2, "--num_processes") + 1], "16");
  EXPECT_EQ(argv2[Find(argv2, "--num_machines") + 1], "2");
  EXPECT_EQ(argv2[Find(argv2, "--machine_rank") + 1], "1");
  EXPECT_EQ(argv2[Find(argv2, "--main_process_ip") + 1], "10.0.0.1");
}

TEST(LaunchTest, LocalRunsThePythonOrAxolotl) {
  auto trl = PlanLaunch(Options(Backend::kTrl, Launcher::kLocal), MessagesStats());
  ASSERT_TRUE(trl.ok());
  EXPECT_EQ(trl->argv[0], "/opt/venv/bin/python3");
  EXPECT_EQ(trl->argv[1], "/src/kforge/scripts/finetune/sft_trl.py");
  EXPECT_EQ(trl->files.at(0).first, "/runs/qwen-sft/trl_config.json");
  ASSERT_EQ(trl->environment.size(), 1u);
  EXPECT_EQ(trl->environment[0].rfind("PATH=/opt/venv/bin:", 0), 0u) << trl->environment[0];
  LaunchOptions bare = Options(Backend::kTrl, Launcher::kLocal);
  bare.python = "python3";
  EXPECT_TRUE(PlanLaunch(bare, MessagesStats())->environment.empty());
  auto axolotl = PlanLaunch(Options(Backend::kAxolotl, Launcher::kLocal), MessagesStats());
  ASSERT_TRUE(axolotl.ok());
  EXPECT_EQ(axolotl->argv, (std::vector<std::string>{"axolotl", "train", "/runs/qwen-sft/axolotl.yaml"}));
}

TEST(LaunchTest, LaunchersComeFromThePythonsFolderWhenThere) {
  const fs::path dir = fs::temp_directory_path() / ("kforge_launch_" + std::to_string(getpid()));
  fs::create_directories(dir / "bin");
  for (const char* name : {"python3", "torchrun"}) {
    std::ofstream(dir / "bin" / name) << "#!/bin/sh\n";
    chmod((dir / "bin" / name).c_str(), 0755);
  }
  EXPECT_EQ(Beside((dir / "bin/python3").string(), "torchrun"), (dir / "bin/torchrun").string());
  EXPECT_EQ(Beside((dir / "bin/python3").string(), "accelerate"), "accelerate");
  EXPECT_EQ(Beside("python3", "torchrun"), "torchrun");
  fs::remove_all(dir);
}

TEST(LaunchTest, CombinationsThatCannotRunAreRefused) {
  struct Case {
    const char* name;
    LaunchOptions options;
    DatasetStats stats;
    std::string want;
  };
  std::vector<Case> cases;
  {
    LaunchOptions o = Options(Backend::kTrl, Launcher::kLocal);
    o.gpus_per_node = 2;
    cases.push_back({"local with 2 GPUs", o, MessagesStats(), "--launcher local runs one process"});
  }
  {
    LaunchOptions o = Options(Backend::kTrl, Launcher::kTorchrun);
    o.nodes = 2;
    cases.push_back({"torchrun on 2 nodes without MASTER_ADDR", o, MessagesStats(), "needs MASTER_ADDR"});
  }
  {
    LaunchOptions o = Options(Backend::kTrl, Launcher::kAccelerate);
    o.nodes = 2;
    o.master_addr = "10.0.0.1";
    cases.push_back({"accelerate on 2 nodes without NODE_RANK", o, MessagesStats(), "needs NODE_RANK"});
  }
  {
    DatasetStats pairs = MessagesStats();
    pairs.format = DatasetFormat::kPromptCompletion;
    cases.push_back({"axolotl with prompt/completion", Options(Backend::kAxolotl, Launcher::kLocal), pairs,
                     "--backend axolotl takes messages records"});
  }
  {
    LaunchOptions o = Options(Backend::kTrl, Launcher::kSlurm);
    o.out = "/runs/my run";
    cases.push_back(
        {"slurm with a space in --out", o, MessagesStats(), "#SBATCH lines are not shell-quoted"});
  }
  for (const Case& c : cases) {
    auto plan = PlanLaunch(c.options, c.stats);
    ASSERT_FALSE(plan.ok()) << c.name;
    EXPECT_NE(plan.status().message().find(c.want), std::string::npos)
        << c.name << ": " << plan.status().message();
  }
}

TEST(LaunchTest, SequenceLengthFromTheData) {
  DatasetStats stats = MessagesStats();
  stats.max_chars = 350;  // 100 tokens
  EXPECT_EQ(DefaultMaxSeqLen(stats), 512);
  stats.max_chars = 3500;  // 1000 tokens, 1250 with the template's share
  EXPECT_EQ(DefaultMaxSeqLen(stats), 2048);
  stats.max_chars = 10'000'000;
  EXPECT_EQ(DefaultMaxSeqLen(stats), 32768);
  TrainingSettings given;
  given.max_seq_len = 700;
  EXPECT_EQ(MaxSeqLen(given, stats), 700);
  EXPECT_EQ(MaxSeqLen(TrainingSettings{}, stats), 32768);
}

TEST(LaunchTest, ShellQuoteRoundTripsThroughTheShell) {
  const std::vector<std::string> args = {"plain", "with space", "it's",      "$HOME",     "a;b|c&d", "`id`",
                                         "\"q\"", "",           "tab\there", "new\nline", "*"};
  EXPECT_EQ(ShellQuote("plain/path-1.0_x"), "plain/path-1.0_x");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
  const fs::path out = fs::temp_directory_path() / ("kforge_quote_" + std::to_string(getpid()));
  const std::string command = ShellJoin({"printf", "%s\\0"}) + " " + ShellJoin(args) + " > " + out.string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(out, std::ios::binary);
  std::string got((std::istreambuf_iterator<char>(in)), {});
  fs::remove(out);
  std::string want;
  for (const std::string& a : args) want += a + std::string(1, '\0');
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace kforge::finetune
