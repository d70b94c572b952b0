// JSON lines over a socket, and the judge server's messages.
#include "verify/judge_wire.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kforge::verify {

using nlohmann::json;

StatusOr<std::optional<std::string>> LineReader::Next() {
  while (true) {
    if (size_t end = buffer_.find('\n'); end != std::string::npos) {
      std::string line = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      return std::optional<std::string>(std::move(line));
    }
    if (buffer_.size() > kMaxJudgeLine) return Status::InvalidArgument("a line longer than 80 MiB");
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
  if (!request.is_object() || !request.contains("label") || !request["label"].is_string() ||
      !request.contains("seed") || !request["seed"].is_number_unsigned())
    return Status::InvalidArgument("a request needs a string label and an unsigned seed");
  SolutionInput input;
  input.label = request["label"].get<std::string>();
  if (request.contains("solution")) {
    input.solution = common::SolutionFromJson(request["solution"], input.label);
  } else if (request.contains("error") && request["error"].is_string()) {
    const std::string message = request["error"].get<std::string>();
    input.solution = request.value("internal", false) ? Status::Internal(message) : Status::InvalidArgument(message);
  } else {
    return Status::InvalidArgument("a request needs a solution or an error");
  }
  return std::make_pair(std::move(input), request["seed"].get<uint64_t>());
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
