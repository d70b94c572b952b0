// The checks of a RunRequest that span several options (finetune/run.h).
#include <string>

#include "kforge/finetune/hub.h"
#include "kforge/finetune/run.h"

namespace kforge::finetune {

Status CheckRunRequest(const RunRequest& request) {
  const LaunchOptions& o = request.launch;
  const bool grpo = o.trainer == Trainer::kGrpo;
  if (!grpo && (!o.grpo.servers.empty() || !o.grpo.token_file.empty()))
    return Status::InvalidArgument("--reward-server and --token-file need --trainer grpo");
  // GRPO's prompts are the server's tasks unless --data names others.
  if (!grpo && o.data.empty()) return Status::InvalidArgument("--data is required (or --status RUN)");
  if (o.model.empty()) return Status::InvalidArgument("--model is required (or --status RUN)");
  if (o.out.empty()) return Status::InvalidArgument("--out is required (or --status RUN)");
  if (!request.push_to_hub.empty()) {
    KFORGE_RETURN_IF_ERROR(CheckHubRepo(request.push_to_hub));
    if (o.launcher == Launcher::kSlurm)
      return Status::InvalidArgument(
          "--push-to-hub with --launcher slurm: the model exists once the job has "
          "ended; upload DIR/model then (scripts/hub_push.py)");
  }
  return Status::Ok();
}

}  // namespace kforge::finetune
