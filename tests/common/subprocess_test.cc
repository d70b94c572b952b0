#include "kforge/common/subprocess.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kforge::common {
namespace {

std::string ReadAll(int fd) {
  std::string text;
  char buf[256];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  return text;
}

SpawnOptions Piped() {
  SpawnOptions options;
  options.stdin_mode = options.stdout_mode = options.stderr_mode = SpawnOptions::Stream::kPipe;
  return options;
}

TEST(SubprocessTest, PipesCarryAllThreeStreams) {
  auto child = Subprocess::Spawn({"/bin/sh", "-c", "read x; echo out:$x; echo err:$x >&2; exit 3"}, Piped());
  ASSERT_TRUE(child.ok()) << child.status().message();
  ASSERT_EQ(write(child->stdin_fd(), "hi\n", 3), 3);
  child->CloseStdin();
  EXPECT_EQ(child->stdin_fd(), -1);
  EXPECT_EQ(ReadAll(child->stdout_fd()), "out:hi\n");
  EXPECT_EQ(ReadAll(child->stderr_fd()), "err:hi\n");
  int status = child->Wait();
  EXPECT_EQ(DescribeExit(status), "exit code 3");
  EXPECT_FALSE(child->running());
  EXPECT_EQ(child->Wait(), -1) << "nothing left to wait for";
  EXPECT_EQ(DescribeExit(-1), "lost");
}

TEST(SubprocessTest, KillReapsAndSaysHow) {
  auto child = Subprocess::Spawn({"/bin/sleep", "60"});
  ASSERT_TRUE(child.ok());
  EXPECT_TRUE(child->running());
  EXPECT_EQ(DescribeExit(child->Kill()), "killed by SIGKILL");
  auto segv = Subprocess::Spawn({"/bin/sh", "-c", "kill -SEGV $$"});
  ASSERT_TRUE(segv.ok());
  EXPECT_EQ(DescribeExit(segv->Wait()), "killed by SIGSEGV");
}

TEST(SubprocessTest, DestroyingARunningChildKillsIt) {
  pid_t pid;
  {
    auto child = Subprocess::Spawn({"/bin/sleep", "60"});
    ASSERT_TRUE(child.ok());
    pid = child->pid();
    Subprocess moved = std::move(*child);
    EXPECT_FALSE(child->running());
    EXPECT_EQ(moved.pid(), pid);
  }
  EXPECT_EQ(kill(pid, 0), -1) << "killed and reaped";
}

TEST(SubprocessTest, MissingProgramAndPathSearch) {
  auto missing = Subprocess::Spawn({"/nonexistent/tool"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot start /nonexistent/tool: No such file or directory");
  EXPECT_FALSE(Subprocess::Spawn({"sh", "-c", "exit 0"}).ok()) << "no PATH search unless asked";
  SpawnOptions search;
  search.search_path = true;
  auto found = Subprocess::Spawn({"sh", "-c", "exit 0"}, search);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(DescribeExit(found->Wait()), "exit code 0");
  EXPECT_FALSE(Subprocess::Spawn({}).ok());
}

TEST(SubprocessTest, Fd3AndNullStreams) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  SpawnOptions options;
  options.fd3 = fds[1];
  options.stdin_mode = SpawnOptions::Stream::kNull;
  options.stdout_mode = SpawnOptions::Stream::kNull;
  // Reads nothing from /dev/null, prints to /dev/null, answers on fd 3.
  auto child = Subprocess::Spawn({"/bin/sh", "-c", "cat; echo lost; echo fd3 >&3"}, options);
  ASSERT_TRUE(child.ok());
  close(fds[1]);
  EXPECT_EQ(ReadAll(fds[0]), "fd3\n");
  close(fds[0]);
  EXPECT_EQ(DescribeExit(child->Wait()), "exit code 0");
}

TEST(SubprocessTest, SignalsCanBeUnblockedAndReset) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  auto inherited = Subprocess::Spawn({"/bin/sh", "-c", "kill -TERM $$; exit 5"});
  SpawnOptions options;
  options.unblock_signals = true;
  auto unblocked = Subprocess::Spawn({"/bin/sh", "-c", "kill -TERM $$; exit 5"}, options);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(inherited.ok() && unblocked.ok());
  EXPECT_EQ(DescribeExit(inherited->Wait()), "exit code 5") << "SIGTERM stayed blocked";
  EXPECT_EQ(DescribeExit(unblocked->Wait()), "killed by SIGTERM");
}

// die_with_parent starts the child with vfork rather than posix_spawn: streams, fd 3, PATH search,
// failures, signal masks and process groups are the same.
TEST(SubprocessTest, AChildThatDiesWithItsParentIsStartedTheSameWay) {
  SpawnOptions piped = Piped();
  piped.die_with_parent = true;
  auto child = Subprocess::Spawn({"/bin/sh", "-c", "read x; echo out:$x; echo err:$x >&2; exit 3"}, piped);
  ASSERT_TRUE(child.ok()) << child.status().message();
  ASSERT_EQ(write(child->stdin_fd(), "hi\n", 3), 3);
  child->CloseStdin();
  EXPECT_EQ(ReadAll(child->stdout_fd()), "out:hi\n");
  EXPECT_EQ(ReadAll(child->stderr_fd()), "err:hi\n");
  EXPECT_EQ(DescribeExit(child->Wait()), "exit code 3");

  SpawnOptions dying;
  dying.die_with_parent = true;
  auto missing = Subprocess::Spawn({"/nonexistent/tool"}, dying);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot start /nonexistent/tool: No such file or directory");
  dying.search_path = true;
  auto found = Subprocess::Spawn({"sh", "-c", "exit 0"}, dying);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(DescribeExit(found->Wait()), "exit code 0");

  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  SpawnOptions fd3;
  fd3.die_with_parent = true;
  fd3.fd3 = fds[1];
  fd3.stdin_mode = fd3.stdout_mode = SpawnOptions::Stream::kNull;
  auto answering = Subprocess::Spawn({"/bin/sh", "-c", "cat; echo lost; echo fd3 >&3"}, fd3);
  ASSERT_TRUE(answering.ok());
  close(fds[1]);
  EXPECT_EQ(ReadAll(fds[0]), "fd3\n");
  close(fds[0]);
  EXPECT_EQ(DescribeExit(answering->Wait()), "exit code 0");

  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  SpawnOptions inherit;
  inherit.die_with_parent = true;
  auto inherited = Subprocess::Spawn({"/bin/sh", "-c", "kill -TERM $$; exit 5"}, inherit);
  inherit.unblock_signals = true;
  auto unblocked = Subprocess::Spawn({"/bin/sh", "-c", "kill -TERM $$; exit 5"}, inherit);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(inherited.ok() && unblocked.ok());
  EXPECT_EQ(DescribeExit(inherited->Wait()), "exit code 5") << "SIGTERM stayed blocked";
  EXPECT_EQ(DescribeExit(unblocked->Wait()), "killed by SIGTERM");

  SpawnOptions group = Piped();
  group.die_with_parent = true;
  group.own_process_group = true;
  auto leader = Subprocess::Spawn({"/bin/sh", "-c", "sleep 300"}, group);
  ASSERT_TRUE(leader.ok());
  EXPECT_EQ(getpgid(leader->pid()), leader->pid()) << "a group of its own";
  EXPECT_EQ(DescribeExit(leader->Kill()), "killed by SIGKILL");
}

bool Gone(pid_t pid) {
  for (int i = 0; i < 250; ++i) {
    if (kill(pid, 0) != 0) return true;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    if (std::FILE* f = std::fopen(path, "r")) {
      char text[512] = {};
      size_t n = std::fread(text, 1, sizeof text - 1, f);
      std::fclose(f);
      std::string stat(text, n);
      size_t paren = stat.rfind(')');
      if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') return true;
    }
    usleep(20000);
  }
  return false;
}

TEST(SubprocessTest, KillEndsTheWholeProcessGroup) {
  SpawnOptions options = Piped();
  options.own_process_group = true;
  auto child = Subprocess::Spawn({"/bin/sh", "-c", "sleep 300 & echo $!; wait"}, options);
  ASSERT_TRUE(child.ok()) << child.status().message();
  EXPECT_EQ(getpgid(child->pid()), child->pid()) << "a group of its own";
  char buf[32] = {};
  ssize_t n = read(child->stdout_fd(), buf, sizeof buf - 1);
  ASSERT_GT(n, 0);
  pid_t grandchild = static_cast<pid_t>(std::atol(buf));
  ASSERT_GT(grandchild, 0);
  child->Kill();
  EXPECT_TRUE(Gone(grandchild)) << "the grandchild outlived its group's kill";
}

TEST(SubprocessTest, WaitForGivesUpAtItsDeadline) {
  auto child = Subprocess::Spawn({"/bin/sh", "-c", "sleep 5"});
  ASSERT_TRUE(child.ok());
  EXPECT_FALSE(child->WaitFor(0.1).has_value());
  EXPECT_TRUE(child->running());
  child->Kill();
  auto quick = Subprocess::Spawn({"/bin/sh", "-c", "exit 4"});
  ASSERT_TRUE(quick.ok());
  std::optional<int> status = quick->WaitFor(5);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(DescribeExit(*status), "exit code 4");
}

TEST(SubprocessTest, AScrubbedEnvironmentHasNoCredentials) {
  setenv("KFORGE_TEST_API_KEY", "sk-1", 1);
  setenv("some_service_token", "t", 1);
  setenv("KFORGE_TEST_PLAIN", "kept", 1);
  std::vector<std::string> env = EnvironmentWithoutSecrets();
  auto has = [&](const std::string& prefix) {
    for (const std::string& e : env)
      if (e.rfind(prefix, 0) == 0) return true;
    return false;
  };
  EXPECT_FALSE(has("KFORGE_TEST_API_KEY="));
  EXPECT_FALSE(has("some_service_token="));
  EXPECT_TRUE(has("KFORGE_TEST_PLAIN=kept"));
  SpawnOptions options = Piped();
  options.environment = env;
  auto child = Subprocess::Spawn({"/bin/sh", "-c", "echo ${KFORGE_TEST_API_KEY:-none} $KFORGE_TEST_PLAIN"}, options);
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(ReadAll(child->stdout_fd()), "none kept\n");
  child->Wait();
  unsetenv("KFORGE_TEST_API_KEY");
  unsetenv("some_service_token");
  unsetenv("KFORGE_TEST_PLAIN");
}

TEST(SubprocessTest, EnvironmentWithSetsOverridesOnTopOfTheParents) {
  setenv("KFORGE_TEST_REPLACED", "old", 1);
  setenv("KFORGE_TEST_KEPT", "kept", 1);
  std::vector<std::string> env = EnvironmentWith({"KFORGE_TEST_REPLACED=new", "KFORGE_TEST_ADDED=added"});
  unsetenv("KFORGE_TEST_REPLACED");
  unsetenv("KFORGE_TEST_KEPT");
  auto count = [&](const std::string& entry) { return std::count(env.begin(), env.end(), entry); };
  EXPECT_EQ(count("KFORGE_TEST_REPLACED=new"), 1);
  EXPECT_EQ(count("KFORGE_TEST_REPLACED=old"), 0);
  EXPECT_EQ(count("KFORGE_TEST_KEPT=kept"), 1);
  EXPECT_EQ(count("KFORGE_TEST_ADDED=added"), 1);
  SpawnOptions options = Piped();
  options.environment = env;
  auto child = Subprocess::Spawn({"/bin/sh", "-c", "echo $KFORGE_TEST_REPLACED $KFORGE_TEST_KEPT"}, options);
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(ReadAll(child->stdout_fd()), "new kept\n");
  child->Wait();
}

TEST(SubprocessTest, OnPathFindsExecutables) {
  EXPECT_TRUE(OnPath("sh"));
  EXPECT_TRUE(OnPath("/bin/sh"));
  EXPECT_FALSE(OnPath("kforge-no-such-program"));
  EXPECT_FALSE(OnPath("/nonexistent/sh"));
  const std::string plain = "/tmp/kforge_onpath_" + std::to_string(getpid());
  std::fclose(std::fopen(plain.c_str(), "w"));
  EXPECT_FALSE(OnPath(plain)) << "a file that is not executable";
  std::remove(plain.c_str());
}

TEST(SubprocessTest, ReadOutputKeepsTheStreamsApartWithoutDeadlock) {
  // More than a pipe holds on each stream, stderr first: reading one stream to its end would hang.
  auto child = Subprocess::Spawn(
      {"/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' e >&2; head -c 200000 /dev/zero | tr '\\0' o; exit 6"},
      Piped());
  ASSERT_TRUE(child.ok()) << child.status().message();
  child->CloseStdin();
  std::string out, err;
  child->ReadOutput([&](int stream, const char* data, size_t size) {
    (stream == 1 ? out : err).append(data, size);
  });
  EXPECT_EQ(child->stdout_fd(), -1);
  EXPECT_EQ(child->stderr_fd(), -1);
  EXPECT_EQ(out, std::string(200000, 'o'));
  EXPECT_EQ(err, std::string(300000, 'e'));
  EXPECT_EQ(DescribeExit(child->Wait()), "exit code 6");
}

TEST(SubprocessTest, ForwardSignalsPassesThemToTheChildAndRestoresTheHandlers) {
  SpawnOptions options;
  options.own_process_group = true;
  options.unblock_signals = true;
  options.default_signals = {SIGTERM};
  auto child = Subprocess::Spawn({"/bin/sleep", "60"}, options);
  ASSERT_TRUE(child.ok()) << child.status().message();
  struct sigaction before = {};
  sigaction(SIGTERM, nullptr, &before);  // the process-group killer's, installed by the spawn
  {
    ForwardSignals forward(child->pid());
    ASSERT_EQ(raise(SIGTERM), 0);  // would end this test program without the forwarding
    std::optional<int> ended = child->WaitFor(10);
    ASSERT_TRUE(ended.has_value());
    EXPECT_EQ(DescribeExit(*ended), "killed by SIGTERM");
  }
  struct sigaction after = {};
  sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

}  // namespace
}  // namespace kforge::common
