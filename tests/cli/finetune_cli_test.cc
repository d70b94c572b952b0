// `kforge finetune-launch` end to end without training: bad input gets one line and exit 2 before
// anything is written, and --dry-run renders the Slurm launch for 2 nodes of 8 GPUs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <csignal>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fakes/command.h"
#include "fakes/task_root.h"

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

constexpr const char* kGood =
    R"({"messages": [{"role": "system", "content": "You write CUDA."}, {"role": "user", "content": "relu"},)"
    R"( {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",)"
    R"( "function": {"name": "compile", "arguments": {"source": "x"}}}]},)"
    R"( {"role": "tool", "tool_call_id": "c1", "content": "ok"}, {"role": "assistant", "content": "done"}]})";

struct LaunchRun {
  int exit_code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

class FinetuneCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_finetune_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_ / "model");
    std::ofstream(dir_ / "model/config.json") << "{}";
    data_ = Write("data.jsonl", std::string(kGood) + "\n" + kGood + "\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  LaunchRun Launch(const std::vector<std::string>& args, const std::string& env = "") {
    std::string command = env + " " + std::string(KFORGE_BINARY) + " finetune-launch";
    for (const std::string& a : args) command += " " + kforge::fakes::ShellQuote(a);
    const fs::path err = dir_ / "stderr";
    LaunchRun run;
    kforge::fakes::CommandResult result = kforge::fakes::RunCommand(command + " 2>" + err.string());
    run.exit_code = result.exit_code;
    run.out = result.out;
    std::ifstream in(err);
    run.err.assign(std::istreambuf_iterator<char>(in), {});
    return run;
  }

  std::vector<std::string> Args(const std::string& out, std::vector<std::string> more = {}) {
    return Args(out, data_, (dir_ / "model").string(), std::move(more));
  }
  std::vector<std::string> Args(const std::string& out, const std::string& data, const std::string& model,
                                std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"--data", data, "--model", model, "--out", out};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  fs::path dir_;
  std::string data_;
};

