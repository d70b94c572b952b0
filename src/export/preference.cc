// Preference pairs: the rules (PairAttempts) and the two passes over the records.
#include "export/preference.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

#include "export/dedup.h"
#include "kforge/common/json_fields.h"

namespace kforge::exporter::internal {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// The rule that prefers `c` over `r`, or nullopt when none does (docs/export.md, "Preference pairs").
std::optional<PairRule> Prefers(const PairableAttempt& c, const PairableAttempt& r) {
  if (!c.correct || c.suspect || c.solution == r.solution) return std::nullopt;
  if (!r.correct) return PairRule::kCorrectOverIncorrect;
  if (std::isfinite(c.lo) && std::isfinite(r.hi) && c.lo > r.hi) return PairRule::kFasterOverSlower;
  return std::nullopt;
}

/// The hash of the prompt an attempt answered: the messages before its assistant turn, and the tools.
uint64_t PromptKey(const std::vector<json>& messages, size_t end, const std::string& tools) {
  std::string text = tools;
  for (size_t i = 0; i < end; ++i) text += "\n" + common::JsonText(messages[i]);
  return Hash64(text);
}

std::string ToolsText(const dataset::Trajectory& t) {
  return common::JsonText(common::TrlToolsToJson(t.tools));
}

/// Attempts per turn: a turn that carried two attempts (two tool calls) pairs neither.
std::map<int, int> AttemptsPerTurn(const dataset::Trajectory& t) {
  std::map<int, int> count;
  for (const dataset::Attempt& a : t.attempts) ++count[a.turn];
  return count;
}

json Speedup(const dataset::Attempt& a) { return a.correct && a.speedup ? json(*a.speedup) : json(nullptr); }

/// What DatasetStats counts of a chosen side's record: its task, teacher and tools, one correct attempt.
dataset::Trajectory CountedStub(const dataset::Trajectory& t) {
  dataset::Trajectory stub;
  stub.run_id = t.run_id;
  stub.task = t.task;
  stub.task.reference_source.clear();
  stub.teacher = t.teacher;
  stub.tools = t.tools;
  stub.attempts.resize(1);
  stub.attempts[0].correct = true;  // a chosen side is correct
  stub.best = 0;
  return stub;
}

}  // namespace

/// One preference row: the prompt, the two sides, the chosen record's provenance and each side's facts.
json PreferencePass::PairRow(const PreferencePair& p, const Side& chosen, const Side& rejected, const json& prompt,
                             const json& provenance) {
  json row = {{"prompt", prompt},
              {"chosen", json::array({chosen.message})},
              {"rejected", json::array({rejected.message})}};
  for (const auto& [key, value] : provenance.items()) row[key] = value;
  row["id"] = chosen.facts.at("id").get<std::string>() + "@" + std::to_string(chosen.facts.at("turn").get<int>()) +
              ">" + rejected.facts.at("id").get<std::string>() + "@" +
              std::to_string(rejected.facts.at("turn").get<int>());
  row["rule"] = kPairRuleNames.Name(p.rule);
  for (const auto& [name, side] : {std::pair<std::string, const Side*>{"chosen_", &chosen}, {"rejected_", &rejected}}) {
    for (const char* key : {"id", "turn", "speedup", "kernel_ms"}) row[name + key] = side->facts.at(key);
  }
  row["rejected_status"] = rejected.facts.at("status");
  for (const char* key : {"reference_ms", "bench_mode", "gpu", "judge_version", "torch_compile_ms"}) row[key] = chosen.facts.at(key);
  return row;
}

