// Scale of `kforge export` and `kforge report`: writes N synthetic trajectory records (default
// 1,000,000, over 1,000 tasks, about 70% correct, every solution distinct) to a temporary file, then runs
// `kforge export --format messages --split val=0.05` and `kforge report --json` on it as child processes
// and prints the wall time and peak resident memory (getrusage ru_maxrss) of each. Memory should stay
// flat in N: export keeps a small summary per kept candidate, report a speedup per correct record.
//   usage: export_scale [--records N] [--tasks T] [--dir DIR] [--keep]
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "export/record_builder.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct ChildRun {
  int exit_code = -1;
  double wall_s = 0;
  double max_rss_mb = 0;
};

/// Runs `argv` with stdout to `stdout_path`; its exit code, wall time and peak RSS.
ChildRun Spawn(const std::vector<std::string>& argv, const std::string& stdout_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ChildRun run;
  Clock::time_point start = Clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) return run;
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  run.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.max_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  posix_spawn_file_actions_destroy(&actions);
  return run;
}

/// Writes `records` records; returns the file's size in bytes.
uintmax_t Generate(const fs::path& path, int64_t records, int tasks) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0, 1);
  std::ofstream out(path, std::ios::binary);
  for (int64_t i = 0; i < records; ++i) {
    kforge::testing::RecordSpec spec;
    int task = static_cast<int>(i % tasks);
    spec.level = 1 + task % 3;
    spec.task = "kernelbench/level" + std::to_string(*spec.level) + "/" + std::to_string(task) + "_Task";
    spec.tags = {task % 2 ? "elementwise" : "reduction"};
    spec.run = "bench";
    spec.sample = static_cast<int>(i / tasks);
    spec.turns = 1 + static_cast<int>(u(rng) * 3);
    spec.correct = u(rng) < 0.7;
    spec.speedup = 0.3 + 3 * u(rng);
    spec.source =
        std::string(kforge::testing::kReluSource) + "__device__ int variant_" + std::to_string(i) + ";\n";
    out << kforge::dataset::ToJson(kforge::testing::MakeRecord(spec)).dump() << '\n';
  }
  out.close();
  return fs::file_size(path);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t records = 1000000;
  int tasks = 1000;
  fs::path dir = fs::temp_directory_path() / ("kforge-export-scale-" + std::to_string(getpid()));
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--records" && i + 1 < argc) {
      records = std::atoll(argv[++i]);
    } else if (a == "--tasks" && i + 1 < argc) {
      tasks = std::atoi(argv[++i]);
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--keep") {
      keep = true;
    } else {
      std::fprintf(stderr, "usage: export_scale [--records N] [--tasks T] [--dir DIR] [--keep]\n");
      return 2;
    }
  }
  fs::create_directories(dir);
  fs::path input = dir / "trajectories.jsonl";
  Clock::time_point start = Clock::now();
  uintmax_t bytes = Generate(input, records, tasks);
  double generate_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("records: %lld over %d tasks, %.2f GB of JSON lines (written in %.1f s)\n",
              static_cast<long long>(records), tasks, static_cast<double>(bytes) / 1e9, generate_s);

  fs::remove_all(dir / "out");
  ChildRun exported = Spawn({KFORGE_BINARY, "export", input.string(), "--out", (dir / "out").string(),
                             "--format", "messages", "--split", "val=0.05"},
                            (dir / "export.out").string());
  std::ifstream stats_file(dir / "out" / "stats.json");
  nlohmann::json stats = nlohmann::json::parse(stats_file, nullptr, false);
  long long written = stats.is_object() ? stats.value("exported", 0LL) : -1;
  std::printf("export: exit %d, %.1f s wall (%.0f records/s), peak RSS %.1f MB, %lld records written\n",
              exported.exit_code, exported.wall_s, static_cast<double>(records) / exported.wall_s,
              exported.max_rss_mb, written);

  ChildRun reported =
      Spawn({KFORGE_BINARY, "report", input.string(), "--json"}, (dir / "report.json").string());
  std::printf("report: exit %d, %.1f s wall (%.0f records/s), peak RSS %.1f MB\n", reported.exit_code,
              reported.wall_s, static_cast<double>(records) / reported.wall_s, reported.max_rss_mb);
  if (!keep) fs::remove_all(dir);
  return exported.exit_code == 0 && reported.exit_code == 0 ? 0 : 1;
}
