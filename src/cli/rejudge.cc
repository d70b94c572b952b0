// Re-judging recorded attempts: the solutions of a run's best attempts through the verifier, and a
// `rejudged.jsonl` beside its trajectories (docs/formats.md, "Rejudge record").
#include "cli/rejudge.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/command.h"
#include "kforge/dataset/jsonl.h"
#include "kforge/dataset/trajectory.h"
#include "kforge/export/scan.h"
#include "kforge/verify/verifier.h"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

/// What a record said of its best attempt before.
struct Before {
  std::string id, task, status;
  bool correct = false;
  int judge = 1;
};

/// The best attempts of `records` that carry a solution, written as solution lines to `solutions`.
StatusOr<std::vector<Before>> CollectBest(const fs::path& records, const fs::path& solutions) {
  KFORGE_ASSIGN_OR_RETURN(auto reader, dataset::JsonlReader::Open(records));
  std::ofstream out(solutions, std::ios::trunc);
  if (!out) return Status::IoError("cannot write " + solutions.string());
  std::vector<Before> best;
  while (auto line = reader->Next()) {
    if (line->torn || !line->value.ok()) continue;
    auto t = dataset::TrajectoryFromJson(*line->value, records.string() + ":" + std::to_string(line->number));
    if (!t.ok() || !t->best) continue;
    const dataset::Attempt& a = t->attempts[*t->best];
    if (!a.solution.is_object()) continue;
    nlohmann::json solution = a.solution;
    solution["task"] = t->task.id;
    out << solution.dump() << "\n";
    Before b{t->id, t->task.id, a.status, a.correct, 1};
    if (a.verdict) b.judge = a.verdict->judge;
    best.push_back(std::move(b));
  }
  out.close();
  if (!out) return Status::IoError("cannot write " + solutions.string());
  return best;
}

/// Re-judges one run; counts into the totals. Returns a usage error, else Ok.
Status RejudgeRun(const std::string& argument, const verify::VerifyOptions& options, int& refused, int& harness) {
  KFORGE_ASSIGN_OR_RETURN(fs::path records, exporter::ResolveRun(argument));
  const fs::path dir = records.parent_path();
  const fs::path solutions = dir / (".rejudge-" + std::to_string(getpid()) + ".jsonl");
  const fs::path target = dir / "rejudged.jsonl";
  const fs::path partial = dir / (".rejudged-" + std::to_string(getpid()) + ".jsonl");
  auto best = CollectBest(records, solutions);
  if (!best.ok()) {
    fs::remove(solutions);
    return best.status();
  }
  std::ofstream out(partial, std::ios::trunc);
  verify::Verifier verifier(options);
  verify::SolutionReader reader({solutions.string()});
  size_t i = 0;
  int was_correct = 0, still_ok = 0, now_refused = 0, older = 0;
  std::vector<std::string> refused_ids;
  verifier.Run(reader, [&](const common::Verdict& verdict, const std::any&) {
    const Before& b = (*best)[i++];
    bool ok = verdict.status == common::VerdictStatus::kOk;
    was_correct += b.correct;
    older += b.judge < common::kJudgeVersion;
    if (b.correct && ok) ++still_ok;
    if (b.correct && !ok && verdict.status != common::VerdictStatus::kHarnessError) {
      ++now_refused;
      if (refused_ids.size() < 20) refused_ids.push_back(b.id + " (" + verdict.message.substr(0, 120) + ")");
    }
    harness += verdict.status == common::VerdictStatus::kHarnessError;
    nlohmann::json line = {{"schema", "kforge.rejudge/1"},
                           {"id", b.id},
                           {"task", b.task},
                           {"before", {{"status", b.status}, {"correct", b.correct}, {"judge", b.judge}}},
                           {"verdict", verdict.ToJson()}};
    out << line.dump() << "\n";
  });
  out.close();
  fs::remove(solutions);
  if (!out) {
    fs::remove(partial);
    return Status::IoError("cannot write " + target.string());
  }
  std::error_code ec;
  fs::rename(partial, target, ec);
  if (ec) return Status::IoError("cannot write " + target.string() + ": " + ec.message());
  std::fprintf(stderr,
               "rejudge %s: %zu best attempts (%d from an older judge), %d correct before, %d still ok, "
               "%d refused now -> %s\n",
               dir.string().c_str(), best->size(), older, was_correct, still_ok, now_refused, target.string().c_str());
  for (const std::string& id : refused_ids) std::fprintf(stderr, "  refused now: %s\n", id.c_str());
  refused += now_refused;
  return Status::Ok();
}

}  // namespace

int RejudgeRuns(const std::vector<std::string>& runs, const verify::VerifyOptions& options) {
  int refused = 0, harness = 0;
  for (const std::string& run : runs) {
    if (Status done = RejudgeRun(run, options, refused, harness); !done.ok()) {
      std::fprintf(stderr, "kforge verify --rejudge: %s\n", done.message().c_str());
      return kExitUsage;
    }
  }
  if (harness > 0) return kExitUsage;
  return refused > 0 ? kExitFailed : kExitOk;
}

}  // namespace kforge::cli
