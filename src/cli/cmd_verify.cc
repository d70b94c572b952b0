// `kforge verify`: verdict JSON lines on stdout, a summary on stderr, exit 0/1/2.
#include <CLI/CLI.hpp>
#include <cstdint>

#include <unistd.h>
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/options.h"
#include "kforge/verify/verifier.h"

namespace kforge::cli {

Runner AttachVerify(CLI::App& sub) {
  struct Args {
    verify::VerifyOptions options;
    std::vector<std::string> sources;
    std::string devices = "0";
    uint64_t seed = 0;
    double kernel_timeout_s = 10;
    bool no_cache = false;
  };
  auto args = std::make_shared<Args>();
  sub.add_option("solutions", args->sources,
                 "Solution files (.json, model reply, .jsonl), or - for JSON lines on stdin")
      ->required();
  AddTasksRootOption(sub, args->options.tasks_root);
  sub.add_option("--task", args->options.task, "Task id for solutions that do not name one");
  sub.add_option("--trials", args->options.trials, "Trials on fresh inputs (default shape)")
      ->default_val(5)
      ->check(CLI::Range(1, 1000));
  auto* seed = sub.add_option("--seed", args->seed, "Run seed (random by default; recorded in verdicts)");
  sub.add_flag("--compile-only", args->options.compile_only, "Compile and check plans only; no GPU needed");
  sub.add_option("--devices", args->devices, "GPUs to use, e.g. 0,1")->default_val("0");
  sub.add_flag("--sanitize", args->options.sanitize,
               "Run candidates under compute-sanitizer memcheck (slow)");
  sub.add_option("--arch", args->options.arch, "NVRTC target architecture")->default_val("sm_90a");
  sub.add_option("--kernel-timeout", args->kernel_timeout_s, "Seconds a candidate's launches may run")
      ->default_val(10)
      ->check(CLI::Range(0.01, 3600.0));
  sub.add_flag("--no-cache", args->no_cache, "Do not use the on-disk CUBIN cache");
  return [args, seed]() {
    verify::VerifyOptions& options = args->options;
    if (seed->count() > 0) options.seed = args->seed;
    auto devices = ParseDeviceList(args->devices);
    if (!devices.ok()) {
      std::fprintf(stderr, "kforge verify: --devices: %s\n", devices.status().message().c_str());
      return kExitUsage;
    }
    options.devices = *devices;
    options.kernel_timeout = std::chrono::milliseconds(static_cast<int64_t>(args->kernel_timeout_s * 1000));
    options.use_cache = !args->no_cache;
    options.worker_program = SelfExecutable();
    verify::Verifier verifier(options);
    verify::SolutionReader reader(args->sources);
    verify::VerifySummary summary = verifier.Run(reader, [](const common::Verdict& verdict, const nlohmann::json&) {
      std::string line =
          verdict.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
      std::fwrite(line.data(), 1, line.size(), stdout);
      std::fflush(stdout);
    });
    std::string counts;
    for (const auto& [status, n] : summary.by_status) counts += ", " + std::to_string(n) + " " + status;
    std::fprintf(stderr, "verify: %d solution%s%s (seed %llu)\n", summary.total,
                 summary.total == 1 ? "" : "s", counts.c_str(),
                 static_cast<unsigned long long>(verifier.seed()));
    if (summary.no_gpu) return kExitUsage;
    return summary.ok == summary.total ? kExitOk : kExitFailed;
  };
}

}  // namespace kforge::cli
