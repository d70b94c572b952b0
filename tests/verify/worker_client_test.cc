#include "verify/worker_client.h"

#include <gtest/gtest.h>

namespace kforge::verify {
namespace {

using namespace std::chrono_literals;

WorkerClient Shell(const std::string& script) { return WorkerClient({"/bin/sh", "-c", script}); }

TEST(WorkerClientTest, ExchangesLinesWithOneProcess) {
  WorkerClient client = Shell("while read line; do echo \"{\\\"echo\\\": $line}\"; done");
  for (int i = 0; i < 3; ++i) {
    auto reply = client.Call({{"n", i}}, 5s);
    ASSERT_EQ(reply.kind, WorkerClient::Reply::Kind::kOk) << reply.detail;
    EXPECT_EQ(reply.body["echo"]["n"], i);
  }
  EXPECT_EQ(client.spawn_count(), 1);
}

TEST(WorkerClientTest, MissedDeadlineKillsAndNextCallRespawns) {
  WorkerClient client =
      Shell("read line; case \"$line\" in *hang*) exec sleep 60;; esac; echo '{\"fine\": true}'");
  auto reply = client.Call({{"op", "hang"}}, 200ms);
  EXPECT_EQ(reply.kind, WorkerClient::Reply::Kind::kTimeout);
  EXPECT_NE(reply.detail.find("no reply within 200 ms"), std::string::npos);
  reply = client.Call({{"op", "ok"}}, 5s);
  ASSERT_EQ(reply.kind, WorkerClient::Reply::Kind::kOk) << reply.detail;
  EXPECT_EQ(reply.body["fine"], true);
  EXPECT_EQ(client.spawn_count(), 2);
}

TEST(WorkerClientTest, DeathIsReportedWithSignalOrExitCode) {
  WorkerClient crash = Shell("read line; kill -SEGV $$");
  auto reply = crash.Call({{"op", "x"}}, 5s);
  EXPECT_EQ(reply.kind, WorkerClient::Reply::Kind::kDied);
  EXPECT_EQ(reply.detail, "killed by SIGSEGV");

  WorkerClient quit = Shell("read line; exit 3");
  reply = quit.Call({{"op", "x"}}, 5s);
  EXPECT_EQ(reply.kind, WorkerClient::Reply::Kind::kDied);
  EXPECT_EQ(reply.detail, "exit code 3");
}

TEST(WorkerClientTest, MalformedReplyIsADeath) {
  WorkerClient client = Shell("read line; echo 'not json'; exec sleep 60");
  auto reply = client.Call({{"op", "x"}}, 5s);
  EXPECT_EQ(reply.kind, WorkerClient::Reply::Kind::kDied);
  EXPECT_EQ(reply.detail, "worker wrote a malformed reply");
}

TEST(WorkerClientTest, MissingProgramIsReported) {
  WorkerClient client({"/nonexistent/kforge", "worker"});
  auto reply = client.Call({{"op", "x"}}, 1s);
  EXPECT_EQ(reply.kind, WorkerClient::Reply::Kind::kDied);
  EXPECT_NE(reply.detail.find("cannot start /nonexistent/kforge"), std::string::npos);
}

}  // namespace
}  // namespace kforge::verify
