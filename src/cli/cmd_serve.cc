// `kforge serve --socket PATH`: a warm judge for `kforge verify --server PATH`.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/options.h"
#include "kforge/verify/judge_server.h"

namespace kforge::cli {

Runner AttachServe(CLI::App& sub) {
  struct Args {
    verify::VerifyOptions options;
    verify::ServeOptions serve;
    GpuRunFlags gpu;
  };
  auto args = std::make_shared<Args>();
  sub.add_option("--socket", args->serve.socket, "Unix socket to listen on (created owner-only)")->required();
  sub.add_option("--idle-timeout", args->serve.idle_timeout_s, "Stop after this many seconds with no solution in flight or received, clients connected or not (0: never)")
      ->default_val(900)
      ->check(FiniteRange(0, 30 * 86400), "[0, 2592000]");
  sub.add_option("--max-clients", args->serve.max_clients,
                 "Connections open at once; a client beyond them is refused with a line that says so")
      ->default_val(32)
      ->check(CLI::Range(1, 4096));
  AddJudgeOptions(sub, args->options);
  AddGpuRunFlags(sub, args->gpu, args->options.arch);
  args->gpu.seed_option->group("");  // refused below, so not in --help
  return [args]() {
    verify::VerifyOptions& options = args->options;
    Status usage = ApplyGpuRunFlags(args->gpu, options);
    if (usage.ok()) usage = CheckTasksRoot(options.tasks_root);
    if (usage.ok() && args->gpu.seed_option->count() > 0)
      usage = Status::InvalidArgument("--seed: each client brings its own (kforge verify --server --seed N)");
    if (!usage.ok()) {
      std::fprintf(stderr, "kforge serve: %s\n", usage.message().c_str());
      return kExitUsage;
    }
    args->serve.say = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    verify::VerifyService service(options);
    if (Status served = verify::ServeJudge(service, args->serve); !served.ok()) {
      std::fprintf(stderr, "kforge serve: %s\n", served.message().c_str());
      return kExitUsage;
    }
    return kExitOk;
  };
}

}  // namespace kforge::cli
