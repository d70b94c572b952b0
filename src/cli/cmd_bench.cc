// `kforge bench`: bench JSON lines on stdout, a readable table on stderr, a JUnit file and GitHub
// annotations when asked, exit 0/1/2.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/ci_report.h"
#include "cli/command.h"
#include "cli/options.h"
#include "kforge/bench/bencher.h"
#include "kforge/bench/torch_compile.h"
#include "kforge/common/task.h"

namespace kforge::cli {
namespace {

/// "0.5%" -> 0.005; "0.005" -> 0.005.
StatusOr<double> ParseFraction(const std::string& text) {
  std::string number = text;
  bool percent = !number.empty() && number.back() == '%';
  if (percent) number.pop_back();
  char* end = nullptr;
  double value = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !(value >= 0) || !std::isfinite(value))
    return Status::InvalidArgument("expected a fraction such as 0.005 or 0.5%, got \"" + text + "\"");
  return percent ? value / 100 : value;
}

/// The CI case of a bench record: the verdict's case, with the timing's status, time and speedup.
CiCase CaseFromBench(const bench::BenchResult& result, const common::Verdict* verdict) {
  CiCase c;
  if (verdict != nullptr) {
    c = CaseFromVerdict(*verdict);
  } else {
    c.classname = result.task;
    c.name = result.task + " (reference)";
  }
  c.seconds += result.wall_seconds;
  const std::string status(common::VerdictStatusName(result.status));
  if (c.status != status) {
    c.status = status;
    c.message = result.message;
    c.outcome = OutcomeOf(result.status);
    c.properties.insert(c.properties.begin(), std::pair<std::string, std::string>("bench_status", status));
  }
  if (result.status == common::VerdictStatus::kOk) {
    char text[32];
    if (std::isfinite(result.speedup.ratio)) {
      std::snprintf(text, sizeof text, "%.4g", result.speedup.ratio);
      c.properties.emplace_back("speedup", text);
    }
    std::snprintf(text, sizeof text, "%.6g", result.candidate.stats.median);
    c.properties.emplace_back("median_ms", text);
  }
  return c;
}

/// --reference takes task ids; a file among them is a solution given with --reference (CLI11 gives
/// every later positional argument to the option).
Status CheckReferenceIds(const std::vector<std::string>& ids) {
  for (const std::string& id : ids) {
    std::error_code ec;
    if (std::filesystem::exists(id, ec))
      return Status::InvalidArgument("--reference " + id +
                                     ": a file, not a task id (solutions and --reference do not mix)");
    if (Status valid = common::CheckTaskId(id); !valid.ok())
      return Status::InvalidArgument("--reference: " + valid.message());
  }
  return Status::Ok();
}

/// bench's flags.
struct BenchFlags {
  bench::BenchOptions options;
  std::vector<std::string> sources;
  std::vector<std::string> references;
  GpuRunFlags gpu;
  std::string max_noise = "0.5%";
  bool hot = false, cold = false, no_verify = false, torch_compile = false;
  std::string torch_compile_mode = "default";
  CiFlags ci;
};

void AddBenchFlags(CLI::App& sub, BenchFlags& f) {
  sub.add_option("solutions", f.sources, "Solution files (.json, model reply, .jsonl), or - for JSON lines on stdin");
  sub.add_option("--reference", f.references, "Time these tasks' references alone (task ids)");
  AddSolutionTaskOptions(sub, f.options.verify.tasks_root, f.options.verify.task);
  auto* cold = sub.add_flag("--cold", f.cold, "Flush L2 before every sample (default)");
  sub.add_flag("--hot", f.hot, "Time back-to-back runs (warm caches)")->excludes(cold);
  sub.add_option("--max-noise", f.max_noise,
                 "Stop when the median is known this precisely (95% CI half-width), e.g. 0.5%")
      ->default_val("0.5%");
  sub.add_option("--min-samples", f.options.measure.min_samples, "Samples before stopping may happen")
      ->default_val(10)
      ->check(CLI::Range(1, 1000000));
  sub.add_option("--max-samples", f.options.measure.max_samples, "Most samples per subject")
      ->default_val(2000)
      ->check(CLI::Range(1, 1000000));
  sub.add_option("--max-time", f.options.measure.max_seconds, "Most seconds of sampling per solution")
      ->default_val(10)
      ->check(FiniteRange(0.01, 3600.0), "[0.01, 3600]");
  sub.add_option("--trials", f.options.verify.trials, "Verification trials before timing")
      ->default_val(2)
      ->check(CLI::Range(1, 1000));
  sub.add_flag("--no-verify", f.no_verify, "Time without the verification trials (timed runs are still checked)");
  sub.add_flag("--torch-compile", f.torch_compile,
               "Also time each task's reference under torch.compile (in Python, after the bench; records "
               "torch_compile and speedup_vs_torch_compile, with the time it took)");
  sub.add_option("--torch-compile-mode", f.torch_compile_mode,
                 "torch.compile's mode for --torch-compile (default, reduce-overhead, max-autotune)")
      ->default_val("default");
  AddGpuRunFlags(sub, f.gpu, f.options.verify.arch);
  AddCiFlags(sub, f.ci);
}

/// Applies the flags to the options; InvalidArgument naming the flag. The measurement's own checks
/// are bench's (ValidateMeasureOptions).
Status ApplyFlags(BenchFlags& f, const CiReport& ci) {
  bench::BenchOptions& options = f.options;
  if (f.sources.empty() == f.references.empty())
    return Status::InvalidArgument("give solutions, or --reference TASK... (not both)");
  StatusOr<double> max_noise = ParseFraction(f.max_noise);
  if (!max_noise.ok()) return max_noise.status().WithContext("--max-noise");
  KFORGE_RETURN_IF_ERROR(ApplyGpuRunFlags(f.gpu, options.verify));
  KFORGE_RETURN_IF_ERROR(verify::SolutionReader::CheckSources(f.sources));
  KFORGE_RETURN_IF_ERROR(CheckReferenceIds(f.references));
  KFORGE_RETURN_IF_ERROR(CheckTasksRoot(options.verify.tasks_root));
  KFORGE_RETURN_IF_ERROR(ci.CheckUsage());
  options.measure.max_noise = *max_noise;
  options.measure.mode = f.hot ? bench::Mode::kHot : bench::Mode::kCold;
  KFORGE_RETURN_IF_ERROR(bench::ValidateMeasureOptions(options.measure));
  options.verify.gpu_check = !f.no_verify;
  return Status::Ok();
}

/// The torch.compile baseline of each timed record's task, measured once per task; a task whose baseline
/// cannot be measured gets a line on stderr and no baseline.
void AddTorchCompileBaselines(const std::filesystem::path& tasks_root, const std::string& mode,
                              std::vector<bench::BenchResult>& results) {
  bench::TorchCompileOptions options;
  options.script = ScriptPath("torch_compile_baseline.py");
  options.mode = mode;
  bench::TorchCompileBaselines baselines(options);
  std::map<std::string, StatusOr<common::TorchCompileBaseline>> by_task;
  double took = 0;
  for (bench::BenchResult& result : results) {
    if (result.status != common::VerdictStatus::kOk) continue;
    auto found = by_task.find(result.task);
    if (found == by_task.end()) {
      StatusOr<common::Task> task = common::FindTask(tasks_root, result.task);
      StatusOr<common::TorchCompileBaseline> baseline =
          task.ok() ? baselines.For(task->dir) : StatusOr<common::TorchCompileBaseline>(task.status());
      if (baseline.ok()) took += baseline->took_seconds;
      if (!baseline.ok())
        std::fprintf(stderr, "bench: %s: no torch.compile baseline: %s\n", result.task.c_str(),
                     baseline.status().message().c_str());
      found = by_task.emplace(result.task, std::move(baseline)).first;
    }
    if (found->second.ok()) result.torch_compile = *found->second;
  }
  std::fprintf(stderr, "bench: torch.compile baselines of %zu tasks took %.1f s\n", by_task.size(), took);
}

int RunBenchCommand(BenchFlags& f) {
  bench::BenchOptions& options = f.options;
  CiReport ci("kforge bench", f.ci, f.sources);
  if (Status usage = ApplyFlags(f, ci); !usage.ok()) return Fail("bench", usage);
  bench::Bencher bencher(options);
  std::vector<bench::BenchResult> results;
  std::vector<std::optional<common::Verdict>> verdicts;  // held back for --torch-compile
  auto print = [&ci](const bench::BenchResult& result, const common::Verdict* verdict) {
    PrintJsonLine(bench::BenchResultToJson(result));
    ci.Add(CaseFromBench(result, verdict));
  };
  auto emit = [&](const bench::BenchResult& result, const common::Verdict* verdict) {
    results.push_back(result);
    if (!f.torch_compile) return print(result, verdict);
    verdicts.push_back(verdict ? std::optional<common::Verdict>(*verdict) : std::nullopt);
  };
  bench::BenchSummary summary;
  if (!f.references.empty()) {
    summary =
        bencher.RunReferences(f.references, [&emit](const bench::BenchResult& result) { emit(result, nullptr); });
  } else {
    verify::SolutionReader reader(f.sources);
    summary = bencher.RunJudged(reader, [&emit](const bench::BenchResult& result, const common::Verdict& verdict) {
      emit(result, &verdict);
    });
  }
  if (f.torch_compile) {
    // After every bench, so that nothing else runs on the GPU while Python times.
    AddTorchCompileBaselines(options.verify.tasks_root, f.torch_compile_mode, results);
    for (size_t i = 0; i < results.size(); ++i) print(results[i], verdicts[i] ? &*verdicts[i] : nullptr);
  }
  ci.AddSuiteProperty("seed", std::to_string(bencher.seed()));
  if (Status written = ci.Finish(); !written.ok()) return Fail("bench", written);
  bench::PrintTable(std::cerr, results);
  std::fprintf(stderr, "bench: %d timed of %d (%s, seed %llu)\n", summary.ok, summary.total,
               std::string(common::kTimingModeNames.Name(options.measure.mode)).c_str(),
               static_cast<unsigned long long>(bencher.seed()));
  if (summary.no_gpu)
    return Fail("bench", "no GPU here; timing needs one (kforge verify --compile-only compiles and checks plans "
                         "without one)");
  if (summary.harness_errors > 0) return kExitUsage;
  return summary.ok == summary.total ? kExitOk : kExitFailed;
}

}  // namespace

Runner AttachBench(CLI::App& sub) {
  auto flags = std::make_shared<BenchFlags>();
  AddBenchFlags(sub, *flags);
  return [flags] { return RunBenchCommand(*flags); };
}

}  // namespace kforge::cli
