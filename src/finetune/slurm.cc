// The Slurm batch script: `srun` starts one torchrun per node, which rendezvous on the first node.
#include <string>

#include "finetune/launchers.h"

namespace kforge::finetune {

std::string RenderSbatch(const LaunchOptions& o, const std::filesystem::path& config) {
  const std::string gpus = std::to_string(o.gpus_per_node);
  std::string script = "#!/bin/bash\n";
  script += "#SBATCH --job-name=kforge-finetune\n";
  script += "#SBATCH --nodes=" + std::to_string(o.nodes) + "\n";
  script += "#SBATCH --ntasks-per-node=1\n";
  script += "#SBATCH --gpus-per-node=" + gpus + "\n";
  script += "#SBATCH --output=" + (o.out / "slurm-%j.log").string() + "\n";
  script += "# Written by kforge finetune-launch (" + std::string(BackendName(o.backend)) +
            "); the run's manifest is manifest.json beside this script.\n";
  script += "set -euo pipefail\n";
  script += "head_node=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
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
                     " --rdzv_endpoint \"$head_node:" +
                     std::to_string(kSlurmRendezvousPort) + "\"";
  for (size_t i = 1; i < torchrun.size(); ++i) line += " " + ShellQuote(torchrun[i]);
  return script + line + "\n";
}

}  // namespace kforge::finetune
