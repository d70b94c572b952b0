// The judge server's wire: JSON lines over a Unix stream socket, and the messages on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"
#include "kforge/verify/service.h"

namespace kforge::verify {

inline constexpr const char* kJudgeProtocol = "kforge.judge/1";
/// Longest line either side accepts (a solution is at most SolutionReader::kMaxBytes, plus framing).
inline constexpr size_t kMaxJudgeLine = size_t{80} << 20;

/// Reads newline-terminated lines from a socket.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  /// The next line without its newline; nullopt at the end of the stream (a last line without a
  /// newline is dropped: the peer stopped mid-message). An error names what went wrong.
  StatusOr<std::optional<std::string>> Next();

 private:
  int fd_;
  std::string buffer_;
};

/// Writes `line` and a newline, whole (retrying short writes; no SIGPIPE).
Status WriteLine(int fd, const std::string& line);

/// A request: the solution as read (or why it could not be read) and its seed.
nlohmann::json RequestToJson(const SolutionInput& input, uint64_t seed);
/// The inverse; a malformed request is an error.
StatusOr<std::pair<SolutionInput, uint64_t>> RequestFromJson(const nlohmann::json& json);

nlohmann::json JudgedToJson(const Judged& judged);
StatusOr<Judged> JudgedFromJson(const nlohmann::json& json);

/// A harness_error verdict for `label`: what a client reports when the server could not judge.
Judged HarnessFailure(const std::string& label, uint64_t seed, const std::string& message);

}  // namespace kforge::verify
