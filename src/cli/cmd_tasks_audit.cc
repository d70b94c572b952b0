// `kforge tasks audit ROOT`: zeros, a byte pattern, a copy of each input, half the reference's
// outputs and the reference's outputs on other inputs, judged against every task as a kernel would be.
// Prints each candidate the judge accepted and a table per candidate class; a task the import found
// degenerate, nondeterministic or ill-conditioned is counted apart, since no kernel can be judged there.
// With --timing: correct candidates that cheat on speed (worker/timing_audit.h), each accepted when a
// checked timed run took its shortcut and counted as faster when its median is a fifth under the honest one's.
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

/// A timing cheat whose median is this far under the honest work's, from the same measurement, counts
/// as timed faster (a speedup of 1.25x, as bench's checks of the timing cheats use). Without a shortcut
/// the two do the same work: on an H100 their ratio ranged over 0.94-1.10 (220 pairs on KernelBench's
/// level 1, 111 on the bundled tasks down to 11 µs), where a memo that took its shortcut was 11x to 2590x
/// faster.
constexpr double kFasterMargin = 0.2;

/// "copy:x" -> "copy", "control:memo_unrestored" -> "control" (the class), others unchanged.
std::string ClassOf(const std::string& name) { return name.substr(0, name.find(':')); }

struct ClassTally {
  int tried = 0, accepted = 0, accepted_unjudgeable = 0, faster = 0;
};

bool TimedFaster(const verify::AuditedCandidate& c) {
  return c.timing && !c.timing->control && c.timing->median_ms > 0 && c.message.rfind("refused", 0) != 0 &&
         c.timing->median_ms < c.timing->honest_ms * (1 - kFasterMargin);
}

/// What the audit found over the tasks: per class, and the holes on judgeable tasks.
class AuditTally {
 public:
  explicit AuditTally(const TasksAuditOptions& options) : options_(options) {}

  void Add(const common::Task& task, const verify::TaskAuditReply& reply) {
    ++audited_;
    const std::string reason(task.UnjudgeableReason());
    unjudgeable_ += !reason.empty();
    if (options_.json) {
      nlohmann::json record = reply.ToJson();
      record["task"] = task.id;
      record["unjudgeable"] = reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(reason);
      PrintJsonLine(record);
    }
    if (reply.status != verify::TaskAuditStatus::kOk) {
      ++harness_;
      Say("%-15s %s  %s\n", std::string(verify::TaskAuditStatusName(reply.status)).c_str(), task.id.c_str(),
          reply.message.substr(0, 300).c_str());
      return;
    }
    for (const verify::AuditedCandidate& c : reply.candidates) AddCandidate(task, reason, c);
    std::fflush(stdout);
  }

  /// A task whose reference disagrees with itself: no timed run of it can be checked, so its timing is
  /// not audited (the honest work it wraps would fail its own checks).
  void AddUntimed(const common::Task& task) {
    ++audited_;
    ++unjudgeable_;
    ++untimed_;
    const std::string message = "not timed: the task is nondeterministic (its reference disagrees with itself), "
                                "so no timed run can be checked";
    if (options_.json) {
      PrintJsonLine({{"task", task.id}, {"unjudgeable", "nondeterministic"}, {"status", "not_timed"},
                     {"message", message}, {"candidates", nlohmann::json::array()}});
    }
    Say("not timed       %s  (task is nondeterministic: no timed run can be checked)\n", task.id.c_str());
  }

  /// The table and the summary line on stderr; the exit code.
  int Finish() const {
    std::fprintf(stderr, "%-14s %7s %9s %23s%s\n", "candidate", "tried", "accepted", "accepted (unjudgeable)",
                 options_.timing ? "   faster" : "");
    for (const auto& [name, t] : classes_) {
      std::fprintf(stderr, "%-14s %7d %9d %23d", name.c_str(), t.tried, t.accepted, t.accepted_unjudgeable);
      if (options_.timing) std::fprintf(stderr, " %8d", t.faster);
      std::fprintf(stderr, "\n");
    }
    if (options_.timing) {
      std::fprintf(stderr,
                   "tasks audit --timing: %d tasks (%d unjudgeable), %d timing cheats accepted on judgeable tasks "
                   "(a shortcut on a checked timed run), %d timed faster than their honest kernel, %d of %d "
                   "controls took their shortcut, %d harness_error, %d not timed (nondeterministic)\n",
                   audited_, unjudgeable_, holes_, faster_, controls_fired_, controls_, harness_, untimed_);
    } else {
      std::fprintf(stderr,
                   "tasks audit: %d tasks (%d unjudgeable: degenerate, nondeterministic or ill_conditioned), "
                   "%d no-work candidates accepted on judgeable tasks, %d harness_error\n",
                   audited_, unjudgeable_, holes_, harness_);
    }
    if (harness_ > 0) return kExitUsage;
    return holes_ + faster_ > 0 ? kExitFailed : kExitOk;
  }

 private:
  void AddCandidate(const common::Task& task, const std::string& reason, const verify::AuditedCandidate& c) {
    ClassTally& tally = classes_[ClassOf(c.name)];
    if (c.message.rfind("not applicable", 0) == 0) return;  // e.g. a memo whose outputs do not fit
    ++tally.tried;
    const std::string note = reason.empty() ? "" : "  (task is " + reason + ")";
    if (c.timing && c.timing->control) {
      ++controls_;
      controls_fired_ += c.accepted;
      tally.accepted += c.accepted;
      if (!c.accepted) Say("control silent  %s  %s: %s\n", task.id.c_str(), c.name.c_str(), c.message.c_str());
      return;
    }
    if (TimedFaster(c)) {
      ++tally.faster;
      faster_ += reason.empty();
      Say("faster          %s  %s  %.4f ms, honest %.4f ms%s\n", task.id.c_str(), c.name.c_str(), c.timing->median_ms,
          c.timing->honest_ms, note.c_str());
    }
    if (!c.accepted) return;
    ++(reason.empty() ? tally.accepted : tally.accepted_unjudgeable);
    holes_ += reason.empty();
    Say("accepted        %s  %s%s\n", task.id.c_str(), c.name.c_str(), note.c_str());
  }

  template <typename... Args>
  void Say(const char* format, Args... args) const {
    if (!options_.json) std::printf(format, args...);
  }

  const TasksAuditOptions& options_;
  std::map<std::string, ClassTally> classes_;
  int audited_ = 0, harness_ = 0, unjudgeable_ = 0, holes_ = 0, faster_ = 0, controls_ = 0, controls_fired_ = 0,
      untimed_ = 0;
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
  AuditTally tally(options);
  for (const common::Task& task : *tasks) {
    if (!options.filter.empty() && fnmatch(options.filter.c_str(), task.id.c_str(), 0) != 0) continue;
    if (options.timing && task.WhyUnjudgeable() == common::Judgeability::kNondeterministic) {
      tally.AddUntimed(task);
      continue;
    }
    verify::TaskAuditRequest request;
    request.task_dir = task.dir;
    request.seed = options.seed;
    request.trials = options.trials;
    request.timing = options.timing;
    tally.Add(task, worker.TaskAudit(request, std::chrono::seconds(options.timeout_s)));
  }
  return tally.Finish();
}

}  // namespace kforge::cli
