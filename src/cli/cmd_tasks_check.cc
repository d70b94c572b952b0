// `kforge tasks check ROOT`: every task's reference through the real harness in a GPU worker, one
// line per task (pass/fail, peak device memory against the footprint, time) and a summary. A task
// that the import found ill-conditioned (task.json's `conditioning`) is counted on its own: it
// cannot judge a kernel, whatever the worker says of it.
#include "cli/cmd_tasks_check.h"

#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/reference_sol.h"
#include "kforge/bench/wire.h"
#include "kforge/common/task.h"
#include "kforge/verify/worker_protocol.h"
#include "kforge/verify/worker_session.h"

namespace kforge::cli {
namespace {

std::string GiB(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (int64_t{1} << 30));
  return text;
}

/// The largest peak/footprint ratio over the reply's variants (0 when none ran).
double WorstRatio(const verify::TaskCheckReply& reply, int64_t& peak, int64_t& footprint) {
  double worst = 0;
  for (const verify::TaskCheckVariant& v : reply.variants) {
    int64_t p = v.memory.peak_device_bytes, f = v.memory.footprint_bytes;
    double ratio = f > 0 ? static_cast<double>(p) / static_cast<double>(f) : 0;
    if (ratio >= worst) {
      worst = ratio;
      peak = p;
      footprint = f;
    }
  }
  return worst;
}

/// The status a task's line shows: the worker's, or why the import found the task cannot judge a
/// kernel when the harness could run it (ok or fail).
enum class Shown { kOk, kFail, kIllConditioned, kDegenerate, kNondeterministic, kHarnessError, kNoGpu };
constexpr common::NameTable<Shown, 7> kShownNames = {{{Shown::kOk, "ok"},
                                                      {Shown::kFail, "fail"},
                                                      {Shown::kIllConditioned, "ill_conditioned"},
                                                      {Shown::kDegenerate, "degenerate"},
                                                      {Shown::kNondeterministic, "nondeterministic"},
                                                      {Shown::kHarnessError, "harness_error"},
                                                      {Shown::kNoGpu, "no_gpu"}}};
static_assert(kShownNames.MatchesEnum());

Shown ShownStatus(const common::Task& task, verify::TaskCheckStatus worker) {
  using verify::TaskCheckStatus;
  switch (worker) {
    case TaskCheckStatus::kHarnessError:
      return Shown::kHarnessError;
    case TaskCheckStatus::kNoGpu:
      return Shown::kNoGpu;
    case TaskCheckStatus::kOk:
    case TaskCheckStatus::kFail:
      break;
  }
  switch (task.WhyUnjudgeable()) {
    case common::Judgeability::kDegenerate:
      return Shown::kDegenerate;
    case common::Judgeability::kNondeterministic:
      return Shown::kNondeterministic;
    case common::Judgeability::kIllConditioned:
      return Shown::kIllConditioned;
    case common::Judgeability::kJudgeable:
      break;
  }
  return worker == TaskCheckStatus::kOk ? Shown::kOk : Shown::kFail;
}

/// The worker's word on a task: its status, and its message when there is one.
std::string WorkerWord(const verify::TaskCheckReply& reply) {
  return std::string(verify::TaskCheckStatusName(reply.status)) +
         (reply.message.empty() ? "" : ": " + reply.message);
}

/// What an ill_conditioned line says after the figures: the import's measure, then the worker's word.
std::string IllConditionedMessage(const common::Conditioning& c, const verify::TaskCheckReply& reply) {
  char rel_l2[32] = "(none)";
  if (c.float64_rel_l2) std::snprintf(rel_l2, sizeof rel_l2, "%.4g", *c.float64_rel_l2);
  char text[200];
  std::snprintf(text, sizeof text,
                "a float64 run of the reference differs from the golden outputs by relative L2 %s "
                "(the judge allows %g); worker: ",
                rel_l2, c.rel_l2_bound);
  return text + WorkerWord(reply);
}

/// What a degenerate or nondeterministic line says: the import's measure, then the worker's word.
std::string BehaviourMessage(const common::Behaviour& b, const verify::TaskCheckReply& reply) {
  std::string text;
  if (b.degenerate) {
    text = "the outputs do not depend on the inputs (";
    for (const auto& [name, dependence] : b.outputs)
      text += (text.back() == '(' ? "" : ", ") + name + " " +
              std::string(common::OutputDependenceName(dependence));
    text += ", measured on variant " + b.variant + ")";
  } else {
    text = "a rerun of the reference on the same inputs differs in " + std::to_string(b.rerun_mismatches) +
           " elements (variant " + b.variant + ")";
  }
  return text + "; worker: " + WorkerWord(reply);
}

/// The message of a task's line.
std::string LineMessage(const common::Task& task, Shown shown, const verify::TaskCheckReply& reply) {
  switch (shown) {
    case Shown::kIllConditioned:
      return IllConditionedMessage(*task.conditioning, reply);
    case Shown::kDegenerate:
    case Shown::kNondeterministic:
      return BehaviourMessage(*task.behaviour, reply);
    case Shown::kOk:
    case Shown::kFail:
    case Shown::kHarnessError:
    case Shown::kNoGpu:
      return reply.message;
  }
  return reply.message;
}

/// task.json's `conditioning` object, as written there.
nlohmann::json ConditioningJson(const common::Conditioning& c) {
  nlohmann::json rel_l2 = nullptr;
  if (c.float64_rel_l2) rel_l2 = std::isfinite(*c.float64_rel_l2) ? nlohmann::json(*c.float64_rel_l2) : "inf";
  return {{"float64_rel_l2", rel_l2},
          {"float64_mismatches", c.float64_mismatches},
          {"numel", c.numel},
          {"rel_l2_bound", c.rel_l2_bound},
          {"ill_conditioned", c.ill_conditioned}};
}

/// Tasks counted by the status their lines show.
struct Tally {
  int checked = 0, ok = 0, failed = 0, ill_conditioned = 0, degenerate = 0, nondeterministic = 0, harness = 0;

