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
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "fakes/task_root.h"
#include "kforge/common/files.h"
#include "kforge/common/json_fields.h"
#include "verify/judge_wire.h"

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
  void StartServer(VerifyService& service, double idle_s = 1, int max_clients = 32) {
    ServeOptions o;
    o.socket = socket_;
    o.idle_timeout_s = idle_s;
    o.max_clients = max_clients;
    server_done_ = false;
    server_ = std::thread([&service, o, this] {
      served_ = RunJudgeServer(service, o);
      server_done_ = true;
    });
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

  /// A raw connection to socket_ (-1 when refused).
  int Connect() const {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_.c_str(), sizeof(addr.sun_path) - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }
  /// The next line from `fd` as JSON (null at the end of the stream or after 10 s).
  static json ReadJson(LineReader& lines) {
    const auto by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    auto line = lines.Next([&] { return std::chrono::steady_clock::now() > by ? std::string("late") : std::string(); });
    if (!line.ok() || !*line) return json();
    return json::parse(**line, nullptr, false);
  }
  /// A connection that said a good hello and was let in. A connection the server has not yet counted as
  /// gone (the listening probe's, on a loaded machine) can hold the last place for a moment: a refusal for
  /// the cap is tried again for up to 10 s.
  int Greeted(LineReader*& lines) {
    const auto by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      int fd = Connect();
      EXPECT_GE(fd, 0);
      Status hello = WriteLine(fd, HelloToJson(JudgeFingerprint(Options())).dump());
      lines = new LineReader(fd);
      json answer = ReadJson(*lines);
      const bool full = answer.value("message", "").find("clients already") != std::string::npos;
      if (full && std::chrono::steady_clock::now() < by) {
        delete lines;
        ::close(fd);
        usleep(50000);
        continue;
      }
      EXPECT_TRUE(hello.ok()) << hello.message();
      EXPECT_EQ(answer.value("ok", false), true) << answer.dump();
      return fd;
    }
  }

  fakes::TaskRoot tasks_{{"demo"}};
  std::filesystem::path dir_, socket_;
  std::thread server_;
  std::atomic<bool> server_done_{false};
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
    auto connection = JudgeServerClient::Open(socket_, Options());
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
    auto second = JudgeServerClient::Open(socket_, Options());
    ASSERT_TRUE(second.ok());
    Judged other = (*second)->Submit(Input("f", "ok"), 99).get();
    EXPECT_EQ(other.verdict.seed, 99u);
    EXPECT_EQ(other.verdict.trials[0].seed, 99u);
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
  Status second = RunJudgeServer(other, o);
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
  Status refused = RunJudgeServer(service, o);
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
  auto connection = JudgeServerClient::Open(socket_, options);
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
  auto refused = JudgeServerClient::Open(socket_, client);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("trials: server 2, client 5"), std::string::npos)
      << refused.status().message();
  auto nobody = JudgeServerClient::Open(dir_ / "nobody.sock", Options());
  ASSERT_FALSE(nobody.ok());
  EXPECT_NE(nobody.status().message().find("kforge serve --socket"), std::string::npos);
}

