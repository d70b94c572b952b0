// The Slurm batch script: `srun` starts one torchrun per node, which rendezvous on the first node;
// when it ends, the job itself records its end and exit status in the run's manifest.
#include <string>

#include "finetune/launchers.h"

namespace kforge::finetune {

std::string RenderSbatch(const LaunchOptions& o, const std::filesystem::path& config) {
  const std::string gpus = std::to_string(ProcessesPerNode(o));
  std::string script = "#!/bin/bash\n";
  script += "#SBATCH --job-name=kforge-finetune\n";
  script += "#SBATCH --nodes=" + std::to_string(o.nodes) + "\n";
  script += "#SBATCH --ntasks-per-node=1\n";
  if (o.gpus_per_node > 0) script += "#SBATCH --gpus-per-node=" + gpus + "\n";  // none on a CPU-only run
  const int cpus = o.slurm.cpus_per_task > 0 ? o.slurm.cpus_per_task : kCpusPerGpu * ProcessesPerNode(o);
  script += "#SBATCH --cpus-per-task=" + std::to_string(cpus) + "\n";
  if (!o.slurm.partition.empty()) script += "#SBATCH --partition=" + o.slurm.partition + "\n";
  if (!o.slurm.account.empty()) script += "#SBATCH --account=" + o.slurm.account + "\n";
  if (!o.slurm.time.empty()) script += "#SBATCH --time=" + o.slurm.time + "\n";
  if (!o.slurm.mem.empty()) script += "#SBATCH --mem=" + o.slurm.mem + "\n";
  script += "#SBATCH --output=" + (o.out / "slurm-%j.log").string() + "\n";
  // SIGTERM to this script 120 s before the time limit's kill, to record how the job ended.
  script += "#SBATCH --signal=B:TERM@" + std::to_string(kSlurmSignalLeadSeconds) + "\n";
  script += "# Written by kforge finetune-launch (" + std::string(BackendName(o.backend)) +
            "); the run's manifest is manifest.json beside this script.\n";
  script += "set -euo pipefail\n";
  script += "head_node=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
  script += "rdzv_port=$((" + std::to_string(kSlurmRendezvousPortBase) + " + (SLURM_JOB_ID * 7919 + RANDOM) % " +
            std::to_string(kSlurmRendezvousPortSpan) + "))\n";
  script += "export PYTHONUNBUFFERED=1\n";
  if (const std::string folder = PythonFolder(o.python); !folder.empty())
    script += "export PATH=" + ShellQuote(folder) + ":\"$PATH\"\n";
  std::vector<std::string> torchrun = {Beside(o.python, "torchrun"), "--nproc_per_node", gpus};
  std::vector<std::string> trainer = TrainerArgs(o, config);
  torchrun.insert(torchrun.end(), trainer.begin(), trainer.end());
  // The rendezvous arguments name shell variables, so they are written unquoted, after srun and
  // the launcher's path.
  std::string line = "srun " + ShellQuote(torchrun[0]) +
                     " --nnodes \"$SLURM_NNODES\" --rdzv_id \"$SLURM_JOB_ID\" --rdzv_backend c10d"
                     " --rdzv_endpoint \"$head_node:$rdzv_port\"";
  for (size_t i = 1; i < torchrun.size(); ++i) line += " " + ShellQuote(torchrun[i]);
  // srun's tasks get the job's CPUs (Slurm 22.05+ no longer passes --cpus-per-task on to srun).
  script += "export SRUN_CPUS_PER_TASK=\"$SLURM_CPUS_PER_TASK\"\n";
  // The training runs in the background so that a TERM (the time limit's warning, scancel) reaches the
  // trap: it is passed on to srun, and the manifest records it once training has stopped.
  script += "set +e\nsignal=\n" + line + " &\ntrain=$!\n";
  script += "trap 'signal=TERM; kill -TERM \"$train\" 2>/dev/null' TERM\n";
  script += "trap 'signal=INT; kill -INT \"$train\" 2>/dev/null' INT\n";
  script += "wait \"$train\"\nstatus=$?\n";
  script += "while kill -0 \"$train\" 2>/dev/null; do wait \"$train\"; status=$?; done\n";
  script += ShellJoin({o.python, o.trl_script.string(), "--finish-manifest", o.out.string()}) +
            " --exit-status \"$status\" ${signal:+--signal \"$signal\"} || echo \"kforge: could not complete "
            "manifest.json\" >&2\n";
  return script + "exit \"$status\"\n";
}

}  // namespace kforge::finetune
