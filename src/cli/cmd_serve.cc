// `kforge serve --socket PATH` / `--listen HOST:PORT`: a warm judge for `kforge verify --server PATH`,
// and the completion judge of reinforcement learning (kforge.rl/1, docs/rl.md) on the same server.
#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/options.h"
#include "kforge/common/files.h"
#include "kforge/generate/completion_judge.h"
#include "kforge/verify/judge_server.h"

namespace kforge::cli {
namespace {

/// Shortest token a server takes: a guessable token is no token.
constexpr size_t kMinTokenBytes = 16;

/// The token of `path`: its text without the trailing newline. The file must be the owner's alone.
StatusOr<std::string> ReadToken(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Status::InvalidArgument("--token-file " + path.string() + ": no such file");
  if (!S_ISREG(st.st_mode))
    return Status::InvalidArgument("--token-file " + path.string() + ": not a regular file");
  if ((st.st_mode & 077) != 0)
    return Status::InvalidArgument("--token-file " + path.string() +
                                   ": readable by others than its owner (chmod 600 " + path.string() + ")");
  KFORGE_ASSIGN_OR_RETURN(std::string token, common::ReadFile(path));
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' '))
    token.pop_back();
  if (token.size() < kMinTokenBytes || token.find_first_of(" \t\r\n") != std::string::npos)
    return Status::InvalidArgument(
        "--token-file " + path.string() + ": the token must be one line of at least " +
        std::to_string(kMinTokenBytes) + " characters without spaces (openssl rand -hex 32)");
  return token;
}

}  // namespace

Runner AttachServe(CLI::App& sub) {
  struct Args {
    verify::VerifyOptions options;
    verify::ServeOptions serve;
    GpuRunFlags gpu;
    std::filesystem::path token_file;
    generate::CompletionJudgeOptions rl;
    int max_batch = 512;
    int max_completion_kib = 256;
    int max_in_flight = 4096;
  };
  auto args = std::make_shared<Args>();
  sub.add_option("--socket", args->serve.socket, "Unix socket to listen on (created owner-only)");
  sub.add_option(
      "--listen", args->serve.listen,
      "Also listen on TCP HOST:PORT, or PORT on loopback (port 0 picks a free one); needs --token-file");
  sub.add_option(
      "--address-file", args->serve.address_file,
      "Write HOST:PORT of the TCP listener here once it listens (removed on exit; kforge slurm serve)");
  sub.add_option("--token-file", args->token_file,
                 "File holding the bearer token every TCP client must send (owner-only, 16+ characters)");
  sub.add_option("--idle-timeout", args->serve.idle_timeout_s, "Stop after this many seconds with no solution in flight or received, clients connected or not (0: never)")
      ->default_val(900)
      ->check(FiniteRange(0, 30 * 86400), "[0, 2592000]");
  sub.add_option("--max-clients", args->serve.max_clients,
                 "Connections open at once; a client beyond them is refused with a line that says so")
      ->default_val(32)
      ->check(CLI::Range(1, 4096));
  sub.add_option("--prompts", args->rl.prompts_dir,
                 "Prompt templates folder (the prompts and feedback of kforge.rl/1)")
      ->default_val(DefaultPromptsDir());
  sub.add_option("--max-batch", args->max_batch, "Completions in one kforge.rl/1 request at most")
      ->default_val(512)
      ->check(CLI::Range(1, 65536));
  sub.add_option("--max-completion-kib", args->max_completion_kib, "KiB of one completion at most")
      ->default_val(256)
      ->check(CLI::Range(1, 16384));
  sub.add_option("--max-in-flight", args->max_in_flight,
                 "Completions judged at once over every client; a batch beyond it is answered busy")
      ->default_val(4096)
      ->check(CLI::Range(1, 1 << 20));
  sub.add_option("--target-speedup", args->rl.target_speedup,
                 "A correct completion this much faster than the reference ends an episode (done)")
      ->default_val(1.0)
      ->check(FiniteRange(0, 1000), "[0, 1000]");
  AddJudgeOptions(sub, args->options);
  AddGpuRunFlags(sub, args->gpu, args->options.arch);
  args->gpu.seed_option->group("");  // refused below, so not in --help
  return [args]() {
    verify::VerifyOptions& options = args->options;
    Status usage = ApplyGpuRunFlags(args->gpu, options);
    if (usage.ok()) usage = CheckTasksRoot(options.tasks_root);
    if (usage.ok() && args->gpu.seed_option->count() > 0)
      usage = Status::InvalidArgument("--seed: each client brings its own (kforge verify --server --seed N)");
    if (usage.ok() && args->serve.socket.empty() && args->serve.listen.empty())
      usage = Status::InvalidArgument("give --socket PATH, --listen HOST:PORT or both");
    if (usage.ok() && !args->serve.listen.empty() && args->token_file.empty())
      usage = Status::InvalidArgument("--listen needs --token-file: every TCP client must bring the token");
    if (usage.ok() && !args->token_file.empty()) {
      StatusOr<std::string> token = ReadToken(args->token_file);
      if (token.ok())
        args->serve.token = std::move(*token);
      else
        usage = token.status();
    }
    std::unique_ptr<generate::CompletionJudge> completions;
    if (usage.ok()) {
      generate::CompletionJudgeOptions& rl = args->rl;
      rl.tasks_root = options.tasks_root;
      rl.judge.verify = options;
      rl.max_batch = static_cast<size_t>(args->max_batch);
      rl.max_completion_bytes = static_cast<size_t>(args->max_completion_kib) << 10;
      rl.max_in_flight = static_cast<size_t>(args->max_in_flight);
      auto made = generate::CompletionJudge::Create(rl);
      if (made.ok())
        completions = std::move(*made);
      else
        usage = made.status();
    }
    if (!usage.ok()) {
      return Fail("serve", usage);
    }
    args->serve.extra = completions.get();
    args->serve.say = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    verify::VerifyService service(options);
    if (Status served = verify::ServeJudge(service, args->serve); !served.ok()) {
      return Fail("serve", served);
    }
    return kExitOk;
  };
}

}  // namespace kforge::cli
