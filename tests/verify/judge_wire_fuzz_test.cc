// Fuzzes the judge server's wire (what `kforge serve` reads from any process of its user): every
// hello and request line is read or refused with one line naming the field, never an exception; a
// request read back from what it was written as is the same request; and the line reader cuts a
// stream into exactly its lines, refusing those over its limit without keeping them. Seeds: the
// messages a client sends, and malformed ones of each kind.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/fuzz.h"
#include "kforge/common/json_fields.h"
#include "kforge/verify/judge_server.h"
#include "verify/judge_wire.h"

namespace kforge::verify {
namespace {

using nlohmann::json;

std::vector<std::string> WireSeeds() {
  const std::string relu = R"({"task": "demo/relu", "source": "extern \"C\" __global__ void k(float* x) {}",)"
                           R"( "launches": [{"kernel": "k", "grid": [1], "block": [32], "args": ["x"]}]})";
  return {HelloToJson(JudgeFingerprint(VerifyOptions{})).dump(),
          R"({"protocol": null})",
          R"({"protocol": "kforge.judge/1", "fingerprint": "x"})",
          R"({"label": "a.json", "seed": 7, "solution": )" + relu + "}",
          R"({"label": 5, "seed": 1, "error": "e"})",
          R"({"label": "a", "seed": 1, "error": "bad", "internal": true})",
          R"({"label": "a", "seed": 1, "error": "bad", "internal": "yes"})",
          R"({"label": "a", "seed": 18446744073709551615, "solution": {"source": 3}})",
          "[]",
          "null"};
}

fakes::FuzzOutcome MessageProperty(const std::string& line) {
  StatusOr<json> parsed = common::ParseJson(line, "request");
  if (!parsed.ok()) return {"", "not json"};
  StatusOr<json> hello = HelloFromJson(*parsed);
  if (!hello.ok() && hello.status().message().find('\n') != std::string::npos) return {"a hello error of several lines", ""};
  if (hello.ok() && !hello->is_object()) return {"a fingerprint that is not an object", ""};
  auto request = RequestFromJson(*parsed);
  if (!request.ok()) {
    const std::string& m = request.status().message();
    if (m.find('\n') != std::string::npos) return {"a request error of several lines", ""};
    if (m.rfind("request", 0) != 0) return {"a request error that names no field: " + m.substr(0, 80), ""};
    return {"", fakes::MessageLabel(m)};
  }
  const SolutionInput& input = request->first;
  auto again = RequestFromJson(common::ParseJson(common::JsonText(RequestToJson(input, request->second)), "again").value());
  if (!again.ok()) return {"a request written back is refused: " + again.status().message().substr(0, 80), ""};
  if (again->first.label != input.label || again->second != request->second) return {"label or seed changed", ""};
  if (again->first.solution.ok() != input.solution.ok()) return {"the solution's validity changed", ""};
  if (!input.solution.ok() && (again->first.solution.status().message() != input.solution.status().message() ||
                               again->first.solution.status().code() != input.solution.status().code()))
    return {"the error changed", ""};
  return {"", input.solution.ok() ? "solution" : "error " + fakes::MessageLabel(input.solution.status().message())};
}

TEST(JudgeWireFuzzTest, EveryHelloAndRequestIsReadOrRefusedInOneLine) {
  fakes::FuzzTarget target;
  target.name = "judge_wire_messages";
  target.seeds = WireSeeds();
  target.dictionary = {"null", "true", "false", "\"yes\"", "5", "-1", "1e999", "18446744073709551616", "{}", "[]",
                       "\"label\"", "\"seed\"", "\"solution\"", "\"error\"", "\"internal\"", "\"protocol\"",
                       "\"fingerprint\"", "\"kforge.judge/1\"", "\\u0000", "\xff", ",", ":"};
  target.property = MessageProperty;
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(), fakes::FuzzSeed());
  std::printf("fuzz judge_wire_messages: %s\n", report.Summary().c_str());
  RecordProperty("executions", std::to_string(report.executions));
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
}

/// The bytes through a socket into a LineReader of 32-byte lines: each newline-ended piece comes out
/// as a line, or as the error of a line over the limit; the unended tail is dropped.
fakes::FuzzOutcome StreamProperty(const std::string& bytes) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return {"", "no socketpair"};
  const bool sent = ::send(fds[0], bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size());
  ::shutdown(fds[0], SHUT_WR);
  LineReader reader(fds[1], 32);
  std::vector<std::string> expected;
  for (size_t start = 0, end; (end = bytes.find('\n', start)) != std::string::npos; start = end + 1)
    expected.push_back(bytes.substr(start, end - start));
  std::string failure;
  size_t i = 0, long_lines = 0;
  while (failure.empty()) {
    auto line = reader.Next();
    if (line.ok() && !*line) break;
    if (i >= expected.size()) {
      failure = "more lines than newlines";
    } else if (!line.ok()) {
      if (line.status().code() != Status::Code::kResourceExhausted) failure = "an error: " + line.status().message();
      else if (expected[i].size() <= 32) failure = "a line within the limit refused";
      ++long_lines;
    } else if (**line != expected[i]) {
      failure = expected[i].size() > 32 ? "a line over the limit kept" : "a line changed";
    }
    ++i;
  }
  ::close(fds[0]);
  ::close(fds[1]);
  if (!sent) return {"", "short send"};
  if (failure.empty() && i != expected.size()) failure = "a line lost";
  return {failure, std::to_string(std::min<size_t>(long_lines, 3)) + " long"};
}

TEST(JudgeWireFuzzTest, TheLineReaderCutsAStreamIntoItsLinesWithinTheLimit) {
  fakes::FuzzTarget target;
  target.name = "judge_wire_lines";
  target.seeds = {"a\nb\n", std::string(40, 'x') + "\nshort\n", std::string(100, 'y') + "\n\n\ntail",
                  "{\"label\": \"a\"}\n" + std::string(33, 'z') + "\n" + std::string(32, 'w') + "\n"};
  target.dictionary = {"\n", "\n\n", std::string(31, 'a'), std::string(32, 'b'), std::string(33, 'c'), "\r\n",
                       std::string(1, '\0')};
  target.property = StreamProperty;
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(), fakes::FuzzSeed());
  std::printf("fuzz judge_wire_lines: %s\n", report.Summary().c_str());
  RecordProperty("executions", std::to_string(report.executions));
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
}

}  // namespace
}  // namespace kforge::verify