TEST_F(JudgeServerTest, AServerThatGoesAwayGivesHarnessErrorsNotAHang) {
  VerifyService service(Options());
  StartServer(service, 0.3);
  auto connection = JudgeServerClient::Open(socket_, Options());
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

TEST_F(JudgeServerTest, AMalformedLineEndsNoMoreThanItsOwnRequestOrConnection) {
  VerifyService service(Options());
  StartServer(service, 1.5);
  auto bystander = JudgeServerClient::Open(socket_, Options());  // another client, a solution in flight
  ASSERT_TRUE(bystander.ok()) << bystander.status().message();
  std::future<Judged> in_flight = (*bystander)->Submit(Input("bystander", "sleep=500"), 7);

  for (const std::string& hello : std::vector<std::string>{
           R"({"protocol": null})", R"({"protocol": 5, "fingerprint": {}})",
           R"({"protocol": "kforge.judge/1", "fingerprint": "x"})", R"([1, 2])", "{not json",
           R"({"protocol": "kforge.judge/1", "fingerprint": {"trials": {"x": 1}}})"}) {
    int fd = Connect();
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(WriteLine(fd, hello).ok());
    LineReader lines(fd);
    json answer = ReadJson(lines);
    EXPECT_EQ(answer.value("ok", true), false) << hello << " -> " << answer.dump();
    EXPECT_NE(answer.value("message", "").find(hello.find("trials") != std::string::npos ? "options differ" : "expected a hello"),
              std::string::npos)
        << hello << " -> " << answer.dump();
    ::close(fd);
  }
  LineReader* lines = nullptr;
  int fd = Greeted(lines);
  const std::vector<std::pair<std::string, std::string>> requests = {
      {R"({"label": 5, "seed": 1, "error": "e"})", "request.label: expected a string, got integer"},
      {R"({"label": "a", "seed": 1, "error": "e", "internal": "yes"})", "request.internal: expected a boolean"},
      {R"({"label": "b", "seed": -1, "error": "e"})", "request.seed: expected an unsigned integer"},
      {R"({"label": "c", "seed": 1, "solution": "text"})", "request.solution: expected an object"},
      {R"({"label": "d", "seed": 1})", "request.solution: missing"},
      {R"({"label": "e", "seed": 1, "error": "e", "extra": 1})", "request.extra: unknown field"},
      {R"({"label": "f", "seed": 1, "error": null})", "request.error: expected a string"},
      {"null", "expected an object"},
      {"{not json", "request"}};
  for (const auto& [request, _] : requests) ASSERT_TRUE(WriteLine(fd, request).ok());
  ASSERT_TRUE(WriteLine(fd, common::JsonText(RequestToJson(Input("good", "ok"), 3))).ok());
  for (const auto& [request, message] : requests) {
    json reply = ReadJson(*lines);
    ASSERT_TRUE(reply.is_object()) << request << ": the connection ended";
    EXPECT_EQ(reply["verdict"]["status"], "harness_error") << request;
    EXPECT_NE(reply["verdict"].value("message", "").find(message), std::string::npos)
        << request << " -> " << reply["verdict"].value("message", "");
  }
  json good = ReadJson(*lines);
  EXPECT_EQ(good["verdict"]["status"], "ok") << good.dump() << ": the connection goes on after malformed lines";
  ::close(fd);
  delete lines;

  EXPECT_EQ(in_flight.get().verdict.status, VerdictStatus::kOk) << "another client's verify is untouched";
  auto later = JudgeServerClient::Open(socket_, Options());
  ASSERT_TRUE(later.ok()) << later.status().message();
  EXPECT_EQ((*later)->Submit(Input("later", "ok"), 9).get().verdict.status, VerdictStatus::kOk);
  bystander->reset();
  later->reset();
  server_.join();
  EXPECT_TRUE(served_.ok()) << served_.message();
}

TEST_F(JudgeServerTest, ClientsBeyondTheCapAreTurnedAwayAndAnOversizedLineIsRefused) {
  VerifyService service(Options());
  StartServer(service, 1.5, /*max_clients=*/3);
  std::vector<int> fds;
  std::vector<std::unique_ptr<LineReader>> readers;
  for (int i = 0; i < 3; ++i) {
    LineReader* lines = nullptr;
    fds.push_back(Greeted(lines));
    readers.emplace_back(lines);
  }
  auto refused = JudgeServerClient::Open(socket_, Options());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("the judge server has 3 clients already (kforge serve --max-clients)"),
            std::string::npos)
      << refused.status().message();

  // A line over the server's limit is read past, answered with a harness_error, and the next is judged.
  std::string huge(kMaxRequestLine + 1000, 'x');
  std::thread sender([&] {
    WriteLine(fds[0], huge);
    WriteLine(fds[0], common::JsonText(RequestToJson(Input("after", "ok"), 4)));
  });
  json first = ReadJson(*readers[0]);
  json second = ReadJson(*readers[0]);
  sender.join();
  EXPECT_EQ(first["verdict"]["status"], "harness_error") << first.dump();
  EXPECT_NE(first["verdict"].value("message", "").find("request line 2: a line longer than 16 MiB"), std::string::npos)
      << first.dump();
  EXPECT_EQ(second["verdict"]["status"], "ok") << second.dump();
  EXPECT_EQ(second["verdict"]["solution"], "after");

  ::close(fds[1]);  // one leaves: a new client gets in
  bool admitted = false;
  for (int i = 0; i < 50 && !admitted; ++i) {
    auto next = JudgeServerClient::Open(socket_, Options());
    admitted = next.ok();
    if (!admitted) usleep(50000);
  }
  EXPECT_TRUE(admitted);
  for (size_t i = 0; i < fds.size(); ++i)
    if (i != 1) ::close(fds[i]);
  server_.join();
}