  void Add(Shown shown) {
    ++checked;
    ++Count(shown);
  }
  int& Count(Shown shown) {
    switch (shown) {
      case Shown::kOk:
        return ok;
      case Shown::kFail:
        return failed;
      case Shown::kIllConditioned:
        return ill_conditioned;
      case Shown::kDegenerate:
        return degenerate;
      case Shown::kNondeterministic:
        return nondeterministic;
      case Shown::kHarnessError:
      case Shown::kNoGpu:
        return harness;
    }
    return harness;
  }
};

/// The CI outcome of a task's line: ok passes, fail fails, a task the import found unable to judge is
/// skipped, the harness's failures are errors.
CiCase::Outcome OutcomeOf(Shown shown) {
  switch (shown) {
    case Shown::kOk:
      return CiCase::Outcome::kPassed;
    case Shown::kFail:
      return CiCase::Outcome::kFailed;
    case Shown::kIllConditioned:
    case Shown::kDegenerate:
    case Shown::kNondeterministic:
      return CiCase::Outcome::kSkipped;
    case Shown::kHarnessError:
    case Shown::kNoGpu:
      return CiCase::Outcome::kError;
  }
  return CiCase::Outcome::kError;
}

CiCase TaskCase(const common::Task& task, Shown shown, const std::string& message, int64_t peak,
                int64_t footprint, double seconds) {
  CiCase c;
  c.classname = task.id;
  c.name = task.id;
  c.status = kShownNames.Name(shown);
  c.message = shown == Shown::kOk ? "" : message;
  c.seconds = seconds;
  c.outcome = OutcomeOf(shown);
  c.properties = {{"status", c.status}};
  if (peak > 0) c.properties.emplace_back("peak_device_bytes", std::to_string(peak));
  if (footprint > 0) c.properties.emplace_back("footprint_bytes", std::to_string(footprint));
  return c;
}

/// "cuda" -> 0, "cuda:N" -> N.
StatusOr<int> ParseCudaDevice(const std::string& text) {
  if (text == "cuda") return 0;
  if (text.rfind("cuda:", 0) == 0) {
    auto devices = ParseDeviceList(text.substr(5));
    if (devices.ok() && devices->size() == 1) return devices->front();
  }
  return Status::InvalidArgument("expected cuda or cuda:N, got \"" + text.substr(0, 40) + "\"");
}

/// A task's check as one JSON record: the worker's reply, with the task, its shown status, its
/// conditioning and its reference's roofline.
void PrintTaskRecord(const common::Task& task, Shown shown, const verify::TaskCheckReply& reply,
                     const std::optional<bench::Roofline>& roofline) {
  nlohmann::json record = reply.ToJson();
  record["task"] = task.id;
  record["ill_conditioned"] = shown == Shown::kIllConditioned;
  record["shown"] = std::string(kShownNames.Name(shown));
  if (task.conditioning) record["conditioning"] = ConditioningJson(*task.conditioning);
  record["reference_roofline"] = roofline ? ReferenceRooflineJson(task, *roofline) : nlohmann::json(nullptr);
  PrintJsonLine(record);
}

/// A task's check as one line: status, id, memory, the reference's time and %SOL, and why it failed.
void PrintTaskLine(const common::Task& task, Shown shown, const verify::TaskCheckReply& reply,
                   const std::optional<bench::Roofline>& roofline, int64_t peak, int64_t footprint, double ratio) {
  const std::string status(kShownNames.Name(shown));
  double ms = 0;
  for (const verify::TaskCheckVariant& v : reply.variants) ms = std::max(ms, v.reference_ms);
  std::string message = LineMessage(task, shown, reply);
  char sol[64] = "";
  if (roofline) std::snprintf(sol, sizeof sol, "  %%SOL %.1f (floor %.3f ms)", roofline->sol_pct, roofline->sol_ms);
  std::printf("%-15s %-60s peak %s / footprint %s (%.2fx)  ref %.3f ms%s%s%s\n", status.c_str(), task.id.c_str(),
              GiB(peak).c_str(), GiB(footprint).c_str(), ratio, ms, sol, shown == Shown::kOk ? "" : "  ",
              message.substr(0, 400).c_str());
  std::fflush(stdout);
}

/// What the tasks checked so far add up to, for the summary.
struct Totals {
  Tally tally;
  SolBands bands;
  double worst = 0;  ///< The largest peak/footprint ratio, and its task.
  std::string worst_task;
};

/// One task's check in the worker: its line (or JSON record), its CI case, and its share of `totals`.
void CheckOneTask(verify::WorkerSession& worker, const common::Task& task, const TasksCheckOptions& options,
                  const std::optional<common::DevicePeak>& device_peak, CiReport& ci, Totals& totals) {
  verify::TaskCheckRequest request;
  request.task_dir = task.dir;
  request.seed = options.seed;
  auto started_at = std::chrono::steady_clock::now();
  verify::TaskCheckReply reply = worker.TaskCheck(request, std::chrono::seconds(options.timeout_s));
  const Shown shown = ShownStatus(task, reply.status);
  totals.tally.Add(shown);
  int64_t peak = 0, footprint = 0;
  double ratio = WorstRatio(reply, peak, footprint);
  ci.Add(TaskCase(task, shown, LineMessage(task, shown, reply), peak, footprint,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at).count()));
  if (ratio > totals.worst) {
    totals.worst = ratio;
    totals.worst_task = task.id;
  }
  std::optional<bench::Roofline> roofline = reply.status == verify::TaskCheckStatus::kOk
                                                ? ReferenceRoofline(task, reply, device_peak)
                                                : std::nullopt;
  if (roofline) totals.bands.Add(roofline->sol_pct);
  if (options.json) {
    PrintTaskRecord(task, shown, reply, roofline);
  } else {
    PrintTaskLine(task, shown, reply, roofline, peak, footprint, ratio);
  }
}

}  // namespace

