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

/// serve's flags.
struct ServeFlags {
  verify::VerifyOptions options;
  verify::ServeOptions serve;
  GpuRunFlags gpu;
  std::filesystem::path token_file;
  generate::CompletionJudgeOptions rl;
  int max_batch = 512;
  int max_completion_kib = 256;
  int max_in_flight = 4096;
};

/// Where it listens and for how long: --socket ... --max-clients.
void AddListenFlags(CLI::App& sub, ServeFlags& f) {
  sub.add_option("--socket", f.serve.socket, "Unix socket to listen on (created owner-only)");
  sub.add_option(
      "--listen", f.serve.listen,
      "Also listen on TCP HOST:PORT, or PORT on loopback (port 0 picks a free one); needs --token-file");
  sub.add_option(
      "--address-file", f.serve.address_file,
      "Write HOST:PORT of the TCP listener here once it listens (removed on exit; kforge slurm serve)");
  sub.add_option("--token-file", f.token_file,
                 "File holding the bearer token every TCP client must send (owner-only, 16+ characters)");
  sub.add_option("--idle-timeout", f.serve.idle_timeout_s, "Stop after this many seconds with no solution in flight or received, clients connected or not (0: never)")
      ->default_val(900)
      ->check(FiniteRange(0, 30 * 86400), "[0, 2592000]");
  sub.add_option("--max-clients", f.serve.max_clients,
                 "Connections open at once; a client beyond them is refused with a line that says so")
      ->default_val(32)
      ->check(CLI::Range(1, 4096));
}

/// The completion judge of kforge.rl/1 and how candidates are judged: --prompts ... the GPU flags.
void AddJudgingFlags(CLI::App& sub, ServeFlags& f) {
  sub.add_option("--prompts", f.rl.prompts_dir, "Prompt templates folder (the prompts and feedback of kforge.rl/1)")
      ->default_val(DefaultPromptsDir());
  sub.add_option("--max-batch", f.max_batch, "Completions in one kforge.rl/1 request at most")
      ->default_val(512)
      ->check(CLI::Range(1, 65536));
  sub.add_option("--max-completion-kib", f.max_completion_kib, "KiB of one completion at most")
      ->default_val(256)
      ->check(CLI::Range(1, 16384));
  sub.add_option("--max-in-flight", f.max_in_flight,
                 "Completions judged at once over every client; a batch beyond it is answered busy")
      ->default_val(4096)
      ->check(CLI::Range(1, 1 << 20));
  sub.add_option("--target-speedup", f.rl.target_speedup,
                 "A correct completion this much faster than the reference ends an episode (done)")
      ->default_val(1.0)
      ->check(FiniteRange(0, 1000), "[0, 1000]");
  AddJudgeOptions(sub, f.options);
  AddGpuRunFlags(sub, f.gpu, f.options.arch);
  f.gpu.seed_option->group("");  // refused below, so not in --help
}

/// Applies the flags to the options and reads the token; InvalidArgument naming the flag. The checks
/// across the server's options are verify's (CheckServeOptions).
Status ApplyFlags(ServeFlags& f) {
  KFORGE_RETURN_IF_ERROR(ApplyGpuRunFlags(f.gpu, f.options));
  KFORGE_RETURN_IF_ERROR(CheckTasksRoot(f.options.tasks_root));
  if (f.gpu.seed_option->count() > 0)
    return Status::InvalidArgument("--seed: each client brings its own (kforge verify --server --seed N)");
  if (!f.token_file.empty()) {
    KFORGE_ASSIGN_OR_RETURN(f.serve.token, ReadToken(f.token_file));
  }
  KFORGE_RETURN_IF_ERROR(verify::CheckServeOptions(f.serve));
  generate::CompletionJudgeOptions& rl = f.rl;
  rl.tasks_root = f.options.tasks_root;
  rl.bench.verify = f.options;
  rl.max_batch = static_cast<size_t>(f.max_batch);
  rl.max_completion_bytes = static_cast<size_t>(f.max_completion_kib) << 10;
  rl.max_in_flight = static_cast<size_t>(f.max_in_flight);
  return Status::Ok();
}

int RunServeCommand(ServeFlags& f) {
  if (Status usage = ApplyFlags(f); !usage.ok()) return Fail("serve", usage);
  auto completions = generate::CompletionJudge::Create(f.rl);
  if (!completions.ok()) return Fail("serve", completions.status());
  f.serve.extra = completions->get();
  f.serve.say = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  verify::VerifyService service(f.options);
  if (Status served = verify::RunJudgeServer(service, f.serve); !served.ok()) return Fail("serve", served);
  return kExitOk;
}

}  // namespace

Runner AttachServe(CLI::App& sub) {
  auto flags = std::make_shared<ServeFlags>();
  AddListenFlags(sub, *flags);
  AddJudgingFlags(sub, *flags);
  return [flags] { return RunServeCommand(*flags); };
}

}  // namespace kforge::cli
