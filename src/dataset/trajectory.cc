// Trajectory records to and from JSON.
#include "kforge/dataset/trajectory.h"

#include <algorithm>

#include "kforge/common/hash.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/record_reader.h"
#include "kforge/common/text.h"

namespace kforge::dataset {
namespace {

using nlohmann::json;

json OrNull(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json OrNull(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

using Reader = common::RecordReader;

json ToJson(const TaskInfo& t) {
  json out = {{"id", t.id},
              {"level", OrNull(t.level)},
              {"tags", t.tags},
              {"view", t.view},
              {"source", t.source},
              {"license", t.license},
              {"reference_hash", t.reference_hash},
              {"reference_source", t.reference_source}};
  if (!t.unjudgeable.empty()) out["unjudgeable"] = t.unjudgeable;
  return out;
}

/// `solution` (an attempt's, as the record holds it) into `a`: typed when this kforge reads it, and
/// kept as read where its canonical form is other JSON or it does not read.
void ReadSolution(json solution, const std::string& where, Attempt& a) {
  if (solution.is_null()) return;
  StatusOr<common::Solution> read = common::SolutionFromJson(solution, where);
  const bool canonical = read.ok() && common::SolutionToJson(*read) == solution;
  if (read.ok()) a.solution = std::move(*read);
  if (!canonical) a.solution_as_read = std::make_shared<const json>(std::move(solution));
}

json ToJson(const Attempt& a) {
  json out = {
      {"turn", a.turn},
      {"tool_call_id", a.tool_call_id},
      {"status", a.StatusName()},
      {"parse_error", a.parse_error},
      {"compiled", a.compiled},
      {"correct", a.correct},
      {"speedup", OrNull(a.speedup)},
      {"solution", SolutionToRecord(a)},
      {"verdict", a.verdict ? a.verdict->ToJson() : json(nullptr)},
      {"bench", a.bench ? common::BenchResultToJson(*a.bench, common::Samples::kLeftOut) : json(nullptr)}};
  if (!a.suspect_timing.empty()) out["suspect_timing"] = a.suspect_timing;
  return out;
}

json ToJson(const UsageInfo& u) {
  return {{"input_tokens", u.input_tokens},
          {"output_tokens", u.output_tokens},
          {"cache_read_tokens", u.cache_read_tokens},
          {"cache_write_tokens", u.cache_write_tokens},
          {"reasoning_tokens", u.reasoning_tokens},
          {"requests", u.requests},
          {"cost_usd", u.cost_usd},
          {"cost_known", u.cost_known}};
}

/// The list under `key`, each item read by `read` (common::MessageFromRecord, ToolSpecFromRecord).
template <typename T>
void ReadList(Reader& r, std::string_view key, StatusOr<T> (*read)(const json&), std::vector<T>& out) {
  const json* list = r.Array(key);
  if (!list || !r.status().ok()) return;
  for (size_t i = 0; i < list->size(); ++i) {
    StatusOr<T> item = read((*list)[i]);
    if (!item.ok()) {
      r.Fail(std::string(key) + "[" + std::to_string(i) + "]", item.status().message());
      return;
    }
    out.push_back(std::move(*item));
  }
}

}  // namespace

json SolutionToRecord(const Attempt& attempt) {
  if (attempt.solution_as_read) {
    if (!attempt.solution) return *attempt.solution_as_read;
    StatusOr<common::Solution> as_read = common::SolutionFromJson(*attempt.solution_as_read, "solution");
    if (as_read.ok() && common::SolutionToJson(*as_read) == common::SolutionToJson(*attempt.solution))
      return *attempt.solution_as_read;
  }
  return attempt.solution ? common::SolutionToJson(*attempt.solution) : json(nullptr);
}

bool Trajectory::correct() const { return best && attempts[*best].correct; }

std::optional<double> Trajectory::speedup() const {
  if (!best) return std::nullopt;
  return attempts[*best].correct ? attempts[*best].speedup : std::nullopt;
}

std::optional<int> Trajectory::first_correct_turn() const {
  for (const Attempt& a : attempts)
    if (a.correct) return a.turn;
  return std::nullopt;
}

int Trajectory::turns() const {
  return static_cast<int>(std::count_if(messages.begin(), messages.end(), [](const common::Message& m) {
    return m.role == common::Role::kAssistant;
  }));
}

json ToJson(const Trajectory& t) {
  json messages = json::array();
  for (const common::Message& m : t.messages) messages.push_back(common::MessageToRecord(m));
  json tools = json::array();
  for (const common::ToolSpec& tool : t.tools) tools.push_back(common::ToolSpecToRecord(tool));
  json attempts = json::array();
  for (const Attempt& a : t.attempts) attempts.push_back(ToJson(a));
  json first_correct = OrNull(t.first_correct_turn());
  json record = {
      {"schema", kTrajectorySchema},
      {"id", t.id},
      {"run_id", t.run_id},
      {"sample", t.sample},
      {"task", ToJson(t.task)},
      {"teacher",
       {{"provider", t.teacher.provider}, {"model", t.teacher.model}, {"params", t.teacher.params}}},
      {"protocol", ProtocolName(t.protocol)},
      {"compile_only", t.compile_only},
      {"messages", std::move(messages)},
      {"tools", std::move(tools)},
      {"attempts", attempts},
      {"best", OrNull(t.best)},
      {"outcome",
       {{"correct", t.correct()},
        {"speedup", OrNull(t.speedup())},
        {"turns", t.turns()},
        {"first_correct_turn", first_correct},
        {"stop", StopReasonName(t.stop)},
        {"error", t.error}}},
      {"usage", ToJson(t.usage)},
      {"timing", {{"wall_s", t.wall_s}, {"llm_s", t.llm_s}, {"judge_s", t.judge_s}}},
      {"device", common::DeviceRecordToJson(t.device)},
      {"kforge_version", t.kforge_version},
      {"created_at", t.created_at}};
  if (t.truncated) record["truncated"] = true;
  if (!t.skills.empty()) {
    json skills = json::array();
    for (const SkillRef& skill : t.skills) skills.push_back({{"name", skill.name}, {"hash", skill.hash}});
    record["skills"] = std::move(skills);
  }
  return record;
}

namespace {

/// A record's `task`, `teacher`, `outcome`, `usage` and `timing` objects.
void ReadHeader(Reader& r, const std::string& where, Status& status, Trajectory& t) {
  if (const json* task = r.Find("task")) {
    Reader tr(*task, where + ".task", status);
    tr.Get("id", t.task.id, true);
    tr.Get("level", t.task.level);
    tr.Get("tags", t.task.tags);
    tr.Get("view", t.task.view);
    tr.Get("source", t.task.source);
    tr.Get("license", t.task.license);
    tr.Get("reference_hash", t.task.reference_hash);
    tr.Get("reference_source", t.task.reference_source);
    tr.Get("unjudgeable", t.task.unjudgeable);
  } else if (status.ok()) {
    status = Status::InvalidArgument(where + ".task: missing");
  }
  if (const json* teacher = r.Find("teacher")) {
    Reader tr(*teacher, where + ".teacher", status);
    tr.Get("provider", t.teacher.provider);
    tr.Get("model", t.teacher.model);
    tr.Raw("params", t.teacher.params);
  }
  if (const json* outcome = r.Find("outcome")) {
    Reader o(*outcome, where + ".outcome", status);
    o.Name("stop", kStopReasonNames, t.stop);
    o.Get("error", t.error);
  }
  if (const json* usage = r.Find("usage")) {
    Reader u(*usage, where + ".usage", status);
    u.Get("input_tokens", t.usage.input_tokens);
    u.Get("output_tokens", t.usage.output_tokens);
    u.Get("cache_read_tokens", t.usage.cache_read_tokens);
    u.Get("cache_write_tokens", t.usage.cache_write_tokens);
    u.Get("reasoning_tokens", t.usage.reasoning_tokens);
    u.Get("requests", t.usage.requests);
    u.Get("cost_usd", t.usage.cost_usd);
    u.Get("cost_known", t.usage.cost_known);
  }
  if (const json* timing = r.Find("timing")) {
    Reader tm(*timing, where + ".timing", status);
    tm.Get("wall_s", t.wall_s);
    tm.Get("llm_s", t.llm_s);
    tm.Get("judge_s", t.judge_s);
  }
}

/// `read(j, path)` into `out` unless `j` is absent or null; its error becomes `status`.
template <typename T, typename Read>
void ReadPart(const json* j, const std::string& path, Status& status, Read read, std::optional<T>& out) {
  if (j == nullptr || j->is_null() || !status.ok()) return;
  StatusOr<T> part = read(*j, path);
  if (part.ok()) {
    out = std::move(*part);
  } else {
    status = part.status();
  }
}

Attempt ReadAttempt(const json& j, const std::string& where, Status& status) {
  Attempt a;
  Reader ar(j, where, status);
  ar.Get("turn", a.turn);
  ar.Get("tool_call_id", a.tool_call_id);
  std::string status_name;
  ar.Get("status", status_name, true);
  if (status.ok() && status_name != kNoSolution) {
    if (std::optional<common::VerdictStatus> parsed = common::kVerdictStatusNames.Parse(status_name)) {
      a.status = *parsed;
    } else {
      ar.Fail("status", common::Quote(status_name, 40) + ", expected a verdict status or \"" +
                            std::string(kNoSolution) + "\"");
    }
  }
  ar.Get("parse_error", a.parse_error);
  ar.Get("compiled", a.compiled);
  ar.Get("correct", a.correct);
  ar.Get("speedup", a.speedup);
  json solution;
  ar.Raw("solution", solution);
  ReadSolution(std::move(solution), ar.Path("solution"), a);
  ReadPart(ar.Find("verdict"), ar.Path("verdict"), status, common::Verdict::FromJson, a.verdict);
  ReadPart(ar.Find("bench"), ar.Path("bench"), status, common::BenchResultFromJson, a.bench);
  ar.Get("suspect_timing", a.suspect_timing);
  if (a.suspect_timing.empty() && a.bench) a.suspect_timing = common::SuspectTiming(*a.bench);
  if (!a.suspect_timing.empty()) a.speedup.reset();  // a refused timing counts nowhere
  return a;
}

/// `key`'s array, each element read by `read(element, path, status)`.
template <typename T, typename Read>
void ReadArray(Reader& r, const std::string& where, std::string_view key, Status& status, Read read,
               std::vector<T>& out) {
  const json* list = r.Find(key);
  if (list == nullptr) return;
  if (!list->is_array() && status.ok())
    status = Status::InvalidArgument(where + "." + std::string(key) + ": expected an array");
  for (size_t i = 0; status.ok() && i < list->size(); ++i)
    out.push_back(read((*list)[i], where + "." + std::string(key) + "[" + std::to_string(i) + "]", status));
}

SkillRef ReadSkill(const json& j, const std::string& where, Status& status) {
  SkillRef skill;
  Reader sr(j, where, status);
  sr.Get("name", skill.name, true);
  sr.Get("hash", skill.hash, true);
  return skill;
}

}  // namespace

StatusOr<Trajectory> TrajectoryFromJson(const json& j, const std::string& where) {
  Status status = Status::Ok();
  Trajectory t;
  Reader r(j, where, status);
  std::string schema;
  r.Get("schema", schema, true);
  if (status.ok() && schema != kTrajectorySchema)
    return Status::InvalidArgument(where + ".schema: " + common::Quote(schema, 64) + ", expected \"" +
                                   std::string(kTrajectorySchema) + "\"");
  r.Get("id", t.id, true);
  r.Get("run_id", t.run_id);
  r.Get("sample", t.sample);
  r.Name("protocol", kProtocolNames, t.protocol);
  r.Get("compile_only", t.compile_only);
  ReadList(r, "messages", common::MessageFromRecord, t.messages);
  ReadList(r, "tools", common::ToolSpecFromRecord, t.tools);
  r.Get("kforge_version", t.kforge_version);
  r.Get("created_at", t.created_at);
  r.Get("truncated", t.truncated);
  r.Get("best", t.best);
  ReadPart(r.Find("device"), r.Path("device"), status, common::DeviceRecordFromJson, t.device);
  ReadHeader(r, where, status, t);
  ReadArray(r, where, "skills", status, ReadSkill, t.skills);
  ReadArray(r, where, "attempts", status, ReadAttempt, t.attempts);
  if (!status.ok()) return status;
  if (t.best && (*t.best < 0 || *t.best >= static_cast<int>(t.attempts.size())))
    return Status::InvalidArgument(where + ".best: " + std::to_string(*t.best) + " is not an attempt index");
  return t;
}

namespace {

size_t LineBytes(const json& record) { return common::JsonText(record).size() + 1; }

void CollectStrings(json& value, std::vector<std::string*>& out) {
  if (value.is_string()) {
    out.push_back(&value.get_ref<std::string&>());
  } else if (value.is_structured()) {
    for (json& item : value) CollectStrings(item, out);
  }
}

/// Keeps the first `keep` bytes of `text` (not splitting a UTF-8 sequence) and says how much went.
void CutString(std::string& text, size_t keep) {
  while (keep > 0 && keep < text.size() && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  size_t cut = text.size() - keep;
  text.resize(keep);
  text += "...[" + std::to_string(cut) + " bytes cut]";
}

}  // namespace

bool FitRecord(json& record, size_t max_bytes) {
  if (!record.is_object()) return false;
  // What every cut string keeps at least: 4 KiB, less under a small cap.
  const size_t keep = std::min<size_t>(4096, std::max<size_t>(64, max_bytes / 64));
  bool cut_any = false;
  for (int round = 0; round < 16; ++round) {
    size_t size = LineBytes(record);
    if (size <= max_bytes) return cut_any;
    // JSON escapes make a string take up to 6 bytes per byte: cut the raw bytes by the excess and
    // check again.
    size_t excess = size - max_bytes + 1024;
    std::vector<std::string*> strings;
    CollectStrings(record, strings);
    std::sort(strings.begin(), strings.end(),
              [](const std::string* a, const std::string* b) { return a->size() > b->size(); });
    bool cut_now = false;
    for (std::string* text : strings) {
      if (excess == 0 || text->size() <= keep + 64) break;
      size_t remove = std::min(text->size() - keep, excess);
      CutString(*text, text->size() - remove);
      excess -= std::min(excess, remove);
      cut_any = cut_now = true;
    }
    record["truncated"] = true;
    if (!cut_now) break;  // nothing long left to cut
  }
  if (LineBytes(record) <= max_bytes) return true;
  // Many strings: keep what the numbers need, then less and less.
  record["messages"] = json::array();
  record["attempts"] = json::array();
  record["tools"] = json::array();
  record["best"] = nullptr;
  record["truncated"] = true;
  if (LineBytes(record) <= max_bytes) return true;
  std::vector<std::string*> strings;
  CollectStrings(record, strings);
  for (std::string* text : strings)
    if (text->size() > 64) CutString(*text, 64);
  if (LineBytes(record) <= max_bytes) return true;
  json minimal = {{"schema", record.value("schema", json())},
                  {"id", record.value("id", json())},
                  {"task", json::object()},
                  {"truncated", true}};
  if (record.contains("task") && record["task"].is_object() && record["task"].contains("id"))
    minimal["task"]["id"] = record["task"]["id"];
  record = std::move(minimal);
  return true;
}

std::string TextHash(std::string_view text) { return "sha256:" + common::Sha256Hex(text); }

}  // namespace kforge::dataset