StatusOr<std::unique_ptr<verify::WorkerSession>> StartTaskWorker(const std::string& device_text,
                                                                 const std::string& worker_program,
                                                                 std::optional<common::DevicePeak>* peak) {
  auto device = ParseCudaDevice(device_text);
  if (!device.ok()) return Status::InvalidArgument("--device: " + device.status().message());
  verify::WorkerSessionOptions options;
  options.program = worker_program.empty() ? SelfExecutable() : std::filesystem::path(worker_program);
  options.device = *device;
  options.peak = peak != nullptr;
  options.hello_timeout = std::chrono::seconds(120);
  auto worker = std::make_unique<verify::WorkerSession>(options);
  const verify::HelloReply& hello = worker->Hello();
  if (hello.status != common::VerdictStatus::kOk) return Status::Unavailable("needs a GPU: " + hello.message);
  if (peak) *peak = hello.peak;
  return worker;
}

int CheckTasks(const TasksCheckOptions& options) {
  int shard_index = 0, shard_count = 1;
  if (Status usage = ParseShard(options.shard, shard_index, shard_count); !usage.ok()) {
    return Fail("tasks check", usage);
  }
  auto tasks = common::LoadTaskTree(options.root);
  if (!tasks.ok()) {
    return Fail("tasks check", tasks.status());
  }
  CiReport ci("kforge tasks check", options.ci, {});
  if (Status usage = ci.CheckUsage(); !usage.ok()) {
    return Fail("tasks check", usage);
  }
  std::optional<common::DevicePeak> device_peak;
  auto started = StartTaskWorker(options.device, options.worker_program, &device_peak);
  if (!started.ok()) {
    return Fail("tasks check", started.status());
  }
  verify::WorkerSession& worker = **started;
  Totals totals;
  int64_t position = 0;  // among the tasks the filter keeps
  for (const common::Task& task : *tasks) {
    if (!options.filter.empty() && fnmatch(options.filter.c_str(), task.id.c_str(), 0) != 0) continue;
    if (position++ % shard_count != shard_index) continue;
    CheckOneTask(worker, task, options, device_peak, ci, totals);
  }
  const Tally& tally = totals.tally;
  std::fprintf(
      stderr,
      "tasks check: %d tasks, %d ok, %d fail, %d ill_conditioned, %d degenerate, %d nondeterministic, "
      "%d harness_error; worst peak/footprint %.2fx%s\n",
      tally.checked, tally.ok, tally.failed, tally.ill_conditioned, tally.degenerate, tally.nondeterministic,
      tally.harness, totals.worst, totals.worst_task.empty() ? "" : (" (" + totals.worst_task + ")").c_str());
  std::fprintf(stderr, "%s%s\n", totals.bands.Summary().c_str(),
               device_peak ? "" : " (the device's peaks are unknown)");
  ci.AddSuiteProperty("seed", std::to_string(options.seed));
  if (Status written = ci.Finish(); !written.ok()) {
    return Fail("tasks check", written);
  }
  if (tally.harness > 0) return kExitUsage;
  return tally.failed > 0 ? kExitFailed : kExitOk;
}

}  // namespace kforge::cli
