// Trajectory: the record of one generate episode (schema kforge.trajectory/1, docs/formats.md): the
// task as the teacher saw it, the conversation in the canonical chat form, every attempt with its
// verdict and timing, the best attempt and what the episode cost. generate writes them; export and
// report read them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/bench_record.h"
#include "kforge/common/chat.h"
#include "kforge/common/names.h"
#include "kforge/common/solution.h"
#include "kforge/common/status.h"
#include "kforge/common/verdict.h"
#include "kforge/common/verdict_parts.h"

namespace kforge::dataset {

inline constexpr std::string_view kTrajectorySchema = "kforge.trajectory/1";

/// How the teacher hands in solutions: fenced blocks in its text, or calls of the run and submit tools.
enum class Protocol { kText, kTools };
inline constexpr common::NameTable<Protocol, 2> kProtocolNames = {{{Protocol::kText, "text"},
                                                                  {Protocol::kTools, "tools"}}};
static_assert(kProtocolNames.MatchesEnum());
inline std::string_view ProtocolName(Protocol protocol) { return kProtocolNames.Name(protocol); }

/// Why an episode ended (the record's outcome.stop).
enum class StopReason {
  kNone,           ///< not ended yet; never in a finished record
  kTargetReached,  ///< a correct kernel reached the speedup target
  kCompiled,       ///< compile-only run: a candidate compiled
  kSubmitted,      ///< tools protocol: the teacher called submit
  kMaxTurns,       ///< the turns ran out
  kNoSolution,     ///< the teacher stopped without a solution
  kLlmError,       ///< the teacher's requests failed
  kHarnessError,   ///< kforge could not judge the attempts
  kBudget,         ///< the run's spending limit
  kRefused,        ///< the teacher refused (a refusal stop; the text in `error`), not asked again
};
inline constexpr common::NameTable<StopReason, 10> kStopReasonNames = {{{StopReason::kNone, ""},
                                                                      {StopReason::kTargetReached, "target_reached"},
                                                                      {StopReason::kCompiled, "compiled"},
                                                                      {StopReason::kSubmitted, "submitted"},
                                                                      {StopReason::kMaxTurns, "max_turns"},
                                                                      {StopReason::kNoSolution, "no_solution"},
                                                                      {StopReason::kLlmError, "llm_error"},
                                                                      {StopReason::kHarnessError, "harness_error"},
                                                                      {StopReason::kBudget, "budget"},
                                                                      {StopReason::kRefused, "refused"}}};
static_assert(kStopReasonNames.MatchesEnum());
inline std::string_view StopReasonName(StopReason stop) { return kStopReasonNames.Name(stop); }

/// The task, as recorded: enough to group, filter and decontaminate without the task folder.
struct TaskInfo {
  std::string id;            ///< "kernelbench/level1/19_ReLU"
  std::optional<int> level;  ///< KernelBench level, when the task has one
  std::vector<std::string> tags;
  std::string view;              ///< what the teacher saw: "code", "nl", "spec", "nl+spec", "kernelbench"
  std::string source;            ///< where the task comes from: "kernelbench", "kforge", ...
  std::string license;           ///< of the task's reference program ("MIT", ...); empty if unknown
  std::string reference_hash;    ///< "sha256:<hex>" of the reference program's text
  std::string reference_source;  ///< the reference program's text (for decontamination)
  /// Why no kernel can be judged on the task ("degenerate", "nondeterministic", "ill_conditioned",
  /// as its import measured); empty for a task that judges. Written only when set.
  std::string unjudgeable;
};

/// Who wrote the kernels.
struct TeacherInfo {
  std::string provider;  ///< "anthropic", "openai", "replay", "exec"
  std::string model;
  /// Sampling and protocol parameters: temperature, max_tokens, thinking budget, protocol, ...
  nlohmann::json params = nlohmann::json::object();
};

/// An attempt's status when the reply held no solution that could be read.
inline constexpr std::string_view kNoSolution = "no_solution";

/// One candidate the teacher proposed, and what kforge found.
struct Attempt {
  int turn = 0;              ///< 1-based assistant turn that produced it
  std::string tool_call_id;  ///< tools protocol: the call that carried it; empty for text
  /// The verdict's status (the timed runs' when they failed after it passed); none when the reply held
  /// no solution that could be read (written kNoSolution; then `parse_error` says why).
  std::optional<common::VerdictStatus> status;
  std::string parse_error;
  /// What the teacher proposed, as it was judged; none when the reply held no solution that could be read.
  std::optional<common::Solution> solution;
  /// The record's own JSON for the solution where writing `solution` would give other JSON: an older
  /// plan form (`"block": [256]`), or a solution this kforge no longer reads (then `solution` is none).
  /// SolutionToRecord writes it back while `solution` is still what it reads as, so that a record read
  /// and written again keeps its bytes. Null otherwise.
  std::shared_ptr<const nlohmann::json> solution_as_read;
  std::optional<common::Verdict> verdict;  ///< kforge.verdict/1; none (null) when nothing was judged
  /// kforge.bench/1 when it was timed (kept without its samples), else none (null).
  std::optional<common::BenchResult> bench;
  bool correct = false;           ///< verdict ok on the GPU (never in compile-only runs)
  bool compiled = false;          ///< NVRTC compiled it
  /// reference median / candidate median, when timed and believed; none when `suspect_timing` is set
  std::optional<double> speedup;
  /// The bench flag (common::kSuspectTimingFlags) for which kforge refused the timing: then nothing
  /// counts a speedup (the bench record keeps what was measured). Empty when the timing is believed;
  /// written only when set, and derived from the bench record's flags for records written before it.
  std::string suspect_timing;

