// `kforge tasks audit ROOT`: zeros, a byte pattern, a copy of each input, half the reference's
// outputs and the reference's outputs on other inputs, judged against every task as a kernel would be.
// Prints each candidate the judge accepted and a table per candidate class; a task the import found
// degenerate, nondeterministic or ill-conditioned is counted apart, since no kernel can be judged there.
#include "cli/cmd_tasks_audit.h"

#include <fnmatch.h>

#include <cstdio>
#include <map>
#include <string>

#include "cli/cmd_tasks_check.h"
#include "cli/command.h"
#include "cli/options.h"
#include "kforge/common/task.h"
#include "kforge/verify/worker_protocol.h"
#include "kforge/verify/worker_session.h"

namespace kforge::cli {
namespace {

/// "copy:x" -> "copy" (the class), others unchanged.
std::string ClassOf(const std::string& name) { return name.substr(0, name.find(':')); }

struct ClassTally {
  int tried = 0, accepted = 0, accepted_unjudgeable = 0;
};

}  // namespace

int AuditTasks(const TasksAuditOptions& options) {
  auto tasks = common::LoadTaskTree(options.root);
  if (!tasks.ok()) {
    return Fail("tasks audit", tasks.status());
  }
  auto started = StartTaskWorker(options.device, options.worker_program);
  if (!started.ok()) {
    return Fail("tasks audit", started.status());
  }
  verify::WorkerSession& worker = **started;
  std::map<std::string, ClassTally> classes;
  int audited = 0, harness = 0, unjudgeable = 0, holes = 0;
  for (const common::Task& task : *tasks) {
    if (!options.filter.empty() && fnmatch(options.filter.c_str(), task.id.c_str(), 0) != 0) continue;
    verify::TaskAuditRequest request;
    request.task_dir = task.dir;
    request.seed = options.seed;
    request.trials = options.trials;
    verify::TaskAuditReply reply = worker.TaskAudit(request, std::chrono::seconds(options.timeout_s));
    ++audited;
    const std::string reason(task.UnjudgeableReason());
    unjudgeable += !reason.empty();
    if (options.json) {
      nlohmann::json record = reply.ToJson();
      record["task"] = task.id;
      record["unjudgeable"] = reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(reason);
      PrintJsonLine(record);
    }
    if (reply.status != verify::TaskAuditStatus::kOk) {
      ++harness;
      if (!options.json)
        std::printf("%-15s %s  %s\n", std::string(verify::TaskAuditStatusName(reply.status)).c_str(), task.id.c_str(),
                    reply.message.substr(0, 300).c_str());
      continue;
    }
    for (const verify::AuditedCandidate& c : reply.candidates) {
      ClassTally& tally = classes[ClassOf(c.name)];
      ++tally.tried;
      if (!c.accepted) continue;
      ++(reason.empty() ? tally.accepted : tally.accepted_unjudgeable);
      holes += reason.empty();
      if (!options.json)
        std::printf("accepted        %s  %s%s\n", task.id.c_str(), c.name.c_str(),
                    reason.empty() ? "" : ("  (task is " + reason + ")").c_str());
    }
    std::fflush(stdout);
  }
  std::fprintf(stderr, "%-14s %7s %9s %23s\n", "candidate", "tried", "accepted", "accepted (unjudgeable)");
  for (const auto& [name, t] : classes)
    std::fprintf(stderr, "%-14s %7d %9d %23d\n", name.c_str(), t.tried, t.accepted, t.accepted_unjudgeable);
  std::fprintf(stderr,
               "tasks audit: %d tasks (%d unjudgeable: degenerate, nondeterministic or ill_conditioned), "
               "%d no-work candidates accepted on judgeable tasks, %d harness_error\n",
               audited, unjudgeable, holes, harness);
  if (harness > 0) return kExitUsage;
  return holes > 0 ? kExitFailed : kExitOk;
}

}  // namespace kforge::cli
