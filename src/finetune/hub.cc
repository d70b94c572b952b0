// PushToHub: scripts/hub_push.py as a child process.
#include "kforge/finetune/hub.h"

#include <regex>
#include <sstream>

#include "finetune/process.h"

namespace kforge::finetune {
namespace {

/// The script's own line ("hub_push: ..."), else the last line of its stderr.
std::string LastLine(const std::string& err) {
  std::istringstream lines(err);
  std::string last, line;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace

Status CheckHubRepo(const std::string& repo) {
  static const std::regex kRepo(R"([A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})");
  if (!std::regex_match(repo, kRepo) || repo.find("..") != std::string::npos)
    return Status::InvalidArgument("--push-to-hub " + repo + ": expected a Hub repository id, org/name");
  return Status::Ok();
}

StatusOr<nlohmann::json> PushToHub(const HubPush& push) {
  KFORGE_ASSIGN_OR_RETURN(
      ProcessResult run, Capture({push.python, push.script.string(), "--repo", push.repo, "--type", push.type,
                                  "--folder", push.folder.string()}));
  if (run.exit_code != 0) return Status::Unavailable("--push-to-hub " + push.repo + ": " + LastLine(run.err));
  nlohmann::json reported = nlohmann::json::parse(LastLine(run.out), nullptr, false);
  if (!reported.is_object())
    return Status::Unavailable("--push-to-hub " + push.repo + ": no report from the upload");
  return reported;
}

}  // namespace kforge::finetune
