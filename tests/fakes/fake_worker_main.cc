// A stand-in for `kforge worker --device N` (VerifyOptions::worker_program), for tests of the
// pipeline without a GPU. It speaks kforge.worker/1 and answers as markers in the candidate's
// source say:
//   // fake:ok            ok (also without a marker)
//   // fake:mismatch      mismatch, with checks.poisoned_outputs = "fail"
//   // fake:crash         crash with "exiting": true, then exits with code 3
//   // fake:die           exits with code 3 without answering
//   // fake:hang          never answers
//   // fake:garbage       answers a line that is not JSON
//   // fake:bad_reply     answers a check reply whose "trials" is a string
//   // fake:sleep=MS      waits MS milliseconds before the rest
//   // fake:bench=STATUS  bench replies STATUS instead of timing (e.g. mismatch)
//   // fake:speedups=A,B  the n-th bench request for this source times the candidate A (then B, ...)
//                        times faster than the reference; the last repeats
//   // fake:ops=F         the plan has library ops that take the fraction F of its GPU time: the check's
//                        timing.plan_split and checks.library_ops, and the bench reply's plan_split
// A task_check answers ok, or fail when the task folder's name contains "fake_fail".
// hello with peak answers the peaks of FakePeak(); bench replies carry them with KFORGE_FAKE_PEAK=1.
// Environment:
//   KFORGE_FAKE_NO_GPU=1       every reply is no_gpu, as from a machine without a device
//   KFORGE_FAKE_PEAK=1         bench replies carry FakePeak() (rooflines in bench records)
//   KFORGE_FAKE_WORKER_LOG=F   appends "start DEVICE" when a worker starts and "OP DEVICE" per request
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "kforge/bench/wire.h"
#include "kforge/common/library_ops.h"
#include "kforge/common/plan_split.h"
#include "kforge/common/verdict.h"
#include "kforge/common/verdict_parts.h"
#include "kforge/verify/worker_protocol.h"

namespace {

using kforge::common::VerdictStatus;
namespace verify = kforge::verify;
namespace bench = kforge::bench;

std::string device_index = "0";

void Log(const std::string& line) {
  const char* path = std::getenv("KFORGE_FAKE_WORKER_LOG");
  if (path == nullptr || *path == '\0') return;
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  std::string text = line + " " + device_index + "\n";
  (void)!write(fd, text.data(), text.size());  // one write: lines of several workers never interleave
  close(fd);
}

void Answer(const nlohmann::json& reply) { std::cout << reply.dump() << "\n" << std::flush; }

bool Has(const std::string& source, const std::string& marker) {
  return source.find("fake:" + marker) != std::string::npos;
}

/// The value of `fake:NAME=VALUE` (up to white space), or "".
std::string Value(const std::string& source, const std::string& name) {
  size_t at = source.find("fake:" + name + "=");
  if (at == std::string::npos) return "";
  at += name.size() + 6;
  return source.substr(at, source.find_first_of(" \n\t", at) - at);
}

/// {kernels_ms, ops_ms, ops_fraction} of 1 ms of plan as `fake:ops=F` says; null without the marker.
std::optional<kforge::common::PlanSplit> PlanSplit(const std::string& source) {
  std::string fraction = Value(source, "ops");
  if (fraction.empty()) return std::nullopt;
  double ops = std::stod(fraction);
  return kforge::common::PlanSplit{1 - ops, ops, ops};
}

/// The fake's records are short: read from JSON, they keep only the keys given.
template <typename T>
T Short(kforge::StatusOr<T> read) {
  if (!read.ok()) std::abort();
  return std::move(*read);
}

kforge::common::DeviceRecord Device() {
  return Short(kforge::common::DeviceRecordFromJson(
      {{"name", "Fake GPU"}, {"index", std::stoi(device_index)}, {"cc", "9.0"}}, "device"));
}

/// The markers that act before any answer: sleep, die, hang.
void Act(const std::string& source) {
  if (std::string ms = Value(source, "sleep"); !ms.empty())
    std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(ms)));
  if (Has(source, "die")) std::_Exit(3);
  if (Has(source, "hang")) {
    while (true) pause();
  }
  if (Has(source, "garbage")) {
    std::cout << "not json\n" << std::flush;
    while (true) pause();
  }
}

