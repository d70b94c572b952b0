// Verdict: the outcome of checking one solution (schema kforge.verdict/1, docs/formats.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/names.h"
#include "kforge/common/status.h"
#include "kforge/common/verdict_parts.h"

namespace kforge::common {

inline constexpr std::string_view kVerdictSchema = "kforge.verdict/1";

/// The version of the judge's rules (docs/formats.md, "Judge versions"). 1: relative L2 switched off
/// where the reference is zero within atol; 2: outputs judged against their own scale (noise measured
/// at import), trials on the task's measured input domains and on its derived small variant; 3: derived
/// variants (sizes the problem never asked for) no longer decide the status, they are the
/// `shape_general` check; 4: inputs keep the structure the problem gives them (triangular, symmetric).
inline constexpr int kJudgeVersion = 4;
/// The oldest judge whose correct verdicts export takes without a warning: version 1 accepted some
/// no-work kernels, version 2 refused kernels specialised to the problem's one size; later versions
/// only accept more honest kernels.
inline constexpr int kOldestTrustedJudge = 3;

enum class VerdictStatus {
  kOk,
  kCompileError,
  kInvalidSolution,
  kLaunchError,
  kMismatch,
  kTimeout,
  kCrash,
  kNoGpu,
  /// kforge's side failed (the reference, input generation, device memory, the worker itself): the
  /// candidate was not judged. Never a negative label.
  kHarnessError
};

/// The names of verdict statuses, as written in records: the one table of them.
inline constexpr NameTable<VerdictStatus, 9> kVerdictStatusNames = {
    {{VerdictStatus::kOk, "ok"},
     {VerdictStatus::kCompileError, "compile_error"},
     {VerdictStatus::kInvalidSolution, "invalid_solution"},
     {VerdictStatus::kLaunchError, "launch_error"},
     {VerdictStatus::kMismatch, "mismatch"},
     {VerdictStatus::kTimeout, "timeout"},
     {VerdictStatus::kCrash, "crash"},
     {VerdictStatus::kNoGpu, "no_gpu"},
     {VerdictStatus::kHarnessError, "harness_error"}}};
static_assert(kVerdictStatusNames.MatchesEnum());

/// "ok", "compile_error", ... as written in records.
inline std::string_view VerdictStatusName(VerdictStatus status) { return kVerdictStatusNames.Name(status); }
StatusOr<VerdictStatus> ParseVerdictStatus(std::string_view name);

/// What a status says of the candidate. Each is a switch without `default`, so a new status is
/// placed in all three where the build names them.
/// The candidate's own failure, a negative label: compile_error, invalid_solution, launch_error,
/// mismatch, timeout, crash.
bool AtFault(VerdictStatus status);
/// The status comes after a compile that succeeded: ok and what the GPU check finds (launch_error,
/// mismatch, timeout, crash, no_gpu); a verdict with it compiled when it holds a `compile`.
bool Compiled(VerdictStatus status);
/// kforge's side failed and the candidate was not judged (harness_error, no_gpu): never a label.
bool CountsAsHarnessError(VerdictStatus status);

struct Verdict {
  std::string task;
  std::string solution;       ///< Where the solution came from: a path, or "-:N" for line N of stdin.
  std::string solution_hash;  ///< SolutionHash(), empty when the solution did not parse.
  VerdictStatus status = VerdictStatus::kOk;
  std::string message;     ///< One line; empty when ok.
  std::optional<CompileFacts> compile;  ///< null when not compiled
  uint64_t seed = 0;
  std::vector<TrialRecord> trials;
  /// Named checks and their outcomes (docs/formats.md).
  Checks checks;
  std::optional<DeviceRecord> device;  ///< null without a GPU
  /// What judged: {kforge, nvrtc, cuda_runtime, libtorch, arch}.
  std::map<std::string, std::string> toolchain;
  /// Where the time went; keys appear when measured.
  VerdictTiming timing;
  /// Device memory of the GPU check: the task's footprint, the budget and the measured peak; null
  /// when nothing ran on a GPU.
  std::optional<MemoryRecord> memory;
  /// The judge's version (kJudgeVersion when judged now; 1 for records written before the field).
  int judge = kJudgeVersion;
  /// The keys of the record FromJson read that it did not hold (a record from before a key existed, or
  /// one written with fewer): ToJson leaves them out again, so a record read back and written keeps its
  /// bytes. Empty for a verdict judged now; clear it to write every key.
  std::vector<std::string> absent_keys;

  nlohmann::json ToJson() const;
  /// Checks the schema and the fields' types; errors name `path` (a verdict inside a trajectory
  /// record), or the key alone when `path` is empty.
  static StatusOr<Verdict> FromJson(const nlohmann::json& json, const std::string& path = "");
};

/// What the task's derived variants (sizes the problem never asked for, such as the import's `small`)
/// found of a candidate: the GPU check's `checks.shape_general`.
enum class ShapeGeneral {
  kNotProbed,  ///< no derived variant ran: the task has none, or the verdict is not ok (or from judge 2 or
               ///< older, where every variant decided, so an ok candidate passed them all)
  kPass,
  kFail,    ///< the candidate failed one (`checks.shape_general_detail` says how)
  kNotRun,  ///< kforge could not run one (its own failure)
};
inline constexpr NameTable<ShapeGeneral, 4> kShapeGeneralNames = {{{ShapeGeneral::kNotProbed, ""},
                                                                   {ShapeGeneral::kPass, "pass"},
                                                                   {ShapeGeneral::kFail, "fail"},
                                                                   {ShapeGeneral::kNotRun, "not_run"}}};
static_assert(kShapeGeneralNames.MatchesEnum());
ShapeGeneral ShapeGeneralOf(const Verdict& verdict);

/// Correct in KernelBench's meaning (ok at the task's declared sizes) and, where the task has derived
/// sizes, correct at those too. A verdict from before judge 3 that is ok passed every variant.
bool Generalises(const Verdict& verdict);

}  // namespace kforge::common
