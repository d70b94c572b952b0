// The export driver: first pass (filters, candidates), selection, second pass (rows), card.
#include "kforge/export/exporter.h"

#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "export/dedup.h"
#include "export/holdout.h"
#include "export/kernelbench.h"
#include "export/preference.h"
#include "export/selection.h"
#include "export/sinks.h"
#include "kforge/common/files.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/verdict.h"

namespace kforge::exporter {
namespace {

namespace fs = std::filesystem;

/// What the first pass keeps.
struct Collected {
  std::vector<TaskEntry> tasks;
  std::vector<MinHash> references;  ///< per task, when a holdout is given
  std::vector<Candidate> candidates;
  std::vector<CompactMinHash> signatures;  ///< per candidate, with --near-dup
};

uint32_t IdHash(const std::string& id) { return static_cast<uint32_t>(Hash64(id)); }

/// The best attempt's solution as its record holds it; null when there is none.
nlohmann::json BestSolution(const dataset::Trajectory& t) {
  return t.best ? dataset::SolutionToRecord(t.attempts[*t.best]) : nlohmann::json(nullptr);
}

/// The judge version of a record's best attempt (1 for verdicts written before the field).
int JudgedBy(const dataset::Trajectory& t) {
  if (!t.best) return common::kJudgeVersion;
  const std::optional<common::Verdict>& verdict = t.attempts[*t.best].verdict;
  return verdict ? verdict->judge : common::kJudgeVersion;
}

/// The plain file names a previous export listed in OUT/stats.json (its manifest); nullopt when there
/// is no stats.json of an export.
std::optional<std::set<std::string>> PreviousExportFiles(const fs::path& out) {
  StatusOr<std::string> text = common::ReadFile(out / "stats.json");
  if (!text.ok()) return std::nullopt;
  StatusOr<nlohmann::json> stats = common::ParseJson(*text, "stats.json");
  if (!stats.ok() || !stats->is_object() || stats->value("schema", "") != kExportStatsSchema) return std::nullopt;
  std::set<std::string> names = {"stats.json"};
  const nlohmann::json& files = (*stats)["files"];
  if (!files.is_array()) return names;
  for (const nlohmann::json& name : files) {
    if (!name.is_string()) continue;
    fs::path file = name.get<std::string>();
    if (file.has_parent_path() || file.empty() || file == "." || file == "..") continue;
    names.insert(file.string());
  }
  return names;
}

/// Removes the files a previous export listed in its stats.json (plain names inside `out` only; a
/// link is removed, never followed).
void RemovePreviousExport(const fs::path& out) {
  std::optional<std::set<std::string>> names = PreviousExportFiles(out);
  if (!names) return;
  for (const std::string& name : *names) {
    std::error_code ec;
    fs::remove(out / name, ec);
  }
}

/// The names this export writes that it knows before the first row (the KernelBench files are
/// checked as they are written) must be absent or a previous export's: --force replaces what an
/// export wrote, never a file of someone else's.
Status CheckNamesFree(const ExportOptions& options) {
  std::set<std::string> ours;
  if (options.force)
    if (std::optional<std::set<std::string>> previous = PreviousExportFiles(options.out)) ours = *previous;
  std::vector<std::string> names = {"stats.json", "README.md"};
  if (options.format == Format::kKernelBench) {
    names.push_back("index.jsonl");
  } else {
    const std::string extension = "." + std::string(FileFormatName(options.file_format));
    for (const std::string& split : options.split.Names()) names.push_back(split + extension);
  }
  for (const std::string& name : names) {
    std::error_code ec;
    if (fs::symlink_status(options.out / name, ec).type() != fs::file_type::not_found && !ours.count(name))
      return Status::InvalidArgument("--out " + options.out.string() + ": " + name +
                                     " is not from a previous export (no stats.json there lists it); move "
                                     "it away or use another --out");
  }
  return Status::Ok();
}

/// Creates the output folder and makes room for this export's files (CheckNamesFree, then what a previous
/// export wrote is removed with --force). True when it made the folder.
StatusOr<bool> PrepareOutput(const ExportOptions& options) {
  std::error_code ec;
  const bool made = fs::create_directories(options.out, ec);
  if (ec) return Status::IoError("--out " + options.out.string() + ": " + ec.message());
  KFORGE_RETURN_IF_ERROR(CheckNamesFree(options));
  if (options.force) RemovePreviousExport(options.out);
  return made;
}

/// Closes `sink` after its rows were written (`rows`), then writes stats.json and the card. A failed
/// export removes what it wrote; an empty one writes nothing, not even its card, so that a rerun (with
/// --include-incorrect, say) needs no --force.
StatusOr<DatasetStats> FinishOutput(const ExportOptions& options, internal::Sink& sink, Status rows,
                                    bool made_out, DatasetStats stats) {
  if (rows.ok()) rows = sink.Close(stats);
  if (!rows.ok() || stats.exported == 0) {
    sink.Abort();
    std::error_code ec;
    if (made_out) fs::remove(options.out, ec);  // only when empty
    if (!rows.ok()) return rows;
    stats.files.clear();
    return stats;
  }
  stats.files.push_back("stats.json");
  stats.files.push_back("README.md");
  KFORGE_RETURN_IF_ERROR(common::WriteFileAtomic(options.out / "stats.json", ToJson(stats).dump(2) + "\n"));
  KFORGE_RETURN_IF_ERROR(common::WriteFileAtomic(options.out / "README.md", DatasetCard(stats)));
  return stats;
}

class FirstPass {
 public:
  FirstPass(const ExportOptions& options, Holdout& holdout, DatasetStats& stats)
      : options_(options), holdout_(holdout), stats_(stats) {}

