// Throughput of the LLM client layer: N chat requests at K in flight against a local
// OpenAI-compatible server (a separate process) that answers each request after D ms, whole or
// (--stream) as 64 server-sent events. Reports achieved requests/s against the ideal K / D and
// this process's CPU time per request.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fakes/http_server.h"
#include "kforge/llm/client.h"

namespace {

using kforge::fakes::FakeHttpServer;
using kforge::fakes::FakeReply;

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

constexpr int kStreamEvents = 64;

// Runs the server in a child process, so its CPU time is not counted; returns its port.
int StartServer(int delay_ms, bool stream, int* control_fd, pid_t* child) {
  int port_pipe[2], control[2];
  if (pipe(port_pipe) != 0 || pipe(control) != 0) return -1;
  *child = fork();  // before any thread exists in this process
  if (*child == 0) {
    close(port_pipe[0]);
    close(control[1]);
    FakeHttpServer server([delay_ms, stream](const kforge::fakes::HttpExchange&) {
      if (stream) {  // the kernel in 64 pieces, then the finish and usage chunks
        std::vector<std::string> events;
        for (int i = 0; i < kStreamEvents; ++i)
          events.push_back(R"(data: {"id":"chatcmpl-b","model":"bench","choices":[{"index":0,"delta":)"
                           R"({"content":"__global__ void k() {} "},"finish_reason":null}]})"
                           "\n\n");
        events.push_back(
            R"(data: {"id":"chatcmpl-b","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})"
            "\n\n");
        events.push_back(
            R"(data: {"id":"chatcmpl-b","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30}})"
            "\n\ndata: [DONE]\n\n");
        FakeReply r = FakeReply::Sse(std::move(events));
        r.delay_ms = delay_ms;
        return r;
      }
      FakeReply r =
          FakeReply::Json(200, R"({"id":"chatcmpl-b","object":"chat.completion","model":"bench",)"
                               R"("choices":[{"index":0,"message":{"role":"assistant","content":)"
                               R"("extern \"C\" __global__ void k() {}"},"finish_reason":"stop"}],)"
                               R"("usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}})");
      r.delay_ms = delay_ms;
      return r;
    });
    int port = server.port();
    if (write(port_pipe[1], &port, sizeof port) != sizeof port) _exit(1);
    char c;
    while (read(control[0], &c, 1) > 0) {
    }  // the parent closing the pipe ends the server
    return 0;
  }
  close(port_pipe[1]);
  close(control[0]);
  *control_fd = control[1];
  int port = -1;
  if (read(port_pipe[0], &port, sizeof port) != sizeof port) return -1;
  close(port_pipe[0]);
  return port;
}

}  // namespace

int main(int argc, char** argv) {
  int requests = 1000, in_flight = 64, delay_ms = 200;
  bool stream = false;
  for (int i = 1; i < argc; i += 2) {
    if (!std::strcmp(argv[i], "--stream")) {
      stream = true;
      --i;
    } else if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n", argv[0], argv[i]);
      return 2;
    } else if (!std::strcmp(argv[i], "--requests"))
      requests = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--in-flight"))
      in_flight = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--delay-ms"))
      delay_ms = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--requests N] [--in-flight K] [--delay-ms D] [--stream]\n", argv[0]);
      return 2;
    }
  }
  int control_fd = -1;
  pid_t child = -1;
  const int port = StartServer(delay_ms, stream, &control_fd, &child);
  if (child == 0) return 0;
  if (port <= 0) {
    std::fprintf(stderr, "could not start the local server\n");
    return 1;
  }

  kforge::llm::ProviderOptions p;
  p.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  p.max_in_flight = in_flight;
  p.timeout_s = 30;
  p.idle_timeout_s = 30;
  p.stream = stream ? kforge::llm::StreamMode::kAlways : kforge::llm::StreamMode::kNever;
  auto provider = kforge::llm::MakeProvider({kforge::llm::ProviderKind::kOpenAi}, p);
  if (!provider.ok()) {
    std::fprintf(stderr, "%s\n", provider.status().ToString().c_str());
    return 1;
  }
  kforge::llm::ClientOptions o;
  o.max_in_flight = in_flight;
  auto client = kforge::llm::Client::Create(std::move(*provider), o);
  if (!client.ok()) return 1;

  std::vector<kforge::llm::ChatRequest> batch;
  for (int i = 0; i < requests; ++i) {
    kforge::llm::ChatRequest r;
    r.model = "bench";
    r.messages = {kforge::common::Message::System("You write CUDA kernels."),
                  kforge::common::Message::User("Task " + std::to_string(i) + ": write a ReLU kernel.")};
    r.max_tokens = 512;
    batch.push_back(std::move(r));
  }
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<kforge::llm::ChatResponse> out = (*client)->CompleteAll(std::move(batch));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = CpuSeconds() - cpu0;
  int failed = 0;
  for (const auto& r : out) failed += !r.ok() || r.message.content.empty();
  client->reset();
  close(control_fd);
  waitpid(child, nullptr, 0);

  const double achieved = requests / wall;
  const double ideal = in_flight * 1000.0 / delay_ms;
  std::printf("requests=%d in_flight=%d server_delay_ms=%d stream=%d failed=%d\n", requests, in_flight,
              delay_ms, stream ? 1 : 0, failed);
  std::printf("wall_s=%.3f achieved_rps=%.1f ideal_rps=%.1f efficiency=%.1f%%\n", wall, achieved, ideal,
              100 * achieved / ideal);
  std::printf("cpu_s=%.3f cpu_ms_per_request=%.3f\n", cpu, 1000 * cpu / requests);
  return failed ? 1 : 0;
}
