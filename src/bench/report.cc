// Bench records: assembly from a Measurement, flags, and the table printer.
#include "kforge/bench/report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "kforge/common/library_ops.h"

namespace kforge::bench {
namespace {

SubjectResult ToResult(const SubjectSamples& samples) {
  SubjectResult r;
  r.stats = Summarize(samples.ms);
  r.samples_ms = samples.ms;
  r.throttled = samples.throttled;
  r.batch = samples.batch;
  return r;
}

std::string Printf(const char* format, double a, double b = 0, double c = 0) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), format, a, b, c);
  return buf;
}

// "12.345 us"; the unit follows the magnitude. "-" when not a number.
std::string Duration(double ms) {
  if (!std::isfinite(ms)) return "-";
  if (ms < 1e-3) return Printf("%.1f ns", ms * 1e6);
  if (ms < 1) return Printf("%.3f us", ms * 1e3);
  if (ms < 1e3) return Printf("%.3f ms", ms);
  return Printf("%.3f s", ms / 1e3);
}

// Display width: UTF-8 code points.
size_t Width(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string Join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

constexpr size_t kColumns = 8;
using Row = std::array<std::string, kColumns>;
constexpr std::array<bool, kColumns> kRightAligned = {false, false, true, true, true, true, true, false};

Row TableRow(const BenchResult& r) {
  Row row = {r.task, std::string(common::VerdictStatusName(r.status)), "-", "-", "-", "-", "-", "-"};
  if (r.status != common::VerdictStatus::kOk) {
    if (!r.message.empty()) row[7] = r.message;
    return row;
  }
  if (r.candidate.stats.count > 0) {
    row[2] = Duration(r.candidate.stats.median);
    if (std::isfinite(r.candidate.stats.noise))
      row[2] += Printf(" \u00b1 %.2f%%", r.candidate.stats.noise * 100);
  }
  if (r.reference) {
    row[3] = Duration(r.reference->stats.median);
    if (r.candidate.stats.count == 0 && std::isfinite(r.reference->stats.noise))
      row[3] += Printf(" \u00b1 %.2f%%", r.reference->stats.noise * 100);
  }
  if (std::isfinite(r.speedup.ratio)) {
    row[4] = std::isfinite(r.speedup.lo) && std::isfinite(r.speedup.hi)
                 ? Printf("%.2fx [%.2f, %.2f]", r.speedup.ratio, r.speedup.lo, r.speedup.hi)
                 : Printf("%.2fx", r.speedup.ratio);
  }
  if (r.roofline && r.roofline->achieved_gbps > 0) row[5] = Printf("%.1f", r.roofline->achieved_gbps);
  if (r.roofline && r.roofline->sol_pct > 0) row[6] = Printf("%.1f", r.roofline->sol_pct);
  if (!r.flags.empty()) row[7] = Join(r.flags, ",");
  return row;
}

}  // namespace

StatusOr<BenchResult> MakeBenchResult(const Measurement& measurement, uint64_t seed,
                                      const std::optional<TaskCost>& cost,
                                      const std::optional<DevicePeak>& peak) {
  const size_t n = measurement.subjects.size();
  if (n != 1 && n != 2) {
    return Status::InvalidArgument("a bench record needs a candidate and at most one reference, got " +
                                   std::to_string(n) + " subjects");
  }
  BenchResult r;
  r.mode = measurement.mode;
  if (n == 1 && measurement.subjects[0].name == kReferenceSubject) {
    // The reference alone: its roofline, no candidate and no speedup.
    r.reference = ToResult(measurement.subjects[0]);
    r.speedup = BootstrapSpeedup({}, {}, seed);
    if (cost && peak) {
      r.roofline = ComputeRoofline(*cost, *peak, r.reference->stats.median);
      r.roofline->reference_sol_pct = r.roofline->sol_pct;
    }
  } else {
    r.candidate = ToResult(measurement.subjects[0]);
  }
  if (n == 2) {
    r.reference = ToResult(measurement.subjects[1]);
    r.speedup = BootstrapSpeedup(measurement.subjects[1].ms, measurement.subjects[0].ms, seed);
  } else if (!r.reference) {
    r.speedup = BootstrapSpeedup({}, {}, seed);
  }
  if (cost && peak && !r.roofline) {
    r.roofline = ComputeRoofline(*cost, *peak, r.candidate.stats.median);
    if (r.reference && r.reference->stats.median > 0)
      r.roofline->reference_sol_pct = r.roofline->sol_ms / r.reference->stats.median * 100;
  }
  r.converged = measurement.converged;
  r.rounds = measurement.rounds;
  r.wall_seconds = measurement.wall_seconds;
  r.sm_clock_mhz = measurement.sm_clock_mhz;
  r.max_sm_clock_mhz = measurement.max_sm_clock_mhz;
  r.seed = seed;
  r.flags = BenchFlags(r);
  return r;
}

std::vector<std::string> BenchFlags(const BenchResult& r) {
  std::vector<std::string> flags;
  if (r.status != common::VerdictStatus::kOk) return flags;
  if (r.speedup.ratio > kImplausibleSpeedup) flags.push_back("implausible_speedup");
  if (r.roofline && r.roofline->sol_ms > 0 && r.candidate.stats.count > 0 &&
      r.candidate.stats.median < r.roofline->sol_ms) {
    flags.push_back("faster_than_light");
  }
  if (r.recheck_speedup && !(*r.recheck_speedup >= r.speedup.ratio * kRecheckAgreement))
    flags.push_back("timing_unconfirmed");
  if (!r.converged) flags.push_back("unconverged");
  if (r.candidate.throttled > 0 || (r.reference && r.reference->throttled > 0)) flags.push_back("throttled");
  if (r.plan_split && r.plan_split->ops_fraction > common::kMostlyLibraryOps)
    flags.push_back("mostly_library_ops");
  return flags;
}

void PrintTable(std::ostream& out, const std::vector<BenchResult>& results) {
  std::vector<Row> rows = {{"task", "status", "candidate", "reference", "speedup", "GB/s", "%SOL", "flags"}};
  for (const BenchResult& r : results) rows.push_back(TableRow(r));
  std::array<size_t, kColumns> widths{};
  for (const Row& row : rows) {
    for (size_t c = 0; c < kColumns; ++c) widths[c] = std::max(widths[c], Width(row[c]));
  }
  for (const Row& row : rows) {
    std::string line;
    for (size_t c = 0; c < kColumns; ++c) {
      const std::string pad(widths[c] - Width(row[c]), ' ');
      if (c > 0) line += "  ";
      line += kRightAligned[c] ? pad + row[c] : row[c] + (c + 1 < kColumns ? pad : "");
    }
    out << line << "\n";
  }
}

}  // namespace kforge::bench