TEST_F(JudgeServerTest, AConnectedIdleClientDoesNotKeepTheServerUp) {
  VerifyService service(Options());
  StartServer(service, 0.5);
  auto idle = JudgeServerClient::Open(socket_, Options());
  ASSERT_TRUE(idle.ok());
  EXPECT_EQ((*idle)->Submit(Input("a", "ok"), 1).get().verdict.status, VerdictStatus::kOk);
  for (int i = 0; i < 100 && !server_done_; ++i) usleep(50000);
  EXPECT_TRUE(server_done_) << "the server waited on a client that sends nothing";
  if (!server_done_) ::kill(::getpid(), SIGTERM);  // stop it anyway
  server_.join();
  EXPECT_FALSE(std::filesystem::exists(socket_));
  Judged after = (*idle)->Submit(Input("b", "ok"), 1).get();
  EXPECT_EQ(after.verdict.status, VerdictStatus::kHarnessError);
  EXPECT_NE(after.verdict.message.find("judge server: the server closed the connection"), std::string::npos)
      << after.verdict.message;
}

/// A listening socket that accepts, reads, and answers only as told: a server that is stopped or stuck.
class SilentServer {
 public:
  /// `answer`: written as is once the hello arrives ("" for nothing). The connection closes after `hold`.
  SilentServer(const std::filesystem::path& path, std::string answer, std::chrono::milliseconds hold) {
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(listener_, 4), 0);
    thread_ = std::thread([this, answer, hold] {
      int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      LineReader lines(fd);
      if (!answer.empty() && lines.Next().ok()) (void)::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
      const auto until = std::chrono::steady_clock::now() + hold;  // then close, so no test hangs for ever
      while (std::chrono::steady_clock::now() < until && !stop_) usleep(10000);
      ::close(fd);
    });
  }
  ~SilentServer() {
    stop_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
  }

 private:
  int listener_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST_F(JudgeServerTest, ASilentServerGivesAnErrorOrHarnessErrorsInTimeNotAHang) {
  using std::chrono::milliseconds;
  using std::chrono::steady_clock;
  EXPECT_EQ(ReplyTimeout(VerifyOptions{}).count(), 30000 + 120000 + 10000 * 13 + 30000);
  for (const std::string& answer : {std::string(), std::string(R"({"ok": tr)")}) {  // nothing; half a line
    SilentServer silent(socket_, answer, milliseconds(8000));
    const auto start = steady_clock::now();
    auto opened = JudgeServerClient::Open(socket_, Options(), JudgeServerTimeouts{milliseconds(600), milliseconds(600)});
    const double seconds = std::chrono::duration<double>(steady_clock::now() - start).count();
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.status().message().find("no answer to the hello"), std::string::npos) << opened.status().message();
    EXPECT_LT(seconds, 3) << "the hello timeout is 0.6 s";
    std::filesystem::remove(socket_);
  }
  // A hello, then nothing: every solution sent gets a harness_error once the reply timeout passes.
  SilentServer stuck(socket_, "{\"ok\": true, \"message\": \"\"}\n", milliseconds(8000));
  auto connection = JudgeServerClient::Open(socket_, Options(), JudgeServerTimeouts{milliseconds(2000), milliseconds(700)});
  ASSERT_TRUE(connection.ok()) << connection.status().message();
  const auto start = steady_clock::now();
  std::future<Judged> a = (*connection)->Submit(Input("a", "ok"), 1);
  std::future<Judged> b = (*connection)->Submit(Input("b", "ok"), 1);
  Judged judged_a = a.get(), judged_b = b.get();
  const double seconds = std::chrono::duration<double>(steady_clock::now() - start).count();
  EXPECT_LT(seconds, 4) << "the reply timeout is 0.7 s";
  for (const Judged* judged : {&judged_a, &judged_b}) {
    EXPECT_EQ(judged->verdict.status, VerdictStatus::kHarnessError);
    EXPECT_NE(judged->verdict.message.find("judge server: no verdict in 0.7 s"), std::string::npos) << judged->verdict.message;
  }
  EXPECT_EQ(judged_b.verdict.solution, "b");
  EXPECT_EQ((*connection)->Submit(Input("c", "ok"), 1).get().verdict.status, VerdictStatus::kHarnessError);
}

}  // namespace
}  // namespace kforge::verify

namespace kforge::verify {
namespace {

TEST(TokenMatchesTest, OnlyTheSameNonEmptyTokenMatches) {
  EXPECT_TRUE(TokenMatches("0123456789abcdef", "0123456789abcdef"));
  EXPECT_FALSE(TokenMatches("0123456789abcdeX", "0123456789abcdef"));
  EXPECT_FALSE(TokenMatches("0123456789abcde", "0123456789abcdef"));    // a prefix
  EXPECT_FALSE(TokenMatches("0123456789abcdef0", "0123456789abcdef"));  // longer
  EXPECT_FALSE(TokenMatches(std::string("0123456789abcdef\0", 17), "0123456789abcdef"));
  EXPECT_FALSE(TokenMatches("", ""));  // no token configured lets nobody in
}

}  // namespace
}  // namespace kforge::verify
