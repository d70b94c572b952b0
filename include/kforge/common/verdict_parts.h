// The record forms of a verdict's parts (kforge.verdict/1, docs/formats.md): what the compiler found,
// the trials and their output comparisons, the device and its peaks, the memory plan and where the time
// went, and the named checks. The worker makes them, its replies carry them, verdicts and trajectories hold
// them; this file is their one writer and their one reader. A part read back keeps the keys its record had
// (`absent_keys`, JSON pointers below the part), so a record read and written again keeps its bytes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/names.h"
#include "kforge/common/plan_split.h"
#include "kforge/common/status.h"

namespace kforge::common {

/// Resource usage of one kernel, as ptxas reports it.
struct KernelStats {
  int registers = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_bytes = 0;
  int shared_bytes = 0;  ///< static shared memory
};

/// {symbol: {registers, spill_store_bytes, spill_load_bytes, stack_bytes, shared_bytes}}, as verdicts
/// and the CUBIN cache store it.
nlohmann::json KernelStatsToJson(const std::map<std::string, KernelStats>& kernels);

/// The verdict's `compile`: what the compile of a candidate found.
struct CompileFacts {
  double ms = 0;  ///< wall time of the compile
  bool cached = false;
  std::string log;
  std::string arch;
  std::map<std::string, KernelStats> kernels;  ///< keyed by symbol
  std::vector<std::string> warnings;           ///< one line each: what the compile did to the source
  std::vector<std::string> absent_keys;
};
nlohmann::json CompileFactsToJson(const CompileFacts& facts);
StatusOr<CompileFacts> CompileFactsFromJson(const nlohmann::json& json, const std::string& path);

/// One output of a trial against the reference. Errors that are not finite are written "inf".
struct OutputComparison {
  std::string name;
  double max_abs_err = 0;
  double max_rel_err = 0;
  double rel_l2_err = 0;
  int64_t mismatches = 0;
  int64_t numel = 0;
  std::optional<int64_t> first_mismatch;  ///< flat index; null when none
};

/// One trial of the GPU check.
struct TrialRecord {
  std::string variant;
  int trial = 0;
  int distribution = 0;               ///< 0: the task's input init; 1, 2: alternatives over the same domain
  std::optional<std::string> domain;  ///< the measured input domain it drew from, if any
  uint64_t seed = 0;                  ///< of this trial's inputs
  int runs = 0;                       ///< candidate runs compared
  std::vector<OutputComparison> outputs;
  std::vector<std::string> absent_keys;
};
nlohmann::json TrialRecordToJson(const TrialRecord& trial);
StatusOr<TrialRecord> TrialRecordFromJson(const nlohmann::json& json, const std::string& path);
nlohmann::json TrialRecordsToJson(const std::vector<TrialRecord>& trials);
StatusOr<std::vector<TrialRecord>> TrialRecordsFromJson(const nlohmann::json& json, const std::string& path);

/// A device's measured peaks (bench's roofline). Unknown peaks are 0, written as null.
struct DevicePeak {
  std::string device;      ///< cudaDeviceProp::name, e.g. "NVIDIA H200".
  std::string uuid;        ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it.
  int driver_version = 0;  ///< cudaDriverGetVersion, e.g. 13000.
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double sm_clock_mhz = 0;  ///< Maximum SM clock (cudaDevAttrClockRate).
  /// Achievable DRAM bandwidth, measured: the best of several device-to-device copies of
  /// `copy_bytes`, counting the bytes read and written.
  double dram_gbps = 0;
  uint64_t copy_bytes = 0;
  double fp32_tflops = 0;  ///< FP32 FMA on the CUDA cores.
  double fp16_tflops = 0;  ///< Tensor cores, dense, FP32 accumulate.
  double bf16_tflops = 0;
  double tf32_tflops = 0;
  bool cached = false;  ///< True when dram_gbps came from the cache (not written).

  /// {device, uuid, driver_version, cc, sm_count, sm_clock_mhz, dram_gbps, copy_bytes, fp32_tflops,
  /// fp16_tflops, bf16_tflops, tf32_tflops}; unknown peaks are null.
  nlohmann::json ToJson() const;
};
/// The inverse of DevicePeak::ToJson (null peaks read as 0, unknown); fails without a bandwidth.
StatusOr<DevicePeak> DevicePeakFromJson(const nlohmann::json& json);

/// The GPU that judged: {index, name, cc, sm_count, memory_bytes, l2_bytes}, and in a bench record its
/// peaks.
struct DeviceRecord {
  int index = 0;
  std::string name;
  std::string cc;  ///< "9.0"
  int sm_count = 0;
  uint64_t memory_bytes = 0;
  int64_t l2_bytes = 0;
  std::optional<DevicePeak> peak;  ///< bench records only; absent otherwise
  std::vector<std::string> absent_keys;