  /// Correct records kept so far whose best attempt an older judge passed.
  int64_t older_judge() const { return older_judge_; }

  void Visit(const RecordRef& ref, dataset::Trajectory& t) {
    if (holdout_.HasId(t.task.id)) {
      holdout_.AddReference(t.task.reference_source);
      ++stats_.left_out["holdout"];
      return;
    }
    if (std::optional<std::string_view> reason = Reject(t, options_.filters)) {
      ++stats_.left_out[std::string(*reason)];
      return;
    }
    const nlohmann::json best_solution = BestSolution(t);
    const nlohmann::json* solution = best_solution.is_object() ? &best_solution : nullptr;
    if (IsConversation(options_.format) && !HasAssistantTurn(t)) {
      ++stats_.left_out["no_assistant_turn"];  // nothing to learn from: a teacher error before any reply
      return;
    }
    if (t.correct() && JudgedBy(t) < common::kOldestTrustedJudge) ++older_judge_;
    if (options_.format == Format::kKernelBench) {
      if (!KernelBenchProblemOf(t.task.id)) {
        ++stats_.left_out["not_kernelbench"];
        return;
      }
      if (!solution) {
        ++stats_.left_out["no_solution"];
        return;
      }
    }
    // What can fail on a hostile record (a field of the wrong type throws) comes before anything is kept.
    const uint64_t key = solution ? SolutionKey(*solution) : Hash64("record:" + t.id);
    std::optional<CompactMinHash> signature;
    if (options_.selection.near_dup) {
      const nlohmann::json* source = solution && solution->contains("source") ? &(*solution)["source"] : nullptr;
      signature = Compact(
          MinHashOf(Tokenize(source && source->is_string() ? source->get<std::string>() : "", CommentStyle::kC)));
    }
    Candidate c;
    c.ref = ref;
    c.has_solution = solution != nullptr;
    c.key = key;
    c.id_hash = IdHash(t.id);
    c.task = Intern(t);
    c.correct = t.correct();
    if (std::optional<double> s = t.speedup()) c.speedup = static_cast<float>(*s);
    c.turns = static_cast<uint16_t>(std::min(t.turns(), 65535));
    collected_.candidates.push_back(c);
    if (signature) collected_.signatures.push_back(*signature);
  }

  /// Marks tasks whose reference is close to a held-out one.
  Collected Finish() {
    for (size_t t = 0; t < collected_.references.size(); ++t)
      collected_.tasks[t].held_out = holdout_.Similar(collected_.references[t]);
    return std::move(collected_);
  }

 private:
  uint32_t Intern(const dataset::Trajectory& t) {
    auto [it, added] = task_index_.emplace(t.task.id, static_cast<uint32_t>(collected_.tasks.size()));
    if (added) {
      collected_.tasks.push_back({t.task.id, t.task.level, t.task.tags.empty() ? "" : t.task.tags[0], false});
      if (!holdout_.empty()) collected_.references.push_back(ReferenceMinHash(t.task.reference_source));
    }
    return it->second;
  }

  const ExportOptions& options_;
  Holdout& holdout_;
  DatasetStats& stats_;
  Collected collected_;
  std::unordered_map<std::string, uint32_t> task_index_;
  int64_t older_judge_ = 0;
};

}  // namespace

Status CheckOutput(const fs::path& out, bool force) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return Status::Ok();
  if (!fs::is_directory(out, ec))
    return Status::InvalidArgument("--out " + out.string() + ": a file, not a folder");
  if (!force && !fs::is_empty(out, ec))
    return Status::InvalidArgument("--out " + out.string() +
                                   ": not empty (--force replaces a previous export)");
  return Status::Ok();
}

