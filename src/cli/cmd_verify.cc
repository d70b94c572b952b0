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

Runner AttachVerify(CLI::App& sub) {
  struct Args {
    verify::VerifyOptions options;
    std::vector<std::string> sources;
    GpuRunFlags gpu;
    bool rejudge = false;
    CiFlags ci;
    std::string emit = "verdicts";
    std::string server;
    std::string shard;
  };
  auto args = std::make_shared<Args>();
  sub.add_option("solutions", args->sources,
                 "Solution files (.json, model reply, .jsonl), or - for JSON lines on stdin; run folders "
                 "with --rejudge")
      ->required();
  sub.add_flag("--rejudge", args->rejudge,
               "Judge the best attempt of every record of the RUN_DIR arguments again with the current judge, "
               "into RUN_DIR/rejudged.jsonl");
  AddJudgeOptions(sub, args->options);
  sub.add_flag("--sanitize", args->options.sanitize,
               "Run candidates under compute-sanitizer memcheck (slow)");
  AddGpuRunFlags(sub, args->gpu, args->options.arch);
  AddCiFlags(sub, args->ci);
  sub.add_option("--emit", args->emit,
                 "What stdout carries: verdicts (one per solution), or passing (each solution that passed, "
                 "with its verdict under \"verdict\", for `kforge bench -`)")
      ->default_val("verdicts")
      ->check(CLI::IsMember({"verdicts", "passing"}));
  sub.add_option("--shard", args->shard,
                 "Judge shard i of n (i/n, 0-based): the solutions whose position in the input is i modulo n");
  sub.add_option("--server", args->server,
                 "Judge through the warm judge listening on this socket (kforge serve --socket PATH)");
  return [args]() {
    verify::VerifyOptions& options = args->options;
    Status usage = ApplyGpuRunFlags(args->gpu, options);
    if (usage.ok() && !args->rejudge) usage = verify::SolutionReader::CheckSources(args->sources);
    if (usage.ok()) usage = CheckTasksRoot(options.tasks_root);
    int shard_index = 0, shard_count = 1;
    if (usage.ok()) usage = ParseShard(args->shard, shard_index, shard_count);
    if (usage.ok() && args->rejudge && !args->shard.empty())
      usage = Status::InvalidArgument("--shard: not with --rejudge (it rewrites whole run folders)");
    CiReport ci("kforge verify", args->ci, args->sources);
    if (usage.ok()) usage = ci.CheckUsage();
    if (usage.ok() && args->rejudge && (!args->ci.junit.empty() || args->emit != "verdicts"))
      usage = Status::InvalidArgument("--rejudge writes into the run folders; --junit and --emit do not apply");
    if (usage.ok() && !args->server.empty() && (args->rejudge || options.sanitize))
      usage = Status::InvalidArgument(std::string(args->rejudge ? "--rejudge" : "--sanitize") +
                                      ": not with --server (run it without the server)");
    std::unique_ptr<verify::JudgeConnection> connection;
    if (usage.ok() && !args->server.empty()) {
      auto opened = verify::JudgeConnection::Open(args->server, options);
      if (opened.ok()) connection = std::move(*opened);
      else usage = opened.status();
    }
    if (!usage.ok()) {
      return Fail("verify", usage);
    }
    if (args->rejudge) return RejudgeRuns(args->sources, options);
    std::unique_ptr<verify::Verifier> owned;
    if (connection) {
      const uint64_t seed = options.seed ? *options.seed : verify::RandomSeed();
      owned = std::make_unique<verify::Verifier>(
          [&connection, seed](verify::SolutionInput input) { return connection->Submit(std::move(input), seed); },
          seed);
    } else {
      owned = std::make_unique<verify::Verifier>(options);
    }
    verify::Verifier& verifier = *owned;
    verify::SolutionReader reader(args->sources);
    reader.SetShard(shard_index, shard_count);
    const bool emit_passing = args->emit == "passing";
    verify::VerifySummary summary = verifier.RunWithSolutions(
        reader, [&](const common::Verdict& verdict, const std::any&, const common::Solution* solution) {
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
    if (Status written = ci.Finish(); !written.ok()) {
      return Fail("verify", written);
    }
    std::string counts;
    for (const auto& [status, n] : summary.by_status) counts += ", " + std::to_string(n) + " " + status;
    std::fprintf(stderr, "verify: %d solution%s%s (seed %llu)\n", summary.total,
                 summary.total == 1 ? "" : "s", counts.c_str(),
                 static_cast<unsigned long long>(verifier.seed()));
    if (summary.total == 0 && shard_count == 1) {  // a shard of a larger set may hold none
      return Fail("verify", "no solution was read: the input is empty");
    }
    if (summary.no_gpu)
      return Fail("verify", "no GPU here; --compile-only compiles the solutions and checks their plans without one");
    if (summary.by_status.count(std::string(common::VerdictStatusName(common::VerdictStatus::kHarnessError)))) return kExitUsage;
    return summary.ok == summary.total ? kExitOk : kExitFailed;
  };
}

}  // namespace kforge::cli