nlohmann::json Check(const nlohmann::json& line) {
  auto request = verify::CheckRequest::FromJson(line);
  if (!request.ok())
    return verify::FailureReplyJson(VerdictStatus::kHarnessError, request.status().message());
  const std::string& source = request->solution.source;
  Act(source);
  verify::CheckReply reply;
  reply.device = Device();
  reply.timing = verify::CheckTiming{1.0, 0.0, {{"candidate", 0.5}}, PlanSplit(source)};
  reply.checks.guard_regions = kforge::common::CheckOutcome::kPass;
  reply.checks.poisoned_outputs = kforge::common::CheckOutcome::kPass;
  if (reply.timing->plan_split)
    reply.checks.library_ops =
        std::string(kforge::common::LibraryOpsShare(reply.timing->plan_split->ops_fraction));
  for (int t = 0; t < request->trials; ++t)
    reply.trials.push_back(Short(kforge::common::TrialRecordFromJson(
        {{"variant", "default"}, {"trial", t}, {"seed", request->seed}}, "trial")));
  reply.memory = Short(kforge::common::MemoryRecordFromJson({{"budget_bytes", 1024}, {"peak_device_bytes", 512}}, "memory"));
  if (Has(source, "mismatch")) {
    reply.status = VerdictStatus::kMismatch;
    reply.message = "out0: 7 of 100 elements differ";
    reply.checks.poisoned_outputs = kforge::common::CheckOutcome::kFail;
  } else if (Has(source, "crash")) {
    reply.status = VerdictStatus::kCrash;
    reply.message = "kernel faulted: cudaErrorIllegalAddress";
    reply.exiting = true;
  }
  nlohmann::json out = reply.ToJson();
  if (Has(source, "bad_reply")) out["trials"] = "many";
  return out;
}

// 1000 GB/s and 50 TFLOP/s (float32), so that a test can work a roofline out by hand.
bench::DevicePeak FakePeak() {
  bench::DevicePeak peak;
  peak.device = "Fake GPU";
  peak.uuid = "GPU-00000000-0000-0000-0000-000000000000";
  peak.driver_version = 13000;
  peak.cc_major = 9;
  peak.sm_count = 132;
  peak.sm_clock_mhz = 1980;
  peak.dram_gbps = 1000;
  peak.copy_bytes = 1 << 30;
  peak.fp32_tflops = 50;
  peak.tf32_tflops = 50;
  peak.fp16_tflops = peak.bf16_tflops = 500;
  return peak;
}

nlohmann::json Bench(const nlohmann::json& line) {
  auto request = bench::BenchRequest::FromJson(line);
  if (!request.ok())
    return verify::FailureReplyJson(VerdictStatus::kHarnessError, request.status().message());
  std::string source = request->solution ? request->solution->source : "";
  Act(source);
  bench::BenchReply reply;
  if (std::string status = Value(source, "bench"); !status.empty()) {
    auto parsed = kforge::common::ParseVerdictStatus(status);
    reply.status = parsed.ok() ? *parsed : VerdictStatus::kHarnessError;
    reply.message = "fake bench: " + status;
    return reply.ToJson();
  }
  bench::Measurement m;
  m.mode = request->measure.mode;
  double candidate_ms = 1.0;
  if (std::string speedups = Value(source, "speedups"); !speedups.empty()) {
    static std::map<std::string, size_t> requests;  // per source: bench requests so far
    std::vector<double> each;
    for (size_t at = 0; at <= speedups.size();) {
      size_t comma = std::min(speedups.find(',', at), speedups.size());
      each.push_back(std::stod(speedups.substr(at, comma - at)));
      at = comma + 1;
    }
    candidate_ms = 2.0 / each[std::min(requests[source]++, each.size() - 1)];
  }
  if (request->solution) m.subjects.push_back({"candidate", std::vector<double>(10, candidate_ms), 0, 1, 0.01});
  m.subjects.push_back({"reference", std::vector<double>(10, 2.0), 0, 1, 0.02});
  m.converged = true;
  m.rounds = 10;
  m.wall_seconds = 0.1;
  m.sm_clock_mhz = m.max_sm_clock_mhz = 1980;
  reply.measurement = m;
  reply.checked_runs = request->solution ? 10 : 0;
  reply.placements = 1;
  reply.memory = Short(kforge::common::MemoryRecordFromJson({{"budget_bytes", 1024}}, "memory"));
  reply.device = Device();
  reply.plan_split = PlanSplit(source);
  if (std::getenv("KFORGE_FAKE_PEAK")) reply.peak = FakePeak();
  return reply.ToJson();
}

nlohmann::json TaskCheck(const nlohmann::json& line) {
  auto request = verify::TaskCheckRequest::FromJson(line);
  if (!request.ok())
    return verify::FailureReplyJson(VerdictStatus::kHarnessError, request.status().message());
  verify::TaskCheckReply reply;
  verify::TaskCheckVariant variant;
  variant.variant = "default";
  variant.reference_ms = 1.5;
  variant.checks.rerun = kforge::common::CheckOutcome::kPass;
  variant.memory =
      Short(kforge::common::MemoryRecordFromJson({{"footprint_bytes", 1000}, {"peak_device_bytes", 1200}}, "memory"));
  reply.variants.push_back(variant);
  if (request->task_dir.filename().string().find("fake_fail") != std::string::npos) {
    reply.status = kforge::verify::TaskCheckStatus::kFail;
    reply.message = "golden outputs: out0: 9 of 10 elements differ";
  }
  return reply.ToJson();
}