Status CheckInputsApart(const std::vector<fs::path>& inputs, const fs::path& out) {
  std::error_code ec;
  if (!fs::is_directory(out, ec)) return Status::Ok();
  std::map<std::pair<uint64_t, uint64_t>, std::string> outputs;
  for (const fs::directory_entry& entry : fs::directory_iterator(out, ec))
    if (auto id = common::FileIdentity(entry.path())) outputs.emplace(*id, entry.path().filename().string());
  if (auto id = common::FileIdentity(out)) outputs.emplace(*id, ".");
  for (const fs::path& input : inputs) {
    std::optional<std::pair<uint64_t, uint64_t>> id = common::FileIdentity(input);
    if (!id) continue;
    auto it = outputs.find(*id);
    if (it != outputs.end())
      return Status::InvalidArgument("--out " + out.string() + " holds the input " + input.string() +
                                     (it->second == "." ? "" : " (as " + it->second + ")") +
                                     "; an export never writes over what it reads: use another --out");
  }
  return Status::Ok();
}

StatusOr<DatasetStats> Export(const std::vector<fs::path>& files, const ExportOptions& options,
                              const WarningSink& warn) {
  KFORGE_RETURN_IF_ERROR(CheckExportOptions(options));
  KFORGE_RETURN_IF_ERROR(CheckInputsApart(files, options.out));
  DatasetStats stats;
  stats.format = options.format;
  stats.file_format = options.file_format;
  stats.options = options.described;
  for (const fs::path& f : files) stats.inputs.push_back(f.string());
  Holdout holdout;
  if (options.holdout) {
    KFORGE_ASSIGN_OR_RETURN(holdout, Holdout::Load(*options.holdout, options.holdout_threshold));
  }

  if (options.format == Format::kPreference) {
    internal::PreferencePass pass(options, holdout, stats, warn);
    KFORGE_RETURN_IF_ERROR(ScanRecords(
        files, [&](const RecordRef& ref, dataset::Trajectory& t) { pass.Visit(ref, t); }, stats.scan, warn));
    pass.Pair();
    KFORGE_ASSIGN_OR_RETURN(const bool made_out, PrepareOutput(options));
    std::unique_ptr<internal::Sink> sink = internal::MakeJsonlSink(options);
    Status rows = pass.Write(files, *sink);
    return FinishOutput(options, *sink, std::move(rows), made_out, std::move(stats));
  }

  FirstPass first(options, holdout, stats);
  KFORGE_RETURN_IF_ERROR(ScanRecords(
      files, [&](const RecordRef& ref, dataset::Trajectory& t) { first.Visit(ref, t); }, stats.scan, warn));
  if (first.older_judge() > 0)
    warn(std::to_string(first.older_judge()) + " correct record" + (first.older_judge() == 1 ? " was" : "s were") +
         " judged by an older judge (version < " + std::to_string(common::kOldestTrustedJudge) +
         "), which accepted some no-work kernels; `kforge verify --rejudge RUN_DIR` judges them again");
  Collected collected = first.Finish();
  Selection selection =
      Select(collected.tasks, collected.candidates, collected.signatures, options.selection);
  for (const auto& [reason, n] : selection.dropped) stats.left_out[reason] += n;
  collected.signatures = {};

  std::vector<RecordRef> refs;
  refs.reserve(selection.kept.size());
  for (uint32_t i : selection.kept) refs.push_back(collected.candidates[i].ref);
  std::vector<uint32_t> id_hashes;
  id_hashes.reserve(selection.kept.size());
  for (uint32_t i : selection.kept) id_hashes.push_back(collected.candidates[i].id_hash);
  collected = {};

  KFORGE_ASSIGN_OR_RETURN(const bool made_out, PrepareOutput(options));
  std::unique_ptr<internal::Sink> sink = options.format == Format::kKernelBench
                                             ? internal::MakeKernelBenchSink(options)
                                             : internal::MakeJsonlSink(options);
  Status rows = ReadRecordsAt(files, refs, [&](size_t i, dataset::Trajectory& t) -> Status {
    if (IdHash(t.id) != id_hashes[i])
      return Status::IoError(files[refs[i].file].string() + ":" + std::to_string(refs[i].line) +
                             ": the record changed since it was first read");
    Status written = Status::Ok();
    try {
      written = sink->Write(t, stats);
    } catch (const nlohmann::json::exception& e) {  // a field of the wrong type in a hostile record
      written = Status::InvalidArgument(std::string("a field of the wrong type (") + e.what() + ")");
    }
    if (written.code() == Status::Code::kInvalidArgument) {
      ++stats.left_out["unrenderable"];
      warn(files[refs[i].file].string() + ":" + std::to_string(refs[i].line) + ": " + written.message());
      return Status::Ok();
    }
    return written;
  });
  return FinishOutput(options, *sink, std::move(rows), made_out, std::move(stats));
}

}  // namespace kforge::exporter
