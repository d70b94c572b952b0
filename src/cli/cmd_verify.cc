// `kforge verify`: verdict JSON lines on stdout (or, with --emit passing, the solutions that passed),
// a summary on stderr, a JUnit file and GitHub annotations when asked, exit 0/1/2.
#include <CLI/CLI.hpp>
#include <cstdint>

#include <unistd.h>
#include <cstdio>
#include <memory>

#include "cli/ci_report.h"
#include "cli/command.h"
#include "cli/options.h"
#include "cli/rejudge.h"
#include "kforge/verify/judge_server.h"
#include "kforge/verify/verifier.h"

namespace kforge::cli {

namespace {

/// verify's flags.
struct VerifyFlags {
  verify::VerifyOptions options;
  std::vector<std::string> sources;
  GpuRunFlags gpu;
  bool rejudge = false;
  CiFlags ci;
  std::string emit = "verdicts";
  std::string server;
  std::string shard;
};

void AddVerifyFlags(CLI::App& sub, VerifyFlags& f) {
  sub.add_option("solutions", f.sources,
                 "Solution files (.json, model reply, .jsonl), or - for JSON lines on stdin; run folders "
                 "with --rejudge")
      ->required();
  sub.add_flag("--rejudge", f.rejudge,
               "Judge the best attempt of every record of the RUN_DIR arguments again with the current judge, "
               "into RUN_DIR/rejudged.jsonl");
  AddJudgeOptions(sub, f.options);
  sub.add_flag("--sanitize", f.options.sanitize, "Run candidates under compute-sanitizer memcheck (slow)");
  AddGpuRunFlags(sub, f.gpu, f.options.arch);
  AddCiFlags(sub, f.ci);
  sub.add_option("--emit", f.emit,
                 "What stdout carries: verdicts (one per solution), or passing (each solution that passed, "
                 "with its verdict under \"verdict\", for `kforge bench -`)")
      ->default_val("verdicts")
      ->check(CLI::IsMember({"verdicts", "passing"}));
  sub.add_option("--shard", f.shard,
                 "Judge shard i of n (i/n, 0-based): the solutions whose position in the input is i modulo n");
  sub.add_option("--server", f.server,
                 "Judge through the warm judge listening on this socket (kforge serve --socket PATH)");
}

/// Applies the flags to the options and checks the modes against each other (--rejudge, --server,
/// --shard, --emit, the CI reports); InvalidArgument naming the flag.
Status ApplyFlags(VerifyFlags& f, const CiReport& ci, int& shard_index, int& shard_count) {
  KFORGE_RETURN_IF_ERROR(ApplyGpuRunFlags(f.gpu, f.options));
  if (!f.rejudge) KFORGE_RETURN_IF_ERROR(verify::SolutionReader::CheckSources(f.sources));
  KFORGE_RETURN_IF_ERROR(CheckTasksRoot(f.options.tasks_root));
  KFORGE_RETURN_IF_ERROR(ParseShard(f.shard, shard_index, shard_count));
  if (f.rejudge && !f.shard.empty())
    return Status::InvalidArgument("--shard: not with --rejudge (it rewrites whole run folders)");
  KFORGE_RETURN_IF_ERROR(ci.CheckUsage());
  if (f.rejudge && (!f.ci.junit.empty() || f.emit != "verdicts"))
    return Status::InvalidArgument("--rejudge writes into the run folders; --junit and --emit do not apply");
  if (!f.server.empty() && (f.rejudge || f.options.sanitize))
    return Status::InvalidArgument(std::string(f.rejudge ? "--rejudge" : "--sanitize") +
                                   ": not with --server (run it without the server)");
  return Status::Ok();
}

/// A verifier of its own, or one that judges through the warm judge's `connection`.
std::unique_ptr<verify::Verifier> MakeVerifier(const verify::VerifyOptions& options,
                                               const std::unique_ptr<verify::JudgeServerClient>& connection) {
  if (!connection) return std::make_unique<verify::Verifier>(options);
  const uint64_t seed = options.seed ? *options.seed : verify::RandomSeed();
  return std::make_unique<verify::Verifier>(
      [&connection, seed](verify::SolutionInput input) { return connection->Submit(std::move(input), seed); },
      seed);
}

int RunVerifyCommand(VerifyFlags& f) {
  verify::VerifyOptions& options = f.options;
  int shard_index = 0, shard_count = 1;
  CiReport ci("kforge verify", f.ci, f.sources);
  if (Status usage = ApplyFlags(f, ci, shard_index, shard_count); !usage.ok()) return Fail("verify", usage);
  std::unique_ptr<verify::JudgeServerClient> connection;
  if (!f.server.empty()) {
    auto opened = verify::JudgeServerClient::Open(f.server, options);
    if (!opened.ok()) return Fail("verify", opened.status());
    connection = std::move(*opened);
  }
  if (f.rejudge) return RejudgeRuns(f.sources, options);
  std::unique_ptr<verify::Verifier> owned = MakeVerifier(options, connection);
  verify::Verifier& verifier = *owned;
  verify::SolutionReader reader(f.sources);
  reader.SetShard(shard_index, shard_count);
  const bool emit_passing = f.emit == "passing";
  verify::VerifySummary summary = verifier.RunWithSolutions(
      reader, [&](const common::Verdict& verdict, const std::optional<common::BenchResult>&,
                  const common::Solution* solution) {
        ci.Add(CaseFromVerdict(verdict));
        if (!emit_passing) {
          PrintJsonLine(verdict.ToJson());
        } else if (verdict.status == common::VerdictStatus::kOk && solution != nullptr) {
          nlohmann::json passing = common::SolutionToJson(*solution);
          if (solution->task.empty()) passing["task"] = verdict.task;
          passing["verdict"] = verdict.ToJson();
          PrintJsonLine(passing);
        }
      });
  ci.AddSuiteProperty("seed", std::to_string(verifier.seed()));
  ci.AddSuiteProperty("judge", std::to_string(common::kJudgeVersion));
  if (Status written = ci.Finish(); !written.ok()) return Fail("verify", written);
  std::string counts;
  for (const auto& [status, n] : summary.by_status) counts += ", " + std::to_string(n) + " " + status;
  std::fprintf(stderr, "verify: %d solution%s%s (seed %llu)\n", summary.total, summary.total == 1 ? "" : "s",
               counts.c_str(), static_cast<unsigned long long>(verifier.seed()));
  if (summary.total == 0 && shard_count == 1)  // a shard of a larger set may hold none
    return Fail("verify", "no solution was read: the input is empty");
  if (summary.no_gpu)
    return Fail("verify", "no GPU here; --compile-only compiles the solutions and checks their plans without one");
  if (summary.by_status.count(std::string(common::VerdictStatusName(common::VerdictStatus::kHarnessError))))
    return kExitUsage;
  return summary.ok == summary.total ? kExitOk : kExitFailed;
}

}  // namespace

Runner AttachVerify(CLI::App& sub) {
  auto flags = std::make_shared<VerifyFlags>();
  AddVerifyFlags(sub, *flags);
  return [flags] { return RunVerifyCommand(*flags); };
}

}  // namespace kforge::cli
