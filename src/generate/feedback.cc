// Feedback text from verdicts and bench records.
#include "generate/feedback.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

namespace kforge::generate {
namespace {


std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string Sci(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

/// "8.39 MB", "1.05 GFLOP": a count with an SI prefix, three significant digits.
std::string Si(double v, const char* unit) {
  static const char* const kPrefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3g %s%s", v, kPrefixes[i], unit);
  return buf;
}

/// The task's roofline from a bench record's `roofline`: what must move and be computed at least, and
/// the time that takes at the device's peaks; empty without a floor.
std::string RooflineFloor(const common::Roofline& roof) {
  const double bytes = roof.bytes, flops = roof.flops, gbps = roof.peak_gbps, tflops = roof.peak_tflops,
               floor_ms = roof.sol_ms;
  if (!(floor_ms > 0)) return "";
  std::string out = "Roofline: the task moves at least " + (bytes > 0 ? Si(bytes, "B") : std::string("? B")) +
                    " and computes " + (flops > 0 ? Si(flops, "FLOP") : std::string("? FLOP")) + "; at ";
  out += (gbps > 0 ? Fixed(gbps, 0) + " GB/s" : std::string("? GB/s")) + " and " +
         (tflops > 0 ? Fixed(tflops, 0) + " TFLOP/s" : std::string("? TFLOP/s"));
  const double memory_ms = gbps > 0 ? bytes / (gbps * 1e6) : 0,
               compute_ms = tflops > 0 ? flops / (tflops * 1e9) : 0;
  out += " its floor is " + Sci(floor_ms) + " ms (" + (memory_ms >= compute_ms ? "memory" : "compute") +
         "-bound)";
  return out + "\n";
}

/// Keeps the head and the tail of a long log.
std::string Trim(const std::string& log) {
  if (log.size() <= kMaxFeedbackLog) return log;
  size_t half = kMaxFeedbackLog / 2;
  return log.substr(0, half) + "\n[... " + std::to_string(log.size() - 2 * half) + " bytes cut ...]\n" +
         log.substr(log.size() - half);
}

/// Quotes the source lines that a compile log names ("(12): error").
std::string QuoteLines(const std::string& log, const std::string& source) {
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  int quoted = 0;
  for (size_t pos = log.find("("); pos != std::string::npos && quoted < 8; pos = log.find("(", pos + 1)) {
    size_t close = log.find(")", pos);
    if (close == std::string::npos || close - pos > 7 || log.compare(close, 3, "): ") != 0) continue;
    int number = std::atoi(log.c_str() + pos + 1);
    if (number < 1 || number > static_cast<int>(lines.size())) continue;
    std::string quote = "line " + std::to_string(number) + ": " + lines[number - 1].substr(0, 200) + "\n";
    if (out.find(quote) == std::string::npos) {
      out += quote;
      ++quoted;
    }
  }
  return out;
}

std::string Kernels(const std::optional<common::CompileFacts>& compile) {
  if (!compile) return "";
  std::string out;
  for (const auto& [name, k] : compile->kernels) {
    out += "- kernel " + name + ": " + std::to_string(k.registers) + " registers";
    if (k.spill_store_bytes + k.spill_load_bytes > 0)
      out += ", spills: " + std::to_string(k.spill_store_bytes) + " bytes stored, " +
             std::to_string(k.spill_load_bytes) + " loaded";
    if (k.shared_bytes > 0) out += ", " + std::to_string(k.shared_bytes) + " bytes static shared memory";
    out += "\n";
  }
  return out;
}

std::string Mismatch(const common::Verdict& verdict) {
  std::string out;
  if (verdict.trials.empty()) return out;
  const common::TrialRecord& trial = verdict.trials.back();
  out += "Failing trial: variant " + (common::HasKey(trial.absent_keys, "variant") ? trial.variant : "default") +
         ", trial " + std::to_string(trial.trial) + "\n";
  for (const common::OutputComparison& o : trial.outputs) {
    out += "- output " + o.name + ": " + Sci(static_cast<double>(o.mismatches)) + " of " +
           Sci(static_cast<double>(o.numel)) + " elements differ; max abs err " + Sci(o.max_abs_err) +
           ", max rel err " + Sci(o.max_rel_err) + ", relative L2 err " + Sci(o.rel_l2_err);
    if (o.first_mismatch) out += "; first at flat index " + Sci(static_cast<double>(*o.first_mismatch));
    out += "\n";
  }
  return out;
}

/// The timing of a candidate that passed: its median against the reference's, the speedup, the
/// roofline (each figure only when the record has it) and the record's flags.
std::string Timing(const std::optional<common::BenchResult>& bench) {
  if (!bench || bench->status != common::VerdictStatus::kOk) return "";
  std::string out;
  if (bench->candidate.stats.count > 0)
    out += "Your kernel: " + Fixed(bench->candidate.stats.median, 4) + " ms (median)";
  if (bench->reference) out += "; reference: " + Fixed(bench->reference->stats.median, 4) + " ms";
  if (std::isfinite(bench->speedup.ratio)) out += "; speedup " + Fixed(bench->speedup.ratio, 2) + "x";
  out += "\n";
  if (const std::optional<common::Roofline>& roof = bench->roofline) {
    if (roof->achieved_gbps > 0) out += "Achieved " + Fixed(roof->achieved_gbps, 0) + " GB/s";
    if (roof->sol_pct > 0) out += ", " + Fixed(roof->sol_pct, 1) + "% of speed of light";
    if (roof->reference_sol_pct > 0) out += " (the reference: " + Fixed(roof->reference_sol_pct, 1) + "%)";
    out += "\n" + RooflineFloor(*roof);
  }
  for (const std::string& flag : bench->flags) out += "Note: " + flag + "\n";
  return out;
}

/// Why a flag of common::kSuspectTimingFlags makes kforge refuse a timing, for the teacher.
std::string SuspectTimingReason(std::string_view flag) {
  if (flag == "faster_than_light")
    return "the kernel ran faster than the time needed just to read its inputs and write its outputs, "
           "so it cannot have done the work on every timed run.";
  return "the speedup was not confirmed when timed again on fresh inputs with a second clock.";
}

}  // namespace

std::string DescribeAttempt(const dataset::Attempt& attempt, const std::string& source) {
  if (!attempt.status)
    return "No solution could be read from your reply: " + attempt.parse_error;
  const common::Verdict none;
  const common::Verdict& v = attempt.verdict ? *attempt.verdict : none;
  const std::string& message = v.message;
  std::string out;
  if (attempt.Is(common::VerdictStatus::kCompileError) ||
      attempt.Is(common::VerdictStatus::kInvalidSolution)) {
    out = (attempt.Is(common::VerdictStatus::kCompileError) ? "Compile error: " : "Invalid solution: ") +
          message + "\n";
    std::string log = v.compile ? v.compile->log : "";
    if (!log.empty()) out += "Compiler output:\n" + Trim(log) + "\n" + QuoteLines(log, source);
    return out;
  }
  std::string kernels = Kernels(v.compile);
  if (attempt.Is(common::VerdictStatus::kOk)) {
    out = attempt.correct ? "Correct: matches the reference on every trial.\n"
                          : "Compiled; the plan checks out.\n";
    out += kernels + Timing(attempt.bench);
    if (attempt.bench && attempt.bench->status != common::VerdictStatus::kOk)
      out += "Timing failed: " + attempt.bench->message + "\n";
    if (!attempt.suspect_timing.empty())
      out += "Timing refused (" + attempt.suspect_timing + "): " + SuspectTimingReason(attempt.suspect_timing) +
             " This speedup counts for nothing; make the kernel compute every output on every run.\n";
    return out;
  }
  out = std::string(attempt.StatusName()) + ": " + message + "\n";
  if (attempt.Is(common::VerdictStatus::kMismatch)) out += Mismatch(v);
  return out + kernels;
}

std::string NextStep(const dataset::Attempt& attempt, double target_speedup, bool compile_only) {
  if (!attempt.status) return "Answer with a complete solution in the required form.";
  if (attempt.Is(common::VerdictStatus::kHarnessError))
    return "That failure was kforge's, not yours; send the solution again.";
  if (compile_only && attempt.Is(common::VerdictStatus::kOk))
    return "It compiles. Make it faster if you can.";
  if (!attempt.correct) return "Fix the problem and send the complete corrected solution.";
  if (!attempt.suspect_timing.empty())
    return "It is correct, but its timing was refused. Send a complete solution that does the work on "
           "every run, without state kept between runs.";
  std::string goal =
      target_speedup > 1 ? "at least " + Fixed(target_speedup, 2) + "x faster than" : "faster than";
  return "It is correct but not yet " + goal +
         " the reference. Make it faster and send the complete solution.";
}

}  // namespace kforge::generate