  /// Whether the record has `key` ("sm_count"): a device described with fewer keys lacks some.
  bool Has(std::string_view key) const;
};
nlohmann::json DeviceRecordToJson(const DeviceRecord& device);
StatusOr<DeviceRecord> DeviceRecordFromJson(const nlohmann::json& json, const std::string& path);
/// null for none.
nlohmann::json DeviceRecordToJson(const std::optional<DeviceRecord>& device);
/// none for null.
StatusOr<std::optional<DeviceRecord>> OptionalDeviceRecordFromJson(const nlohmann::json& json,
                                                                   const std::string& path);

/// The memory plan of a GPU check or task check, in bytes (docs/worker.md, "Memory").
struct MemoryRecord {
  int64_t inputs_bytes = 0;
  int64_t params_bytes = 0;
  int64_t outputs_bytes = 0;
  int64_t scratch_bytes = 0;      ///< the candidate's
  int64_t footprint_bytes = 0;    ///< the sum of the four above
  int64_t budget_bytes = 0;       ///< what the check may use
  int64_t peak_device_bytes = 0;  ///< measured: the most device memory held at once
  std::vector<std::string> absent_keys;

  /// Whether the record has `key` ("budget_bytes"): a record written with fewer keys lacks some.
  bool Has(std::string_view key) const;
};
nlohmann::json MemoryRecordToJson(const MemoryRecord& memory);
StatusOr<MemoryRecord> MemoryRecordFromJson(const nlohmann::json& json, const std::string& path);

/// The verdict's `timing`, in ms; each key is there when it was measured (`{}` without a GPU).
struct VerdictTiming {
  std::optional<double> gpu_ms;                            ///< the worker's whole check
  std::optional<double> reference_load_ms;                 ///< loading reference packages
  std::optional<double> worker_start_ms;                   ///< the first verdict a worker serves
  std::optional<std::map<std::string, double>> phases_ms;  ///< the trials' wall time by phase
  std::optional<PlanSplit> plan_split;                     ///< of a plan with library ops
};
nlohmann::json VerdictTimingToJson(const VerdictTiming& timing);
StatusOr<VerdictTiming> VerdictTimingFromJson(const nlohmann::json& json, const std::string& path);

/// The outcome of a named check.
enum class CheckOutcome { kPass, kFail, kNotRun, kSkipped };
inline constexpr NameTable<CheckOutcome, 4> kCheckOutcomeNames = {{{CheckOutcome::kPass, "pass"},
                                                                   {CheckOutcome::kFail, "fail"},
                                                                   {CheckOutcome::kNotRun, "not_run"},
                                                                   {CheckOutcome::kSkipped, "skipped"}}};
static_assert(kCheckOutcomeNames.MatchesEnum());

/// checks.repeat_runs: the runs of the first trial compared (a count), or "fail" when one of them
/// differed.
struct RepeatRuns {
  bool failed = false;  ///< written "fail"
  int count = 0;        ///< the runs compared; written when not failed

  bool operator==(const RepeatRuns&) const = default;
};

/// The verdict's `checks`: named checks and their outcomes (docs/formats.md). Each key is there when
/// its check ran; keys this kforge does not know are kept in `other` and written back.
struct Checks {
  // The GPU check (the worker).
  std::optional<CheckOutcome> poisoned_outputs;  ///< pass, fail
  std::optional<CheckOutcome> guard_regions;     ///< pass, fail
  std::optional<CheckOutcome> inputs_unchanged;  ///< pass, fail
  std::optional<RepeatRuns> repeat_runs;
  std::optional<std::string> library_ops;           ///< LibraryOpsShare of the plan's GPU time
  std::optional<CheckOutcome> shape_general;        ///< pass, fail, not_run: the derived variants
  std::optional<std::string> shape_general_detail;  ///< how a derived variant failed
  std::optional<bool> bitwise_deterministic;
  // The judging rules (worker/judge.cc): a line each.
  std::optional<std::string> degenerate_reference;
  std::optional<std::string> elements_only;
  // A task check's variant.
  std::optional<CheckOutcome> rerun;   ///< pass, fail
  std::optional<CheckOutcome> golden;  ///< pass, fail
  // The verify service.
  std::optional<CheckOutcome> sanitizer;  ///< pass, fail
  std::optional<CheckOutcome> gpu_check;  ///< skipped
  /// Keys this kforge does not know (or known keys holding null), as the record had them.
  std::map<std::string, nlohmann::json> other;
  /// A record's `"checks": null`: written back as null while no check is set.
  bool read_as_null = false;

  bool operator==(const Checks&) const = default;
};
/// An object of the keys present, each value as its record wrote it.
nlohmann::json ChecksToJson(const Checks& checks);
/// A known key of the wrong type or an outcome outside its names is InvalidArgument naming
/// "path.key"; null reads as no checks (and is written back as null).
StatusOr<Checks> ChecksFromJson(const nlohmann::json& json, const std::string& path);

/// Whether `pointers` (absent_keys) lack "/key".
bool HasKey(const std::vector<std::string>& pointers, std::string_view key);

/// Removes the keys named by JSON pointers (relative to `json`) that a record read back lacked.
void EraseAbsentKeys(nlohmann::json& json, const std::vector<std::string>& pointers);

}  // namespace kforge::common
