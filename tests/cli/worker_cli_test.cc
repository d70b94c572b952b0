// `kforge worker` without a usable device or worker library: every request gets a no_gpu reply
// saying why, one line each, and the process exits when stdin closes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/command.h"

namespace {

struct WorkerRun {
  int exit_code = -1;
  std::vector<nlohmann::json> replies;
};

WorkerRun Worker(const std::string& env, const std::string& args) {
  std::string command = "printf '{\"op\":\"hello\"}\\n{\"op\":\"check\"}\\n' | " + env + " " +
                        std::string(KFORGE_BINARY) + " worker " + args;
  kforge::fakes::CommandResult result = kforge::fakes::RunCommand(command);
  return {result.exit_code, kforge::fakes::JsonLines(result.out)};
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