  /// Correct, and where its task has derived sizes correct at those too (common::Generalises; an
  /// attempt recorded without its verdict counts as not probed).
  bool Generalises() const { return correct && (!verdict || common::Generalises(*verdict)); }
  /// The status is the verdict status `verdict_status`.
  bool Is(common::VerdictStatus verdict_status) const { return status == verdict_status; }
  /// As the record writes it: "ok", "compile_error", ... or kNoSolution.
  std::string_view StatusName() const { return status ? common::VerdictStatusName(*status) : kNoSolution; }
};

/// Token and money totals of an episode. `input_tokens` excludes cache reads and writes.
struct UsageInfo {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cache_read_tokens = 0;
  int64_t cache_write_tokens = 0;
  int64_t reasoning_tokens = 0;
  int64_t requests = 0;
  double cost_usd = 0;
  bool cost_known = true;  ///< false when some model was not in the price table
};

/// A skill that was in the teacher's context (kforge generate --skill).
struct SkillRef {
  std::string name;
  std::string hash;  ///< "sha256:<hex>" of the skill folder's files
  bool operator==(const SkillRef&) const = default;
};

struct Trajectory {
  std::string id;      ///< stable: run config hash, task id and sample index
  std::string run_id;  ///< the run's configuration hash
  int sample = 0;
  TaskInfo task;
  TeacherInfo teacher;
  Protocol protocol = Protocol::kText;
  bool compile_only = false;      ///< no GPU: attempts were compiled, not run
  /// The conversation, written in the record form of the chat (common::MessageToRecord).
  std::vector<common::Message> messages;
  std::vector<common::ToolSpec> tools;  ///< the tools offered (tools protocol)
  std::vector<Attempt> attempts;
  std::optional<int> best;  ///< index into attempts: the fastest correct one, else the last compiled
  StopReason stop = StopReason::kNone;  ///< why the episode ended
  std::string error;  ///< one line when stop is llm_error or harness_error
  UsageInfo usage;
  double wall_s = 0;      ///< episode start to end
  double llm_s = 0;       ///< waiting for the teacher
  double judge_s = 0;     ///< compiling, verifying and timing
  std::optional<common::DeviceRecord> device;  ///< the GPU that judged, or null
  std::string kforge_version;
  std::string created_at;  ///< UTC, ISO 8601
  /// Strings were cut so that the record fits in one line (FitRecord): kept for the numbers, left
  /// out of exported training data. Written only when true.
  bool truncated = false;
  /// The skills in the teacher's context, in --skill order. Written only when not empty.
  std::vector<SkillRef> skills;

  /// Derived from attempts and best.
  bool correct() const;
  std::optional<double> speedup() const;
  /// 1-based turn of the first correct attempt.
  std::optional<int> first_correct_turn() const;
  int turns() const;  ///< assistant turns
};

nlohmann::json ToJson(const Trajectory& trajectory);
/// An attempt's solution as its record holds it: the canonical form (common::SolutionToJson), or the
/// JSON it was read from (Attempt::solution_as_read) while it is unchanged; null when there is none.
nlohmann::json SolutionToRecord(const Attempt& attempt);
/// Checks the schema and the fields' types; errors name `where` and the JSON path.
StatusOr<Trajectory> TrajectoryFromJson(const nlohmann::json& json, const std::string& where);

/// Cuts the longest strings of a trajectory record (keeping their start, marked
/// "...[N bytes cut]") until its JSON line is at most `max_bytes`, and sets "truncated": true.
/// Returns whether anything was cut (false for a value that is not an object). A record of many small strings that still does not fit keeps
/// its header and outcome only (messages and attempts emptied).
bool FitRecord(nlohmann::json& record, size_t max_bytes);

/// "sha256:<hex>" of `text`.
std::string TextHash(std::string_view text);

}  // namespace kforge::dataset