std::vector<PreferencePair> PairAttempts(const std::vector<PairableAttempt>& attempts,
                                         std::optional<int64_t> per_task) {
  std::vector<uint32_t> order(attempts.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(attempts[a].task, attempts[a].prompt) < std::tie(attempts[b].task, attempts[b].prompt);
  });
  std::vector<PreferencePair> pairs;
  for (size_t begin = 0, end = 0; begin < order.size(); begin = end) {
    const PairableAttempt& first = attempts[order[begin]];
    end = begin;
    while (end < order.size() && attempts[order[end]].task == first.task &&
           attempts[order[end]].prompt == first.prompt)
      ++end;
    for (size_t i = begin; i < end; ++i)
      for (size_t j = begin; j < end; ++j)
        if (i != j)
          if (std::optional<PairRule> rule = Prefers(attempts[order[i]], attempts[order[j]]))
            pairs.push_back({order[i], order[j], *rule});
  }
  auto rank = [&](const PreferencePair& p) {
    const PairableAttempt& c = attempts[p.chosen];
    double speedup = std::isfinite(c.speedup) ? -c.speedup : 0;  // higher first; untimed after timed
    return std::make_tuple(c.task, p.rule, !std::isfinite(c.speedup), speedup, p.chosen, p.rejected);
  };
  std::sort(pairs.begin(), pairs.end(),
            [&](const PreferencePair& a, const PreferencePair& b) { return rank(a) < rank(b); });
  if (!per_task) return pairs;
  std::vector<PreferencePair> kept;
  std::map<uint32_t, int64_t> taken;
  for (const PreferencePair& p : pairs)
    if (taken[attempts[p.chosen].task]++ < *per_task) kept.push_back(p);
  return kept;
}

PreferencePass::PreferencePass(const ExportOptions& options, Holdout& holdout, DatasetStats& stats,
                               const WarningSink& warn)
    : options_(options), filters_(options.filters), holdout_(holdout), stats_(stats), warn_(warn) {
  filters_.include_incorrect = true;
}

void PreferencePass::Visit(const RecordRef& ref, dataset::Trajectory& t) {
  if (holdout_.HasId(t.task.id)) {
    holdout_.AddReference(t.task.reference_source);
    ++stats_.left_out["holdout"];
    return;
  }
  if (std::optional<std::string_view> reason = Reject(t, filters_)) {
    ++stats_.left_out[std::string(*reason)];
    return;
  }
  if (t.compile_only) {  // nothing ran: no attempt is correct, and none is known to be wrong
    ++stats_.left_out["compile_only"];
    return;
  }
  if (!HasAssistantTurn(t)) {
    ++stats_.left_out["no_assistant_turn"];
    return;
  }
  const std::vector<json> messages = TrlMessages(t, options_.rows);
  auto [it, added] = task_index_.emplace(t.task.id, static_cast<uint32_t>(tasks_.size()));
  if (added) {
    tasks_.push_back({t.task.id});
    if (!holdout_.empty()) references_.push_back(ReferenceMinHash(t.task.reference_source));
  }
  ++tasks_[it->second].records;
  const uint32_t record = static_cast<uint32_t>(records_.size());
  records_.push_back(ref);
  const std::string tools = ToolsText(t);
  const std::map<int, int> per_turn = AttemptsPerTurn(t);
  for (size_t i = 0; i < t.attempts.size() && i < 65536; ++i) {
    const dataset::Attempt& a = t.attempts[i];
    std::optional<size_t> at = AssistantMessageOf(messages, a.turn);
    if (!at || per_turn.at(a.turn) > 1 || a.Is(common::VerdictStatus::kHarnessError)) continue;
    PairableAttempt p;
    p.record = record;
    p.task = it->second;
    p.attempt = static_cast<uint16_t>(i);
    p.prompt = PromptKey(messages, *at, tools);
    const nlohmann::json solution = dataset::SolutionToRecord(a);
    p.solution = solution.is_object() ? SolutionKey(solution) : Hash64(t.id + "#" + std::to_string(a.turn));
    p.correct = a.correct;
    p.suspect = SuspectTiming(a);
    if (a.correct && a.bench && a.bench->status == common::VerdictStatus::kOk) {
      p.speedup = a.bench->speedup.ratio;
      p.lo = a.bench->speedup.lo;
      p.hi = a.bench->speedup.hi;
    }
    attempts_.push_back(p);
  }
}

