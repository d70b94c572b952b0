// `kforge serve` as the judge of reinforcement learning (kforge.rl/1, docs/rl.md), compile-only on a
// machine without a GPU: raw completions (text, tool calls, junk) judged with generate's parser and
// feedback; the TCP listener refusing clients without the token; the caps on batch and completion
// size; a client that leaves mid-batch.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "fakes/command.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kRlToken = "s3cret-token-0123456789abcdef";

/// A relu that compiles, in the text protocol: a cuda block and a json plan block.
std::string RlReluText(const std::string& note = "") {
  return "Here it is." + note +
         "\n```cuda\nextern \"C\" __global__ void relu(const float* __restrict__ x, float* __restrict__ y, "
         "long long n) {\n"
         "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = fmaxf(x[i], "
         "0.0f);\n}\n```\n"
         "```json\n{\"launches\": [{\"kernel\": \"relu\", \"grid\": [\"cdiv(numel(x), 256)\"], \"block\": "
         "[256], "
         "\"args\": [\"x\", \"out0\", \"i64:numel(x)\"]}]}\n```\n";
}

/// A text completion whose kernel does not compile.
std::string RlBrokenText() {
  return "```cuda\nextern \"C\" __global__ void relu(const float* x, float* y, long long n) { this is not "
         "C++ }\n```\n"
         "```json\n{\"launches\": [{\"kernel\": \"relu\", \"grid\": [1], \"block\": [256], "
         "\"args\": [\"x\", \"out0\", \"i64:numel(x)\"]}]}\n```\n";
}

/// The relu solution as the arguments of a `run` tool call, with `source` replaced when given.
json RlReluCall(const std::string& id, const std::string& source = "") {
  json args = {
      {"source", source.empty() ? "extern \"C\" __global__ void relu(const float* x, float* y, long long n) "
                                  "{ long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
                                  "if (i < n) y[i] = fmaxf(x[i], 0.0f); }"
                                : source},
      {"launches",
       {{{"kernel", "relu"},
         {"grid", {"cdiv(numel(x), 256)"}},
         {"block", {256}},
         {"args", {"x", "out0", "i64:numel(x)"}}}}}};
  return {{"id", id}, {"type", "function"}, {"function", {{"name", "run"}, {"arguments", args.dump()}}}};
}

/// One line-oriented connection to a server: a Unix socket path, or a TCP port on 127.0.0.1.
class RlConnection {
 public:
  explicit RlConnection(const std::string& socket_path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_path.c_str(), sizeof(addr.sun_path) - 1);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  explicit RlConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RlConnection() { ::close(fd_); }
  bool connected() const { return connected_; }

