// The warm judge against the fake worker (tests/fakes/fake_worker_main.cc): a server on a real Unix
// socket gives the verdicts a VerifyService of the client's own gives (same seed), in order; a
// crashed candidate's worker is replaced; the socket is owner-only; options that differ, a live
// server at the path and a file that is not a socket are refused; an idle server stops; a lost
// server gives harness_error verdicts.
#include "kforge/verify/judge_server.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "fakes/task_root.h"
#include "kforge/common/files.h"

namespace kforge::verify {
namespace {

using common::VerdictStatus;
using nlohmann::json;

class JudgeServerTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(testing::TempDir()) /
           ("kforge-judge-" + std::to_string(getpid()) + "-" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    socket_ = dir_ / "judge.sock";
  }
  void TearDown() override {
    if (server_.joinable()) server_.join();
    std::filesystem::remove_all(dir_);
  }

  VerifyOptions Options() const {
    VerifyOptions options;
    options.tasks_root = tasks_.path();
    options.worker_program = KFORGE_FAKE_WORKER;
    options.trials = 2;
    options.use_cache = false;
    return options;
  }

  /// Starts a server on socket_ that stops after `idle_s` without a client; waits until it accepts.
  void StartServer(VerifyService& service, double idle_s = 1) {
    ServeOptions o;
    o.socket = socket_;
    o.idle_timeout_s = idle_s;
    server_ = std::thread([&service, o, this] { served_ = ServeJudge(service, o); });
    // Listening once a connection is accepted (a stale socket file may be there before).
    bool listening = false;
    for (int i = 0; i < 300 && !listening; ++i) {
      int probe = ::socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::strncpy(addr.sun_path, socket_.c_str(), sizeof(addr.sun_path) - 1);
      listening = ::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
      ::close(probe);
      if (!listening) usleep(10000);
    }
    ASSERT_TRUE(listening);
  }

  static SolutionInput Input(const std::string& label, const std::string& marker) {
    auto text = common::ReadFile(std::filesystem::path(KFORGE_SOURCE_DIR) / "examples/demo/relu.json");
    EXPECT_TRUE(text.ok());
    auto solution = common::ParseSolutionText(*text, "relu.json");
    EXPECT_TRUE(solution.ok()) << solution.status().message();
    solution->source += "// fake:" + marker + "\n";
    return SolutionInput{label, *solution};
  }

