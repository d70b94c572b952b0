// The judge server's wire: JSON lines over a Unix stream socket, and the messages on it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"
#include "kforge/verify/service.h"

namespace kforge::verify {

inline constexpr const char* kJudgeProtocol = "kforge.judge/1";
/// Longest line a client accepts (a verdict; a solution is at most SolutionReader::kMaxBytes).
inline constexpr size_t kMaxJudgeLine = size_t{80} << 20;
/// Longest line the server accepts (a request): a longer one is answered with a harness_error.
inline constexpr size_t kMaxRequestLine = size_t{16} << 20;

/// Reads newline-terminated lines from a socket, keeping at most one line of `max_line` bytes.
class LineReader {
 public:
  explicit LineReader(int fd, size_t max_line = kMaxJudgeLine) : fd_(fd), max_line_(max_line) {}
  /// Called while no byte comes (every `slice` of waiting): a reason to stop waiting, or "" to wait on.
  using GiveUp = std::function<std::string()>;

  /// The next line without its newline; nullopt at the end of the stream (a last line without a
  /// newline is dropped: the peer stopped mid-message). A line longer than `max_line` is read past
  /// without being kept and is the error ResourceExhausted; the next call reads the line after it.
  /// With `give_up`, waiting ends with Unavailable(its reason). Other errors name what went wrong.
  StatusOr<std::optional<std::string>> Next(const GiveUp& give_up = nullptr,
                                            std::chrono::milliseconds slice = std::chrono::milliseconds(200));
  /// Changes the longest line kept, from the next line on (a protocol chosen by the hello).
  void set_max_line(size_t max_line) { max_line_ = max_line; }

 private:
  int fd_;
  size_t max_line_;
  std::string buffer_;
  size_t scanned_ = 0;     ///< bytes of buffer_ known to hold no newline
  bool skipping_ = false;  ///< inside a line longer than max_line_
};

/// Writes `line` and a newline, whole (retrying short writes; no SIGPIPE).
Status WriteLine(int fd, const std::string& line);

/// A request: the solution as read (or why it could not be read) and its seed.
nlohmann::json RequestToJson(const SolutionInput& input, uint64_t seed);
/// The inverse, read strictly (common::JsonFields: a label string, an unsigned seed, and a solution
/// object or an error string with an optional boolean `internal`); a malformed request is an error
/// that names the field.
StatusOr<std::pair<SolutionInput, uint64_t>> RequestFromJson(const nlohmann::json& json);

/// A client's hello: the protocol and the fingerprint of its options (JudgeFingerprint).
nlohmann::json HelloToJson(const nlohmann::json& fingerprint);
/// The fingerprint of a hello read strictly; an error names what is wrong (another protocol, a
/// field of the wrong type).
StatusOr<nlohmann::json> HelloFromJson(const nlohmann::json& hello);

nlohmann::json JudgedToJson(const Judged& judged);
StatusOr<Judged> JudgedFromJson(const nlohmann::json& json);

/// A harness_error verdict for `label`: what a client reports when the server could not judge.
Judged HarnessFailure(const std::string& label, uint64_t seed, const std::string& message);

}  // namespace kforge::verify