// A task_audit refuses every candidate, but accepts zeros when the task folder's name contains
// "fake_hole".
nlohmann::json TaskAudit(const nlohmann::json& line) {
  auto request = verify::TaskAuditRequest::FromJson(line);
  if (!request.ok())
    return verify::FailureReplyJson(VerdictStatus::kHarnessError, request.status().message());
  verify::TaskAuditReply reply;
  bool hole = request->task_dir.filename().string().find("fake_hole") != std::string::npos;
  if (request->timing) {
    // Timing cheats: the memo takes its shortcut on a "fake_hole" task, is 40% faster on a "fake_fast"
    // one and 10% faster (within the noise) on a "fake_near" one; the control takes its shortcut everywhere
    // but on a "fake_big" task, where the outputs are too large for the memo and its control.
    bool big = request->task_dir.filename().string().find("fake_big") != std::string::npos;
    bool fast = request->task_dir.filename().string().find("fake_fast") != std::string::npos;
    bool near = request->task_dir.filename().string().find("fake_near") != std::string::npos;
    for (const char* name : {"memo", "launch_counter", "relaunch_flag", "control:memo_unrestored"}) {
      verify::AuditedCandidate c;
      c.name = name;
      bool control = std::string(name) == "control:memo_unrestored";
      bool memo = std::string(name) == "memo";
      c.accepted = control || (hole && memo);
      c.message = c.accepted ? "" : "no shortcut on any of 9 checked timed runs";
      c.timing = verify::AuditedTiming{.checked_runs = 9,
                                       .shortcuts = c.accepted ? 8 : 0,
                                       .median_ms = control || (memo && (hole || fast)) ? 0.6
                                                    : memo && near                    ? 0.9
                                                                                      : 1.01,
                                       .honest_ms = 1.0,
                                       .draws = control ? 1 : 4,
                                       .control = control};
      if (big && (memo || control)) {
        c.accepted = false;
        c.message = "not applicable: the outputs take 64.0 MiB, more than the memo's 48.0 MiB";
        c.timing = verify::AuditedTiming{.control = control};
      }
      reply.candidates.push_back(c);
    }
    return reply.ToJson();
  }
  for (const char* name : {"zeros", "byte_pattern", "copy:x", "first_half", "other_inputs"}) {
    bool accepted = hole && std::string(name) == "zeros";
    reply.candidates.push_back({name, accepted, accepted ? "" : "out0: relative L2 error 1.0 exceeds 0.001", std::nullopt});
  }
  return reply.ToJson();
}

/// The reply to one request line (the fake's answer to an op it does not know included).
nlohmann::json ReplyTo(const nlohmann::json& line, const std::optional<verify::WorkerOp>& op) {
  if (!op)
    return verify::FailureReplyJson(VerdictStatus::kHarnessError,
                                    "fake: unknown op \"" + verify::RequestOpText(line) + "\"");
  switch (*op) {
    case verify::WorkerOp::kHello: {
      auto request = verify::HelloRequest::FromJson(line);
      verify::HelloReply reply;
      reply.device = Device();
      reply.peak_asked = request.ok() && request->peak;
      if (reply.peak_asked) reply.peak = FakePeak();
      return reply.ToJson();
    }
    case verify::WorkerOp::kCheck:
      return Check(line);
    case verify::WorkerOp::kBench:
      return Bench(line);
    case verify::WorkerOp::kTaskCheck:
      return TaskCheck(line);
    case verify::WorkerOp::kTaskAudit:
      return TaskAudit(line);
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--device") device_index = argv[i + 1];
  }
  Log("start");
  const bool no_gpu = std::getenv("KFORGE_FAKE_NO_GPU") != nullptr;
  std::string text;
  while (std::getline(std::cin, text)) {
    nlohmann::json line = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    std::string op = verify::RequestOpText(line);
    Log(op.empty() ? "malformed" : op);
    if (no_gpu) {
      Answer(verify::FailureReplyJson(VerdictStatus::kNoGpu, "fake: no CUDA device"));
      continue;
    }
    nlohmann::json reply = ReplyTo(line, verify::RequestOp(line));
    Answer(reply);
    if (reply.value("exiting", false)) std::_Exit(3);  // a crash reply: the worker exits after it
  }
  return 0;
}
