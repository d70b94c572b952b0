// Child processes: captured probes, and the logged trainer run with its exit status passed on.
#include "finetune/process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace kforge::finetune {
namespace {

namespace fs = std::filesystem;

TEST(ProcessTest, CaptureKeepsStdoutStderrAndTheExitCode) {
  auto run = Capture({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->out, "out\n");
  EXPECT_EQ(run->err, "err\n");
  EXPECT_EQ(run->exit_code, 3);
  EXPECT_EQ(run->signal, 0);
  auto missing = Capture({"kforge-no-such-program"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot run kforge-no-such-program"), std::string::npos);
}

TEST(ProcessTest, RunLoggedWritesBothStreamsToTheLogAndPassesTheStatusOn) {
  const fs::path log = fs::temp_directory_path() / ("kforge_run_logged_" + std::to_string(getpid()) + ".log");
  std::ofstream(log) << "a previous run\n";
  auto run = RunLogged({"/bin/sh", "-c",
                        "echo \"unbuffered=$PYTHONUNBUFFERED $KFORGE_TEST_VAR\"; echo progress >&2; "
                        "read x || echo no-stdin; exit 7"},
                       log, {"KFORGE_TEST_VAR=set"});
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->exit_code, 7);
  EXPECT_NE(run->out.find("unbuffered=1 set"), std::string::npos) << run->out;
  std::ifstream in(log);
  std::string logged((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(logged.find("a previous run"), std::string::npos) << "the log is replaced";
  EXPECT_NE(logged.find("unbuffered=1 set\n"), std::string::npos) << logged;
  EXPECT_NE(logged.find("progress\n"), std::string::npos) << logged;
  EXPECT_NE(logged.find("no-stdin\n"), std::string::npos) << logged;

  auto killed = RunLogged({"/bin/sh", "-c", "kill -TERM $$"}, log);
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->signal, 15);
  EXPECT_EQ(killed->exit_code, 128 + 15);
  fs::remove(log);
}

TEST(ProcessTest, OnPath) {
  EXPECT_TRUE(OnPath("sh"));
  EXPECT_TRUE(OnPath("/bin/sh"));
  EXPECT_FALSE(OnPath("kforge-no-such-program"));
  EXPECT_FALSE(OnPath("/nonexistent/sh"));
}

}  // namespace
}  // namespace kforge::finetune