  void SendRaw(const std::string& bytes) {
    for (size_t done = 0; done < bytes.size();) {
      ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return;
      done += static_cast<size_t>(n);
    }
  }
  /// The next line, parsed; a discarded value at the end of the stream.
  json ReadLine() {
    while (true) {
      if (size_t end = buffer_.find('\n'); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return json::parse(line, nullptr, false);
      }
      char chunk[65536];
      ssize_t n = ::read(fd_, chunk, sizeof(chunk));
      if (n <= 0) return json::value_t::discarded;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }
  json Ask(const json& request) {
    SendRaw(request.dump() + "\n");
    return ReadLine();
  }
  json Hello(const std::string& token = "") {
    json hello = {{"protocol", "kforge.rl/1"}};
    if (!token.empty()) hello["token"] = token;
    return Ask(hello);
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

/// A `kforge serve --compile-only` of its own folder, stopped (SIGTERM) when the test ends.
class ServeRlCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge-serve-rl-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    socket_ = (dir_ / "judge.sock").string();
    token_file_ = dir_ / "token";
    std::ofstream(token_file_) << kRlToken << "\n";
    fs::permissions(token_file_, fs::perms::owner_read | fs::perms::owner_write);
  }
  void TearDown() override {
    if (pid_ > 0) ::kill(pid_, SIGTERM);
    for (int i = 0; i < 500 && pid_ > 0 && !fs::exists(dir_ / "serve.rc"); ++i) usleep(10000);
    fs::remove_all(dir_);
  }

  /// Starts the server with `flags`; waits for its listening line (and reads the TCP port from it).
  void Start(const std::string& flags) {
    const std::string err = (dir_ / "serve.err").string();
    fakes::CommandResult started = fakes::RunCommand(
        "(" + std::string(KFORGE_BINARY) + " serve --compile-only --idle-timeout 120 --tasks " +
        KFORGE_SOURCE_DIR + "/tasks " + flags + " 2>" + err + "; echo $? >" + (dir_ / "serve.rc").string() +
        ") >/dev/null & echo $!");
    for (int i = 0; i < 1000; ++i) {
      std::string said = Said();
      if (said.find("serve: listening on") != std::string::npos) {
        std::smatch m;
        if (std::regex_search(said, m, std::regex("tcp 127\\.0\\.0\\.1:([0-9]+)"))) port_ = std::stoi(m[1]);
        std::smatch pid;
        if (std::regex_search(said, pid, std::regex("\\(pid ([0-9]+)\\)"))) pid_ = std::stoi(pid[1]);
        return;
      }
      if (fs::exists(dir_ / "serve.rc")) break;
      usleep(10000);
    }
    FAIL() << "the server did not start: " << Said();
  }
  std::string Said() const {
    std::ifstream in(dir_ / "serve.err");
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

  fs::path dir_;
  std::string socket_;
  fs::path token_file_;
  int port_ = 0;
  int pid_ = 0;
};

TEST_F(ServeRlCliTest, JudgesRawCompletionsWithGeneratesParserAndFeedback) {
  Start("--socket " + socket_);
  RlConnection c(socket_);
  ASSERT_TRUE(c.connected());
  json hello = c.Hello();
  ASSERT_EQ(hello["ok"], true) << hello;
  EXPECT_EQ(hello["server"]["compile_only"], true);

  json tasks = c.Ask({{"op", "tasks"}});
  bool has_relu = false;
  for (const json& t : tasks["tasks"]) has_relu |= t["id"] == "demo/relu";
  EXPECT_TRUE(has_relu) << tasks;
  json prompt = c.Ask({{"op", "prompt"}, {"task", "demo/relu"}});
  ASSERT_EQ(prompt["messages"].size(), 2u) << prompt;
  EXPECT_EQ(prompt["messages"][0]["role"], "system");
  EXPECT_NE(prompt["messages"][1]["content"].get<std::string>().find("demo/relu"), std::string::npos);
  EXPECT_NE(prompt["messages"][0]["content"].get<std::string>().find("No GPU in this run"),
            std::string::npos);

  json many_calls = json::array();
  for (int i = 0; i < 9; ++i) many_calls.push_back(RlReluCall("c" + std::to_string(i), "not cuda at all"));
  json batch = json::array({
      {{"id", "good"}, {"task", "demo/relu"}, {"completion", RlReluText()}},
      {{"id", "broken"}, {"task", "demo/relu"}, {"completion", RlBrokenText()}},
      {{"id", "prose"}, {"task", "demo/relu"}, {"completion", "I would write a kernel, but not today."}},
      {{"id", "conversation"},
       {"task", "demo/relu"},
       {"completion", json::array({{{"role", "assistant"}, {"content", RlReluText(" (again)")}}})}},
      {{"id", "tools"},
       {"task", "demo/relu"},
       {"completion", {{"role", "assistant"}, {"content", ""}, {"tool_calls", {RlReluCall("call_1")}}}}},
      {{"id", "many"},
       {"task", "demo/relu"},
       {"completion", {{"role", "assistant"}, {"tool_calls", many_calls}}}},
      {{"id", "unknown"}, {"task", "../../etc/passwd"}, {"completion", RlReluText()}},
      {{"id", "junk"}, {"task", "demo/relu"}, {"completion", std::string("\x01\x02\x7f\x00zz\x1b[2J", 9)}},
  });
  json reply = c.Ask({{"op", "judge"}, {"batch", batch}});
  ASSERT_TRUE(reply.contains("results")) << reply;
  const json& r = reply["results"];
  ASSERT_EQ(r.size(), batch.size());
  EXPECT_EQ(r[0]["id"], "good");
  EXPECT_EQ(r[0]["status"], "ok") << r[0];
  EXPECT_EQ(r[0]["compiled"], true);
  EXPECT_TRUE(r[0]["correct"].is_null());  // compile-only: correctness is not known
  EXPECT_DOUBLE_EQ(r[0]["reward"].get<double>(), 0.1);
  EXPECT_EQ(r[0]["done"], true);
  EXPECT_NE(r[0]["feedback"].get<std::string>().find("Compiled; the plan checks out."), std::string::npos)
      << r[0];
  EXPECT_NE(r[0]["feedback"].get<std::string>().find("Done."), std::string::npos);

  EXPECT_EQ(r[1]["status"], "compile_error") << r[1];
  EXPECT_DOUBLE_EQ(r[1]["reward"].get<double>(), 0.0);
  EXPECT_EQ(r[1]["done"], false);
  EXPECT_NE(r[1]["feedback"].get<std::string>().find("Compile error"), std::string::npos) << r[1];
  EXPECT_NE(r[1]["feedback"].get<std::string>().find("Fix the problem"), std::string::npos) << r[1];

  EXPECT_EQ(r[2]["status"], "no_solution") << r[2];
  EXPECT_DOUBLE_EQ(r[2]["reward"].get<double>(), 0.0);
  EXPECT_NE(r[2]["feedback"].get<std::string>().find("No solution could be read from your reply"),
            std::string::npos);

  EXPECT_EQ(r[3]["status"], "ok") << r[3];
  EXPECT_EQ(r[4]["status"], "ok") << r[4];
  ASSERT_EQ(r[4]["tool_results"].size(), 1u) << r[4];
  EXPECT_EQ(r[4]["tool_results"][0]["tool_call_id"], "call_1");

  EXPECT_EQ(r[5]["candidates"], 9);
  EXPECT_EQ(r[5]["judged"], 8);
  ASSERT_EQ(r[5]["tool_results"].size(), 9u);
  EXPECT_EQ(r[5]["tool_results"][8]["content"], "Not run: at most 8 tool calls of one reply are run.");
  EXPECT_DOUBLE_EQ(r[5]["reward"].get<double>(), 0.0);

  EXPECT_EQ(r[6]["status"], "refused");
  EXPECT_TRUE(r[6]["reward"].is_null());
  EXPECT_NE(r[6]["error"].get<std::string>().find("no task"), std::string::npos) << r[6];
  EXPECT_EQ(r[7]["status"], "no_solution") << r[7];

  // An unknown op and a line that is not JSON are answered, and the connection goes on.
  EXPECT_NE(c.Ask({{"op", "train"}})["error"].get<std::string>().find("expected judge, prompt, tasks or stats"),
            std::string::npos);
  c.SendRaw(std::string("\xff\xfe{not json\n", 12));
  EXPECT_TRUE(c.ReadLine().contains("error"));
  EXPECT_EQ(c.Ask({{"op", "tasks"}})["tasks"].size(), tasks["tasks"].size());
}

TEST_F(ServeRlCliTest, TheTcpListenerRefusesAClientWithoutTheRightToken) {
  Start("--listen 0 --token-file " + token_file_.string());  // a bare port is on loopback
  ASSERT_GT(port_, 0) << Said();
  {
    RlConnection none(port_);
    ASSERT_TRUE(none.connected());
    json refused = none.Hello();
    EXPECT_EQ(refused["ok"], false);
    EXPECT_NE(refused["message"].get<std::string>().find("needs the server's token"), std::string::npos)
        << refused;
    EXPECT_TRUE(none.Ask({{"op", "tasks"}}).is_discarded());  // the server closed the connection
  }
  {
    RlConnection wrong(port_);
    json refused = wrong.Hello(std::string(kRlToken).substr(0, 20) + "XXXXXXXXX");
    EXPECT_EQ(refused["ok"], false);
    EXPECT_EQ(refused["message"], "refused: wrong token");
  }
  {  // the verify protocol is held to the token too
    RlConnection verify(port_);
    json refused = verify.Ask({{"protocol", "kforge.judge/1"}, {"fingerprint", json::object()}});
    EXPECT_EQ(refused["ok"], false);
  }
  RlConnection right(port_);
  json hello = right.Hello(kRlToken);
  ASSERT_EQ(hello["ok"], true) << hello;
  json reply =
      right.Ask({{"op", "judge"}, {"batch", {{{"task", "demo/relu"}, {"completion", RlReluText()}}}}});
  ASSERT_TRUE(reply.contains("results")) << reply;
  EXPECT_EQ(reply["results"][0]["status"], "ok");
  EXPECT_EQ(Said().find(kRlToken), std::string::npos) << "the token reached the log";
}

TEST_F(ServeRlCliTest, BadTokenFilesAndAListenerWithoutATokenAreUsageErrors) {
  const std::string serve =
      std::string(KFORGE_BINARY) + " serve --compile-only --tasks " + KFORGE_SOURCE_DIR + "/tasks ";
  fakes::CommandResult no_token = fakes::RunCommand(serve + "--listen 127.0.0.1:0 2>&1");
  EXPECT_EQ(no_token.exit_code, 2);
  EXPECT_NE(no_token.out.find("--listen needs --token-file"), std::string::npos) << no_token.out;
  fs::permissions(token_file_, fs::perms::group_read, fs::perm_options::add);
  fakes::CommandResult shared =
      fakes::RunCommand(serve + "--listen 127.0.0.1:0 --token-file " + token_file_.string() + " 2>&1");
  EXPECT_EQ(shared.exit_code, 2);
  EXPECT_NE(shared.out.find("readable by others than its owner"), std::string::npos) << shared.out;
  EXPECT_EQ(shared.out.find(kRlToken), std::string::npos);
  std::ofstream(dir_ / "short") << "abc\n";
  fs::permissions(dir_ / "short", fs::perms::owner_read | fs::perms::owner_write);
  fakes::CommandResult short_token =
      fakes::RunCommand(serve + "--listen 127.0.0.1:0 --token-file " + (dir_ / "short").string() + " 2>&1");
  EXPECT_EQ(short_token.exit_code, 2);
  EXPECT_NE(short_token.out.find("at least 16 characters"), std::string::npos) << short_token.out;
  fakes::CommandResult nothing = fakes::RunCommand(serve + "2>&1");
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_NE(nothing.out.find("give --socket PATH, --listen HOST:PORT or both"), std::string::npos)
      << nothing.out;
}

TEST_F(ServeRlCliTest, BatchesAndCompletionsOverTheCapsAreRefusedWithoutEndingTheConnection) {
  Start("--socket " + socket_ + " --max-batch 2 --max-completion-kib 1");
  RlConnection c(socket_);
  ASSERT_EQ(c.Hello()["ok"], true);
  json entry = {{"task", "demo/relu"}, {"completion", RlReluText()}};
  json three = c.Ask({{"op", "judge"}, {"batch", {entry, entry, entry}}});
  ASSERT_TRUE(three.contains("error")) << three;
  EXPECT_NE(three["error"].get<std::string>().find("3 completions, over the server's limit of 2"),
            std::string::npos);
  json huge = {{"task", "demo/relu"}, {"completion", RlReluText() + std::string(2000, 'x')}};
  json reply = c.Ask({{"op", "judge"}, {"batch", {entry, huge}}});
  ASSERT_TRUE(reply.contains("results")) << reply;
  EXPECT_EQ(reply["results"][0]["status"], "ok");
  EXPECT_EQ(reply["results"][1]["status"], "refused");
  EXPECT_NE(reply["results"][1]["error"].get<std::string>().find("over the server's limit of 1024"),
            std::string::npos)
      << reply["results"][1];
  // A line beyond what the server reads at all (64 MiB here) is read past and refused.
  c.SendRaw("{\"op\": \"judge\", \"batch\": [\"" + std::string(65 << 20, 'y') + "\"]}\n");
  json too_long = c.ReadLine();
  ASSERT_TRUE(too_long.contains("error")) << too_long.dump().substr(0, 300);
  EXPECT_NE(too_long["error"].get<std::string>().find("a line longer than"), std::string::npos) << too_long;
  EXPECT_EQ(c.Ask({{"op", "judge"}, {"batch", {entry}}})["results"][0]["status"], "ok");
}

TEST_F(ServeRlCliTest, AnAddressFileNamesTheListenerWhileTheServerRuns) {
  const fs::path address = dir_ / "servers" / "node-0.addr";
  fs::create_directories(address.parent_path());
  Start("--listen 127.0.0.1:0 --token-file " + token_file_.string() + " --address-file " + address.string());
  ASSERT_GT(port_, 0);
  std::ifstream in(address);
  std::string written((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(written, "127.0.0.1:" + std::to_string(port_) + "\n");
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 1000 && !fs::exists(dir_ / "serve.rc"); ++i) usleep(10000);
  EXPECT_FALSE(fs::exists(address)) << "the address of a stopped server was left behind";
}

TEST_F(ServeRlCliTest, SlurmServeRendersAServerPerNodeThatWritesItsAddress) {
  const std::string slurm = std::string(KFORGE_BINARY) + " slurm serve --out " + (dir_ / "job").string() +
                            " --token-file " + token_file_.string();
  fakes::CommandResult run = fakes::RunCommand(
      slurm + " --nodes 3 --gpus-per-node 2 --time 04:00:00 --dry-run -- --tasks /data/tasks 2>&1");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("#SBATCH --nodes=3\n#SBATCH --ntasks-per-node=1\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("#SBATCH --gpus-per-node=2"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("#SBATCH --time=04:00:00"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("srun --ntasks-per-node=1 bash " + (dir_ / "job/slurm/serve-node.sh").string()),
            std::string::npos)
      << run.out;
  std::ifstream in(dir_ / "job/slurm/serve-node.sh");
  const std::string node((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(node.find(" serve --listen 0.0.0.0:8765 --token-file " + token_file_.string() +
                      " --idle-timeout 0 --address-file " + (dir_ / "job/servers").string() +
                      "/\"$(hostname)-${SLURM_PROCID:-0}.addr\" --tasks /data/tasks\n"),
            std::string::npos)
      << node;
  EXPECT_EQ(node.find(kRlToken), std::string::npos);  // the file's name, never the token

  fakes::CommandResult own = fakes::RunCommand(slurm + " --nodes 2 --dry-run -- --listen 1.2.3.4:1 2>&1");
  EXPECT_EQ(own.exit_code, 2);
  EXPECT_NE(own.out.find("--listen after --: kforge slurm serve sets it on every node"), std::string::npos)
      << own.out;
  fakes::CommandResult no_token =
      fakes::RunCommand(std::string(KFORGE_BINARY) + " slurm serve --out " + (dir_ / "job").string() +
                        " --token-file " + (dir_ / "none").string() + " --nodes 2 --dry-run 2>&1");
  EXPECT_EQ(no_token.exit_code, 2);
  EXPECT_NE(no_token.out.find("--token-file " + (dir_ / "none").string() + ": no such file"),
            std::string::npos)
      << no_token.out;
}

}  // namespace
}  // namespace kforge
