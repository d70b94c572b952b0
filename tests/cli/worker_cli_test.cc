// `kforge worker` without a usable device or worker library: every request gets a no_gpu reply
// saying why, one line each, and the process exits when stdin closes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

struct WorkerRun {
  int exit_code = -1;
  std::vector<nlohmann::json> replies;
};

WorkerRun Worker(const std::string& env, const std::string& args) {
  std::string command = "printf '{\"op\":\"hello\"}\\n{\"op\":\"check\"}\\n' | " + env + " " +
                        std::string(KFORGE_BINARY) + " worker " + args;
  WorkerRun run;
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) run.replies.push_back(nlohmann::json::parse(line, nullptr, false));
  return run;
}

bool HasGpu() { return std::system("nvidia-smi -L >/dev/null 2>&1") == 0; }

TEST(WorkerCliTest, NoDeviceAnswersNoGpuToEveryRequest) {
  // Device 200 exists nowhere.
  for (const char* args : {"--device 200", "--device 200 --orderly-exit"}) {
    WorkerRun run = Worker("", args);
    EXPECT_EQ(run.exit_code, 0) << args;
    ASSERT_EQ(run.replies.size(), 2u) << args;
    for (const nlohmann::json& reply : run.replies) {
      EXPECT_EQ(reply.value("status", ""), "no_gpu");
      EXPECT_NE(reply.value("message", "").find("no CUDA device 200"), std::string::npos) << reply.dump();
    }
  }
}

TEST(WorkerCliTest, MissingWorkerLibraryIsNamed) {
  if (!HasGpu()) GTEST_SKIP() << "no CUDA device: the library is only loaded once a device is found";
  WorkerRun run = Worker("KFORGE_WORKER_LIBRARY=/nonexistent/libkforge_worker.so", "--device 0");
  ASSERT_EQ(run.replies.size(), 2u);
  EXPECT_EQ(run.replies[0].value("status", ""), "no_gpu");
  EXPECT_NE(run.replies[0].value("message", "").find("cannot load the worker library"), std::string::npos)
      << run.replies[0].dump();
}

}  // namespace
