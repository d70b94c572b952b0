// Re-judging recorded attempts: the solutions of a run's best attempts through the verifier, and a
// `rejudged.jsonl` beside its trajectories, or NAME.rejudged.jsonl beside a records file NAME.jsonl
// (docs/formats.md, "Rejudge record").
#include "cli/rejudge.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/command.h"
#include "kforge/common/files.h"
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

/// The best attempts of `records` that carry a solution, written as solution lines to `solutions`; an
/// error when no line of `records` is a trajectory record, or when the file cannot be read through.
StatusOr<std::vector<Before>> CollectBest(const fs::path& records, const fs::path& solutions) {
  KFORGE_ASSIGN_OR_RETURN(auto reader, dataset::JsonlReader::Open(records));
  std::ofstream out(solutions, std::ios::trunc);
  if (!out) return Status::IoError("cannot write " + solutions.string());
  std::vector<Before> best;
  int64_t trajectories = 0;
  while (auto line = reader->Next()) {
    if (!line->value.ok() && line->value.status().code() == Status::Code::kIoError) return line->value.status();
    if (line->torn || !line->value.ok()) continue;
    auto t = dataset::TrajectoryFromJson(*line->value, records.string() + ":" + std::to_string(line->number));
    if (!t.ok()) continue;
    ++trajectories;
    if (!t->best) continue;
    const dataset::Attempt& a = t->attempts[*t->best];
    nlohmann::json solution = dataset::SolutionToRecord(a);
    if (!solution.is_object()) continue;
    solution["task"] = t->task.id;
    out << solution.dump() << "\n";
    Before b{t->id, t->task.id, std::string(a.StatusName()), a.correct, 1};
    if (a.verdict) b.judge = a.verdict->judge;
    best.push_back(std::move(b));
  }
  out.close();
  if (!out) return Status::IoError("cannot write " + solutions.string());
  if (trajectories == 0)
    return Status::InvalidArgument(records.string() +
                                   ": no trajectory record in it (kforge.trajectory/1 lines, as generate writes)");
  return best;
}

/// Where the new verdicts of `argument` go: RUN_DIR/rejudged.jsonl for a run folder (or its
/// trajectories.jsonl), NAME.rejudged.jsonl beside any other records file NAME.jsonl.
StatusOr<fs::path> RejudgedFile(const std::string& argument) {
  KFORGE_ASSIGN_OR_RETURN(fs::path records, exporter::ResolveRun(argument));
  std::error_code ec;
  if (fs::is_directory(argument, ec) || records.filename() == "trajectories.jsonl")
    return records.parent_path() / "rejudged.jsonl";
  return records.parent_path() / (records.stem().string() + ".rejudged.jsonl");
}

/// A private scratch folder for the solutions of one rejudge, removed when it goes.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "kforge-rejudge-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

/// Re-judges one run; counts into the totals. Returns a usage error, else Ok.
Status RejudgeRun(const std::string& argument, const verify::VerifyOptions& options, int& refused, int& harness) {
  KFORGE_ASSIGN_OR_RETURN(fs::path records, exporter::ResolveRun(argument));
  KFORGE_ASSIGN_OR_RETURN(const fs::path target, RejudgedFile(argument));
  if (common::SameFile(target, records))
    return Status::InvalidArgument(argument + ": its records are " + target.string() + ", which rejudge would write");
  const fs::path dir = target.parent_path();
  ScratchDir scratch;
  if (scratch.path.empty()) return Status::IoError("cannot create a scratch folder under " + fs::temp_directory_path().string());
  const fs::path solutions = scratch.path / "solutions.jsonl";
  auto best = CollectBest(records, solutions);
  if (!best.ok()) return best.status();
  const fs::path partial = dir / ("." + target.filename().string() + "." + std::to_string(getpid()));
  std::ofstream out(partial, std::ios::trunc);
  verify::Verifier verifier(options);
  verify::SolutionReader reader({solutions.string()});
  size_t i = 0;
  int was_correct = 0, still_ok = 0, now_refused = 0, older = 0;
  std::vector<std::string> refused_ids;
  verifier.Run(reader, [&](const common::Verdict& verdict, const std::optional<common::BenchResult>&) {
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
               argument.c_str(), best->size(), older, was_correct, still_ok, now_refused, target.string().c_str());
  for (const std::string& id : refused_ids) std::fprintf(stderr, "  refused now: %s\n", id.c_str());
  refused += now_refused;
  return Status::Ok();
}

}  // namespace

StatusOr<size_t> CollectBestAttempts(const fs::path& records, const fs::path& solutions) {
  KFORGE_ASSIGN_OR_RETURN(std::vector<Before> best, CollectBest(records, solutions));
  return best.size();
}

int RejudgeRuns(const std::vector<std::string>& runs, const verify::VerifyOptions& options) {
  std::vector<fs::path> targets;
  for (const std::string& run : runs) {
    StatusOr<fs::path> target = RejudgedFile(run);
    Status usage = target.status();
    for (size_t i = 0; usage.ok() && i < targets.size(); ++i)
      if (common::SameFile(targets[i], *target))
        usage = Status::InvalidArgument(runs[i] + " and " + run + " would both write " + targets[i].string());
    if (!usage.ok()) {
      return Fail("verify --rejudge", usage);
    }
    targets.push_back(*target);
  }
  int refused = 0, harness = 0;
  for (const std::string& run : runs) {
    if (Status done = RejudgeRun(run, options, refused, harness); !done.ok()) {
      return Fail("verify --rejudge", done);
    }
  }
  if (harness > 0) return kExitUsage;
  return refused > 0 ? kExitFailed : kExitOk;
}

}  // namespace kforge::cli