TEST_F(FinetuneCliTest, BadInputGetsOneLineAndExitTwoBeforeAnythingIsWritten) {
  const std::string out = (dir_ / "run").string();
  const std::string bad_line = Write(
      "bad.jsonl",
      std::string(kGood) + "\n" +
          R"({"messages": [{"role": "user", "content": "u"}, {"role": "tool", "content": "r"}]})" + "\n");
  const std::string fake_python = Write("python-without-trl",
                                        "#!/bin/sh\necho '{\"python\": \"3.11.0\", "
                                        "\"transformers\": \"5.0.0\", \"trl\": null}'\n");
  chmod(fake_python.c_str(), 0755);
  const struct {
    const char* name;
    std::vector<std::string> args;
    std::string want;
  } cases[] = {
      {"malformed line", Args(out, bad_line, (dir_ / "model").string()),
       bad_line + ":2: messages[1].tool_call_id: missing"},
      {"missing data", Args(out, (dir_ / "nope.jsonl").string(), (dir_ / "model").string()),
       "nope.jsonl: cannot open"},
      {"missing model", Args(out, data_, "./no/such/model"),
       "--model ./no/such/model: no such folder (and not a hub id like org/name)"},
      {"model folder without config", Args(out, data_, dir_.string()), "no config.json in it"},
      {"bad backend", Args(out, {"--backend", "deepspeed"}), "--backend"},
      {"bad launcher", Args(out, {"--launcher", "mpi"}), "--launcher"},
      {"two GPUs locally", Args(out, {"--gpus-per-node", "2"}), "--launcher local runs one process"},
      {"zero epochs", Args(out, {"--epochs", "0"}), "--epochs"},
      {"malformed --config", Args(out, {"--config", Write("bad.json", "{\"lr\": }")}),
       "bad.json: line 1, column 8: malformed JSON"},
      {"malformed YAML --config", Args(out, {"--config", Write("bad.yaml", "a: [1\n")}),
       "bad.yaml: line 2, column 1: expected ',' or ']'"},
      {"--config not an object", Args(out, {"--config", Write("list.json", "[1]")}),
       "expected an object of trainer settings"},
      {"python that does not exist", Args(out, {"--python", (dir_ / "no-python").string()}),
       "cannot run " + (dir_ / "no-python").string()},
      {"trl not installed", Args(out, {"--python", fake_python}),
       "the trl backend needs trl, which " + fake_python +
           " cannot import: pip install -r scripts/requirements-finetune.txt (scripts/setup.sh --finetune "
           "installs it into kforge's Python)"},
      {"axolotl not installed", Args(out, {"--backend", "axolotl", "--python", fake_python}),
       "the axolotl backend needs axolotl, which " + fake_python + " cannot import: pip install axolotl"},
      // kforge's own Python (scripts/requirements-finetune.txt installs no tensorboard), asked for real.
      {"tensorboard not installed", Args(out, {"--report-to", "tensorboard"}),
       "--report-to tensorboard needs the tensorboard package, which "},
  };
  for (const auto& c : cases) {
    LaunchRun run = Launch(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.name << "\n" << run.err;
    EXPECT_NE(run.err.find(c.want), std::string::npos) << c.name << ": got\n"
                                                       << run.err << "want: " << c.want;
    std::string last = run.err.substr(run.err.rfind('\n', run.err.size() - 2) + 1);
    EXPECT_TRUE(last.rfind("kforge finetune-launch: ", 0) == 0 || last.rfind("kforge: ", 0) == 0)
        << c.name << ": the error is not one line of its own: " << run.err;
    EXPECT_TRUE(run.out.empty()) << c.name << ": " << run.out;
    EXPECT_FALSE(fs::exists(out)) << c.name << ": wrote " << out;
  }
}

TEST_F(FinetuneCliTest, SlurmDryRunForTwoNodesOfEightGpus) {
  const fs::path out = dir_ / "slurm";
  LaunchRun run = Launch(
      Args(out.string(), {"--launcher", "slurm", "--nodes", "2", "--gpus-per-node", "8", "--dry-run"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const std::string& want :
       {std::string("#SBATCH --nodes=2\n"), std::string("#SBATCH --gpus-per-node=8\n"),
        std::string("#SBATCH --ntasks-per-node=1\n"),
        std::string("head_node=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)"),
        std::string("\nsrun "), std::string("torchrun --nnodes \"$SLURM_NNODES\""),
        std::string("--rdzv_endpoint \"$head_node:$rdzv_port\""), std::string("--nproc_per_node 8 "),
        "\nsbatch " + (out / "launch.sbatch").string() + "\n"})
    EXPECT_NE(run.out.find(want), std::string::npos) << "missing " << want << " in\n" << run.out;
  EXPECT_TRUE(fs::exists(out / "launch.sbatch"));
  EXPECT_TRUE(fs::exists(out / "trl_config.json"));
  EXPECT_FALSE(fs::exists(out / "manifest.json")) << "a dry run starts nothing and records no run";
  EXPECT_NE(run.err.find("2 records (messages)"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("about 0 of 2 records are longer"), std::string::npos) << run.err;
}

TEST_F(FinetuneCliTest, APreviousRunIsKeptUnlessForced) {
  const fs::path out = dir_ / "previous";
  fs::create_directories(out);
  std::ofstream(out / "manifest.json") << "{}";
  LaunchRun refused = Launch(Args(out.string(), {"--dry-run"}));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find(
                "holds a previous run (manifest.json); pass --resume to continue it, --force to replace it"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(out / "trl_config.json"));
  LaunchRun forced = Launch(Args(out.string(), {"--dry-run", "--force"}));
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_TRUE(fs::exists(out / "trl_config.json"));
}

TEST_F(FinetuneCliTest, ConfigOverridesInYamlReachTheTrainerConfig) {
  const fs::path out = dir_ / "yaml";
  const std::string config = Write("over.yaml", "logging_steps: 1\nreport_to: null\nlora_r: 8\n");
  LaunchRun run =
      Launch(Args(out.string(), {"--config", config, "--lora", "--max-seq-len", "300", "--dry-run"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream in(out / "trl_config.json");
  nlohmann::json trl = nlohmann::json::parse(in);
  EXPECT_EQ(trl["logging_steps"], 1);
  EXPECT_FALSE(trl.contains("report_to"));
  EXPECT_EQ(trl["lora_r"], 8);
  EXPECT_EQ(trl["use_peft"], true);
  EXPECT_EQ(trl["max_length"], 300);
  EXPECT_NE(run.out.find("--adapter-out " + (out / "adapter").string()), std::string::npos) << run.out;
}

/// A trainer's Python, torchrun and Slurm's commands as shell scripts in DIR/bin: the Python answers
/// --versions and --check-template (the longest row: 3577 tokens, line 2), "trains" by creating --save
/// and printing a done line, and hands --finish-manifest to the real sft_trl.py.
class FakeTrainerTest : public FinetuneCliTest {
 protected:
  void SetUp() override {
    FinetuneCliTest::SetUp();
    bin_ = dir_ / "bin";
    fs::create_directories(bin_);
    Script(
        "python3",
        "case \"$*\" in\n"
        "  *--versions*) echo '{\"python\": \"3.12\", \"transformers\": \"5\", \"trl\": \"1\", "
        "\"peft\": \"0.1\", \"torch\": \"2\", \"axolotl\": \"0.19\", \"cuda_devices\": 0, "
        "\"bf16\": false}' ;;\n"
        "  *--check-template*--max-length*) echo '{\"rendered\": 2, \"tool_calls\": 2, \"longest_tokens\": "
        "3577, \"longest_line\": 2, \"tokens\": {\"rows\": 2, \"p50\": 1200, \"p95\": 3577, \"p99\": 3577, "
        "\"max\": 3577, \"longest_line\": 2, \"longer_than_max_length\": 1}, \"eval_tokens\": null}' ;;\n"
        "  *--check-template*) echo '{\"rendered\": 2, \"tool_calls\": 2, \"longest_tokens\": 3577, "
        "\"longest_line\": 2, \"tokens\": {\"rows\": 2, \"p50\": 1200, \"p95\": 3577, \"p99\": 3577, "
        "\"max\": 3577, \"longest_line\": 2}, \"eval_tokens\": null}' ;;\n"
        "  *--finish-manifest*) exec /usr/bin/python3 \"$@\" ;;\n"
        "  *) save=''; prev=''\n"
        "     for a in \"$@\"; do [ \"$prev\" = --save ] && save=\"$a\"; prev=\"$a\"; done\n"
        "     echo \"$@\" >> \"$(dirname \"$0\")/trained-args\"\n"
        "     mkdir -p \"$save\"\n"
        "     echo 'kforge-train {\"done\": true, \"train_loss\": 1.5, \"steps\": 3}' ;;\n"
        "esac\n");
    Script("torchrun",
           "while [ $# -gt 0 ]; do case \"$1\" in *.py) break ;; *) shift ;; esac; done\n"
           "exec \"$(dirname \"$0\")/python3\" \"$@\"\n");
    Script("srun", "exec \"$@\"\n");
    Script("scontrol", "echo node1\n");
    Script("sbatch",
           "export SLURM_JOB_ID=4242 SLURM_JOB_NODELIST=node1 SLURM_NNODES=1 SLURM_CPUS_PER_TASK=8\n"
           "bash \"$1\" > \"$(dirname \"$1\")/slurm-4242.log\" 2>&1\n"
           "echo 'Submitted batch job 4242'\n");
  }
  void Script(const std::string& name, const std::string& body) {
    std::ofstream(bin_ / name) << "#!/bin/sh\n" << body;
    chmod((bin_ / name).c_str(), 0755);
  }
  std::vector<std::string> Fake(const std::string& out, std::vector<std::string> more = {}) {
    more.insert(more.end(), {"--python", (bin_ / "python3").string()});
    return Args(out, std::move(more));
  }
  std::string Env() const { return "PATH=" + bin_.string() + ":\"$PATH\""; }
  nlohmann::json Manifest(const fs::path& out) {
    std::ifstream in(out / "manifest.json");
    return nlohmann::json::parse(in, nullptr, false);
  }
  fs::path bin_;
};

// Without network, a hub model's tokenizer cannot be loaded: the wait is announced, and the failure
// says what to do instead.
TEST_F(FakeTrainerTest, AnUnreachableHubSaysWhatItLoadsAndHowToWorkOffline) {
  Script("python3-offline",
         "case \"$*\" in\n"
         "  *--versions*) echo '{\"python\": \"3.12\", \"transformers\": \"5\", \"trl\": \"1\", "
         "\"peft\": \"0.1\", \"torch\": \"2\", \"cuda_devices\": 0, \"bf16\": false}' ;;\n"
         "  *) echo \"OSError: We couldn't connect to 'https://huggingface.co' to load the files\" >&2; exit "
         "1 ;;\n"
         "esac\n");
  const fs::path out = dir_ / "offline";
  LaunchRun run = Launch(
      Args(out.string(), data_, "org/model", {"--python", (bin_ / "python3-offline").string()}), Env());
  EXPECT_NE(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("loading org/model's tokenizer from the Hugging Face Hub"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("HF_HUB_OFFLINE=1"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--model a local model folder"), std::string::npos) << run.err;
}

TEST_F(FakeTrainerTest, TheMeasuredLongestRowSetsTheLengthAndAShorterOneIsRefused) {
  const fs::path out = dir_ / "measured";
  LaunchRun run = Launch(Fake(out.string(), {"--dry-run"}), Env());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream in(out / "trl_config.json");
  EXPECT_EQ(nlohmann::json::parse(in)["max_length"], 3584) << "3577 tokens, rounded up to a multiple of 64";
  EXPECT_NE(
      run.err.find("max_seq_len 3584 (from the data: the longest row's 3577 measured tokens, percentile 100"),
      std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("tokens per row over 2 rows: p50 1200, p95 3577, p99 3577, max 3577 (line 2)"),
            std::string::npos)
      << run.err;

  // A dry run renders what a launch would: axolotl's precision as the trainer's Python reports it.
  const fs::path axolotl = dir_ / "axolotl-dry";
  LaunchRun dry = Launch(Fake(axolotl.string(), {"--backend", "axolotl", "--dry-run"}), Env());
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  std::ifstream yaml_in(axolotl / "axolotl.yaml");
  const std::string yaml((std::istreambuf_iterator<char>(yaml_in)), {});
  EXPECT_NE(yaml.find("\nbf16: false\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("\nsequence_len: 3584\n"), std::string::npos) << yaml;

  const fs::path refused_out = dir_ / "refused";
  LaunchRun refused = Launch(Fake(refused_out.string(), {"--max-seq-len", "2048"}), Env());
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(
      refused.err.find("kforge finetune-launch: --max-seq-len 2048 would cut 1 of the 2 rows of " + data_ +
                       " (the longest, line 2, is 3577 tokens with the chat template): raise it to "
                       "3584 or leave it unset\n"),
      std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(refused_out)) << "refused before anything is written";
}

TEST_F(FakeTrainerTest, ForceClearsWhatTheLastRunWroteAndResumeNeedsACheckpoint) {
  const fs::path out = dir_ / "again";
  fs::create_directories(out / "model");
  fs::create_directories(out / "checkpoints/checkpoint-7");
  std::ofstream(out / "model/model.safetensors") << "old";
  std::ofstream(out / "manifest.json") << "{}";
  std::ofstream(out / "notes.txt") << "mine";
  LaunchRun resumed_nothing = Launch(Fake((dir_ / "fresh").string(), {"--resume"}), Env());
  EXPECT_EQ(resumed_nothing.exit_code, 2);
  EXPECT_NE(resumed_nothing.err.find("--resume: no checkpoint-* folder in"), std::string::npos)
      << resumed_nothing.err;

  LaunchRun resumed = Launch(Fake(out.string(), {"--resume"}), Env());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  std::ifstream args_in(bin_ / "trained-args");
  std::string args((std::istreambuf_iterator<char>(args_in)), {});
  EXPECT_NE(args.find(" --resume"), std::string::npos) << args;
  EXPECT_TRUE(fs::exists(out / "checkpoints/checkpoint-7")) << "resuming keeps the checkpoints";

  LaunchRun forced = Launch(Fake(out.string(), {"--force"}), Env());
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_FALSE(fs::exists(out / "checkpoints")) << "the last run's checkpoints are gone";
  EXPECT_FALSE(fs::exists(out / "model/model.safetensors")) << "the last run's model is gone";
  EXPECT_TRUE(fs::exists(out / "model")) << "this run's model";
  EXPECT_TRUE(fs::exists(out / "notes.txt")) << "files no run wrote are left alone";
  EXPECT_EQ(Manifest(out)["exit_status"], 0);
  EXPECT_EQ(Manifest(out)["result"]["train_loss"], 1.5);
}

TEST_F(FakeTrainerTest, ASlurmJobCompletesItsManifestAndStatusReadsIt) {
  const fs::path out = dir_ / "slurm-run";
  LaunchRun run =
      Launch(Fake(out.string(), {"--launcher", "slurm", "--partition", "debug", "--time", "10"}), Env());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("sbatch submitted job 4242"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("trl exited"), std::string::npos) << "sbatch is not the trainer: " << run.err;
  nlohmann::json manifest = Manifest(out);
  EXPECT_EQ(manifest["slurm_job_id"], "4242");
  EXPECT_EQ(manifest["completed_by"], "job") << manifest.dump(2);
  EXPECT_EQ(manifest["exit_status"], 0);
  EXPECT_TRUE(manifest["ended_at"].is_string());
  EXPECT_EQ(manifest["result"]["steps"], 3) << "the done line of slurm-4242.log";

  LaunchRun status = Launch({"--status", out.string()}, Env());
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("trl via slurm (job 4242)"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("with exit status 0 (completed); 3 steps, train loss 1.5"), std::string::npos)
      << status.out;

  manifest["exit_status"] = nullptr;
  std::ofstream(out / "manifest.json") << manifest.dump();
  Script("squeue", "echo RUNNING\n");
  LaunchRun running = Launch({"--status", out.string()}, Env());
  EXPECT_EQ(running.exit_code, 3);
  EXPECT_NE(running.out.find("not finished (Slurm: RUNNING)"), std::string::npos) << running.out;
  LaunchRun none = Launch({"--status", (dir_ / "nothing").string()});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--status"), std::string::npos) << none.err;

  // The queue no longer knows a job that never recorded its end (killed before it could): --status says
  // so and how to resume, instead of "not finished" forever.
  Script("squeue", "echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1\n");
  Script("sacct", "echo 'TIMEOUT|0:0'\n");
  fs::create_directories(out / "checkpoints/checkpoint-2");
  LaunchRun gone = Launch({"--status", out.string()}, Env());
  EXPECT_EQ(gone.exit_code, 1) << gone.out;
  EXPECT_NE(gone.out.find("ended without recording its end: the job left the queue (Slurm: sacct: TIMEOUT|0:0); "
                          "resume from its last checkpoint: "),
            std::string::npos)
      << gone.out;
  EXPECT_NE(gone.out.find(" --launcher slurm --partition debug --time 10 --python " + (bin_ / "python3").string() +
                          " --resume"),
            std::string::npos)
      << gone.out;
}

// A CPU-only job on a small node: without --cpus-per-task it asks for no more CPUs than sinfo says the
// partition's nodes have (8 would pend forever on a 2-CPU node).
TEST_F(FakeTrainerTest, ASlurmJobAsksForNoMoreCpusThanTheNodesHave) {
  Script("sinfo", "case \"$*\" in *-p\\ small*) echo 2 ;; *) echo 64 ;; esac\n");
  const fs::path small = dir_ / "small";
  LaunchRun run = Launch(Fake(small.string(), {"--launcher", "slurm", "--gpus-per-node", "0", "--partition", "small",
                                               "--dry-run"}),
                         Env());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("#SBATCH --cpus-per-task=2\n"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("--cpus-per-task 2: the nodes of partition small have 2 CPUs (sinfo), fewer than the "
                         "default 8"),
            std::string::npos)
      << run.err;
  const fs::path big = dir_ / "big";
  LaunchRun roomy = Launch(Fake(big.string(), {"--launcher", "slurm", "--gpus-per-node", "0", "--dry-run"}), Env());
  ASSERT_EQ(roomy.exit_code, 0) << roomy.err;
  EXPECT_NE(roomy.out.find("#SBATCH --cpus-per-task=8\n"), std::string::npos) << roomy.out;
  const fs::path chosen = dir_ / "chosen";
  LaunchRun given = Launch(Fake(chosen.string(), {"--launcher", "slurm", "--gpus-per-node", "0", "--partition",
                                                 "small", "--cpus-per-task", "1", "--dry-run"}),
                           Env());
  EXPECT_NE(given.out.find("#SBATCH --cpus-per-task=1\n"), std::string::npos) << given.out;
}

// A job told to stop (SIGTERM: Slurm's warning before the time limit, `--signal=B:TERM@120`, or scancel)
// passes it on to the training and records it in the manifest; --status reports it with the resume command.
TEST_F(FakeTrainerTest, ASlurmJobStoppedBySigtermRecordsItAndStatusSaysHowToResume) {
  Script("python3",
         "case \"$*\" in\n"
         "  *--versions*) echo '{\"python\": \"3.12\", \"transformers\": \"5\", \"trl\": \"1\", \"torch\": \"2\"}' ;;\n"
         "  *--check-template*) echo '{\"rendered\": 2, \"tool_calls\": 2, \"longest_tokens\": 90, "
         "\"longest_line\": 1, \"tokens\": {\"rows\": 2, \"p50\": 80, \"p95\": 90, \"p99\": 90, \"max\": 90, "
         "\"longest_line\": 1}}' ;;\n"
         "  *--finish-manifest*) exec /usr/bin/python3 \"$@\" ;;\n"
         "  *) mkdir -p \"$(dirname \"$0\")/../slow-run/checkpoints/checkpoint-2\"\n"
         "     touch \"$(dirname \"$0\")/training\"; exec sleep 60 ;;\n"
         "esac\n");
  // sbatch queues the script in a session of its own (kforge ends the process group of what it ran) and
  // says where its shell is.
  Script("sbatch",
         "export SLURM_JOB_ID=4343 SLURM_JOB_NODELIST=node1 SLURM_NNODES=1 SLURM_CPUS_PER_TASK=8\n"
         "setsid bash \"$1\" > \"$(dirname \"$1\")/slurm-4343.log\" 2>&1 &\n"
         "echo $! > \"$(dirname \"$0\")/job.pid\"\n"
         // Returns once the job leads its own session: kforge ends sbatch's process group when it exits.
         "while [ \"$(ps -o sid= -p $! | tr -d ' ')\" != \"$!\" ]; do sleep 0.01; done\n"
         "echo 'Submitted batch job 4343'\n");
  const fs::path out = dir_ / "slow-run";
  LaunchRun run = Launch(Fake(out.string(), {"--launcher", "slurm", "--time", "10"}), Env());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream script_in(out / "launch.sbatch");
  const std::string script((std::istreambuf_iterator<char>(script_in)), {});
  EXPECT_NE(script.find("#SBATCH --signal=B:TERM@120\n"), std::string::npos) << script;
  for (int i = 0; i < 200 && !fs::exists(bin_ / "training"); ++i) usleep(50000);
  ASSERT_TRUE(fs::exists(bin_ / "training")) << "the training never started";
  std::ifstream pid_in(bin_ / "job.pid");
  pid_t job = 0;
  pid_in >> job;
  ASSERT_GT(job, 0);
  ASSERT_EQ(kill(job, SIGTERM), 0);
  nlohmann::json manifest;
  for (int i = 0; i < 200; ++i) {
    manifest = Manifest(out);
    if (manifest.is_object() && manifest["exit_status"].is_number()) break;
    usleep(50000);
  }
  ASSERT_TRUE(manifest["exit_status"].is_number()) << "the job did not record its end";
  EXPECT_EQ(manifest["job_signal"], "TERM");
  EXPECT_NE(manifest["exit_status"], 0);

  LaunchRun status = Launch({"--status", out.string()}, Env());
  EXPECT_EQ(status.exit_code, 1) << status.out;
  EXPECT_NE(status.out.find("(stopped by SIGTERM: the time limit's warning, or scancel); resume from its last "
                            "checkpoint: "),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find(" --resume"), std::string::npos) << status.out;
}

}  // namespace
