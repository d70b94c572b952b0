// JSON lines over a socket, and the judge server's messages.
#include "verify/judge_wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "kforge/common/json_fields.h"

namespace kforge::verify {

using nlohmann::json;

namespace {

/// "16 MiB", or "32 bytes" for a limit under a MiB.
std::string LimitText(size_t bytes) {
  return bytes >= (size_t{1} << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

}  // namespace

StatusOr<std::optional<std::string>> LineReader::Next(const GiveUp& give_up, std::chrono::milliseconds slice) {
  while (true) {
    if (size_t end = buffer_.find('\n', scanned_); end != std::string::npos) {
      const bool too_long = std::exchange(skipping_, false) || end > max_line_;
      std::string line = too_long ? std::string() : buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      scanned_ = 0;
      if (too_long) return Status::ResourceExhausted("a line longer than " + LimitText(max_line_));
      return std::optional<std::string>(std::move(line));
    }
    scanned_ = buffer_.size();
    if (buffer_.size() > max_line_) {  // read on to its end without keeping it
      skipping_ = true;
      buffer_.clear();
      scanned_ = 0;
    }
    if (give_up) {
      pollfd pfd{fd_, POLLIN, 0};
      int ready = ::poll(&pfd, 1, static_cast<int>(slice.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        if (std::string why = give_up(); !why.empty()) return Status::Unavailable(why);
        continue;
      }
    }
    char chunk[1 << 16];
    ssize_t n = ::read(fd_, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Unavailable(std::string("reading the socket: ") + std::strerror(errno));
    if (n == 0) return std::optional<std::string>();
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

Status WriteLine(int fd, const std::string& line) {
  std::string data = line + "\n";
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Unavailable(std::string("writing the socket: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

json RequestToJson(const SolutionInput& input, uint64_t seed) {
  json request = {{"label", input.label}, {"seed", seed}};
  if (input.solution.ok()) {
    request["solution"] = common::SolutionToJson(*input.solution);
  } else {
    request["error"] = input.solution.status().message();
    request["internal"] = input.solution.status().code() == Status::Code::kInternal;
  }
  return request;
}

StatusOr<std::pair<SolutionInput, uint64_t>> RequestFromJson(const json& request) {
  common::JsonFields in(request, "request");
  KFORGE_RETURN_IF_ERROR(in.CheckObject({"label", "seed", "solution", "error", "internal"}));
  SolutionInput input;
  uint64_t seed = 0;
  KFORGE_RETURN_IF_ERROR(in.Read("label", input.label, /*required=*/true));
  KFORGE_RETURN_IF_ERROR(in.Read("seed", seed, /*required=*/true));
  if (in.Has("solution")) {
    json solution;
    KFORGE_RETURN_IF_ERROR(in.ReadObject("solution", solution));
    input.solution = common::SolutionFromJson(solution, input.label);
  } else if (in.Has("error")) {
    std::string message;
    bool internal = false;
    KFORGE_RETURN_IF_ERROR(in.Read("error", message));
    KFORGE_RETURN_IF_ERROR(in.Read("internal", internal));
    input.solution = internal ? Status::Internal(message) : Status::InvalidArgument(message);
  } else {
    return in.Error("solution", "missing (a request needs a solution or an error)");
  }
  return std::make_pair(std::move(input), seed);
}

json HelloToJson(const json& fingerprint) { return {{"protocol", kJudgeProtocol}, {"fingerprint", fingerprint}}; }

StatusOr<json> HelloFromJson(const json& hello) {
  common::JsonFields in(hello, "hello");
  KFORGE_RETURN_IF_ERROR(in.CheckIsObject());
  std::string protocol;
  KFORGE_RETURN_IF_ERROR(in.Read("protocol", protocol, /*required=*/true));
  if (protocol != kJudgeProtocol)
    return in.Error("protocol", "expected " + std::string(kJudgeProtocol) + ", got \"" + protocol.substr(0, 40) + "\"");
  json fingerprint = json::object();
  KFORGE_RETURN_IF_ERROR(in.ReadObject("fingerprint", fingerprint));
  return fingerprint;
}

json JudgedToJson(const Judged& judged) { return {{"verdict", judged.verdict.ToJson()}}; }

StatusOr<Judged> JudgedFromJson(const json& reply) {
  if (!reply.is_object() || !reply.contains("verdict")) return Status::InvalidArgument("a reply without a verdict");
  KFORGE_ASSIGN_OR_RETURN(common::Verdict verdict, common::Verdict::FromJson(reply["verdict"]));
  return Judged{std::move(verdict), {}};
}

Judged HarnessFailure(const std::string& label, uint64_t seed, const std::string& message) {
  Judged judged;
  judged.verdict.solution = label;
  judged.verdict.seed = seed;
  judged.verdict.status = common::VerdictStatus::kHarnessError;
  judged.verdict.message = message;
  return judged;
}

}  // namespace kforge::verify