  fakes::TaskRoot tasks_{{"demo"}};
  std::filesystem::path dir_, socket_;
  std::thread server_;
  Status served_;
};

/// A verdict without what differs from run to run (times) and from worker to worker (its start).
json Comparable(const common::Verdict& verdict) {
  json j = verdict.ToJson();
  j.erase("timing");
  j["compile"].erase("ms");
  return j;
}

TEST_F(JudgeServerTest, VerdictsAreThoseOfAColdServiceWithTheSameSeed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a", "ok"}, {"b", "mismatch"}, {"c", "crash"}, {"d", "ok"}, {"e", "sleep=300"}};
  std::vector<json> cold;
  {
    VerifyOptions options = Options();
    options.seed = 41;
    VerifyService service(options);
    for (const auto& [label, marker] : cases) cold.push_back(Comparable(service.Submit(Input(label, marker)).get().verdict));
  }
  VerifyService warm_service(Options());
  StartServer(warm_service);
  {
    auto connection = JudgeConnection::Open(socket_, Options());
    ASSERT_TRUE(connection.ok()) << connection.status().message();
    std::vector<std::future<Judged>> futures;
    for (const auto& [label, marker] : cases) futures.push_back((*connection)->Submit(Input(label, marker), 41));
    for (size_t i = 0; i < cases.size(); ++i) {
      Judged judged = futures[i].get();
      EXPECT_EQ(Comparable(judged.verdict), cold[i]) << cases[i].first;
    }
    EXPECT_EQ(cold[2]["status"], "crash");
    EXPECT_EQ(cold[3]["status"], "ok") << "the crashed candidate's worker was replaced";
    // A second client with another seed: its seed reaches the worker.
    auto second = JudgeConnection::Open(socket_, Options());
    ASSERT_TRUE(second.ok());
    Judged other = (*second)->Submit(Input("f", "ok"), 99).get();
    EXPECT_EQ(other.verdict.seed, 99u);
    EXPECT_EQ(other.verdict.trials[0]["seed"], 99);
  }
  server_.join();
  EXPECT_TRUE(served_.ok()) << served_.message();
  EXPECT_FALSE(std::filesystem::exists(socket_)) << "the server removes its socket when it stops";
}

TEST_F(JudgeServerTest, TheSocketIsOwnerOnlyAndASecondServerIsRefused) {
  VerifyService service(Options());
  StartServer(service, 0.5);
  struct stat st{};
  ASSERT_EQ(::stat(socket_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600);
  VerifyService other(Options());
  ServeOptions o;
  o.socket = socket_;
  Status second = ServeJudge(other, o);
  EXPECT_FALSE(second.ok());
  EXPECT_NE(second.message().find("already listens"), std::string::npos) << second.message();
}

TEST_F(JudgeServerTest, AFileThatIsNotASocketIsNeverReplacedAndAStaleSocketIs) {
  std::ofstream(socket_) << "precious";
  VerifyOptions options = Options();
  options.compile_only = true;
  VerifyService service(options);
  ServeOptions o;
  o.socket = socket_;
  Status refused = ServeJudge(service, o);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("not a socket"), std::string::npos) << refused.message();
  EXPECT_EQ(*common::ReadFile(socket_), "precious");
  std::filesystem::remove(socket_);
  // A socket whose server is gone (bound, then closed without removing it): taken over.
  int stale = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(stale, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(stale);
  ASSERT_TRUE(std::filesystem::is_socket(socket_));
  StartServer(service, 0.2);
  auto connection = JudgeConnection::Open(socket_, options);
  ASSERT_TRUE(connection.ok()) << connection.status().message();
  EXPECT_EQ((*connection)->Submit(Input("a", "ok"), 3).get().verdict.status, VerdictStatus::kOk);
  connection->reset();
  server_.join();
  EXPECT_TRUE(served_.ok()) << served_.message();
}

TEST_F(JudgeServerTest, OptionsThatChangeVerdictsMustMatchTheServers) {
  VerifyService service(Options());
  StartServer(service, 0.5);
  VerifyOptions client = Options();
  client.trials = 5;
  auto refused = JudgeConnection::Open(socket_, client);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("trials: server 2, client 5"), std::string::npos)
      << refused.status().message();
  auto nobody = JudgeConnection::Open(dir_ / "nobody.sock", Options());
  ASSERT_FALSE(nobody.ok());
  EXPECT_NE(nobody.status().message().find("kforge serve --socket"), std::string::npos);
}

TEST_F(JudgeServerTest, AServerThatGoesAwayGivesHarnessErrorsNotAHang) {
  VerifyService service(Options());
  StartServer(service, 0.3);
  auto connection = JudgeConnection::Open(socket_, Options());
  ASSERT_TRUE(connection.ok());
  // The worker takes 3 s; the test's server is told to stop (as by SIGTERM) meanwhile.
  std::future<Judged> slow = (*connection)->Submit(Input("slow", "sleep=3000"), 5);
  usleep(200000);
  ::kill(::getpid(), SIGTERM);
  Judged judged = slow.get();
  EXPECT_EQ(judged.verdict.status, VerdictStatus::kHarnessError);
  EXPECT_NE(judged.verdict.message.find("judge server"), std::string::npos) << judged.verdict.message;
  EXPECT_EQ(judged.verdict.solution, "slow");
}

}  // namespace
}  // namespace kforge::verify
