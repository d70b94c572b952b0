// `kforge bench`: bench JSON lines on stdout, a readable table on stderr, a JUnit file and GitHub
// annotations when asked, exit 0/1/2.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/ci_report.h"
#include "cli/command.h"
#include "cli/options.h"
#include "kforge/bench/bencher.h"
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
  bool hot = false, cold = false, no_verify = false;
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

int RunBenchCommand(BenchFlags& f) {
  bench::BenchOptions& options = f.options;
  CiReport ci("kforge bench", f.ci, f.sources);
  if (Status usage = ApplyFlags(f, ci); !usage.ok()) return Fail("bench", usage);
  bench::Bencher bencher(options);
  std::vector<bench::BenchResult> results;
  auto emit = [&results, &ci](const bench::BenchResult& result, const common::Verdict* verdict) {
    PrintJsonLine(bench::BenchResultToJson(result));
    results.push_back(result);
    ci.Add(CaseFromBench(result, verdict));
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