void PreferencePass::Pair() {
  for (size_t i = 0; i < references_.size(); ++i) {
    tasks_[i].held_out = holdout_.Similar(references_[i]);
    if (tasks_[i].held_out) stats_.left_out["holdout_similar"] += tasks_[i].records;
  }
  std::erase_if(attempts_, [&](const PairableAttempt& a) { return tasks_[a.task].held_out; });
  pairs_ = PairAttempts(attempts_, options_.selection.per_task);
  // Records whose attempts made no pair.
  std::set<uint32_t> paired;
  for (const PreferencePair& p : pairs_) {
    paired.insert(attempts_[p.chosen].record);
    paired.insert(attempts_[p.rejected].record);
  }
  int64_t unpaired = 0;
  for (uint32_t r = 0; r < records_.size(); ++r) unpaired += !paired.count(r);
  for (const Task& task : tasks_)
    if (task.held_out) unpaired -= task.records;
  if (unpaired > 0) stats_.left_out["no_pair"] = unpaired;
}

Status PreferencePass::Write(const std::vector<fs::path>& files, Sink& sink) {
  // The attempts each record must give, and the records in file order.
  std::map<uint32_t, std::vector<uint32_t>> wanted;
  for (const PreferencePair& p : pairs_)
    for (uint32_t side : {p.chosen, p.rejected}) wanted[attempts_[side].record].push_back(side);
  std::vector<uint32_t> records;
  for (auto& [record, sides] : wanted) {
    std::sort(sides.begin(), sides.end());
    sides.erase(std::unique(sides.begin(), sides.end()), sides.end());
    records.push_back(record);
  }
  std::sort(records.begin(), records.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(records_[a].file, records_[a].offset) < std::tie(records_[b].file, records_[b].offset);
  });
  std::vector<RecordRef> refs;
  for (uint32_t r : records) refs.push_back(records_[r]);

  std::map<uint32_t, Side> sides;                    // by attempt index
  std::map<std::pair<uint32_t, uint64_t>, json> prompts;  // by task and prompt key
  std::map<uint32_t, json> provenance;               // by record
  std::map<uint32_t, dataset::Trajectory> counted;   // by record: what DatasetStats counts of the chosen
  KFORGE_RETURN_IF_ERROR(ReadRecordsAt(files, refs, [&](size_t i, dataset::Trajectory& t) -> Status {
    const uint32_t record = records[i];
    const std::string where = files[refs[i].file].string() + ":" + std::to_string(refs[i].line);
    const std::vector<json> messages = TrlMessages(t, options_.rows);
    const std::string tools = ToolsText(t);
    for (uint32_t side : wanted[record]) {
      const PairableAttempt& p = attempts_[side];
      std::optional<size_t> at =
          p.attempt < t.attempts.size() ? AssistantMessageOf(messages, t.attempts[p.attempt].turn) : std::nullopt;
      if (!at || PromptKey(messages, *at, tools) != p.prompt)
        return Status::IoError(where + ": the record changed since it was first read");
      const dataset::Attempt& a = t.attempts[p.attempt];
      json facts = Measurements(t, &a);
      facts["id"] = t.id;
      facts["turn"] = a.turn;
      facts["status"] = a.StatusName();
      facts["speedup"] = Speedup(a);
      sides[side] = {messages[*at], std::move(facts)};
      json& prompt = prompts[{p.task, p.prompt}];
      if (prompt.is_null()) prompt = json(std::vector<json>(messages.begin(), messages.begin() + *at));
    }
    json facts = Provenance(t);
    for (const char* key : {"compile_only", "correct", "speedup", "turns"}) facts.erase(key);
    facts["tools"] = common::TrlToolsToJson(t.tools);
    provenance[record] = std::move(facts);
    counted[record] = CountedStub(t);
    return Status::Ok();
  }));

  for (const PreferencePair& p : pairs_) {
    const PairableAttempt& c = attempts_[p.chosen];
    const Side& chosen = sides.at(p.chosen);
    const Side& rejected = sides.at(p.rejected);
    const json row = PairRow(p, chosen, rejected, prompts.at({c.task, c.prompt}), provenance.at(c.record));
    const dataset::Trajectory& stub = counted.at(c.record);
    const std::string& split = options_.split.SplitOf(stub.task.id);
    KFORGE_RETURN_IF_ERROR(sink.WriteRow(row, split, stats_));
    stats_.Add(stub, split);
  }
  return Status::Ok();
}

}  // namespace kforge::exporter::internal
