// `kforge skill distill` (skill/distill.h).
#include "kforge/skill/distill.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "kforge/common/files.h"
#include "kforge/common/hash.h"
#include "kforge/dataset/jsonl.h"
#include "kforge/dataset/trajectory.h"
#include "kforge/skill/eval.h"
#include "kforge/skill/skill.h"

namespace kforge::skill {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kMaxPitfalls = 40;
constexpr size_t kMaxSourceInPrompt = 8000;

struct Verified {
  std::string task;
  std::string family;
  std::string source;
  json plan;  ///< the solution without its source
  double speedup = 0, speedup_low = 0;
  std::string record_hash;
};

std::string OneLine(std::string text, size_t max) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.size() > max) text = text.substr(0, max) + "...";
  return text;
}

/// Replaces every {{name}}; an unknown or unclosed placeholder is an error naming the template.
StatusOr<std::string> Fill(const std::string& text, const std::map<std::string, std::string>& values,
                           const std::string& where) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    size_t close = text.find("}}", open);
    if (close == std::string::npos) return Status::InvalidArgument(where + ": \"{{\" without \"}}\"");
    auto it = values.find(text.substr(open + 2, close - open - 2));
    if (it == values.end())
      return Status::InvalidArgument(where + ": unknown placeholder " + text.substr(open, close + 2 - open));
    out += text.substr(pos, open - pos) + it->second;
    pos = close + 2;
  }
  return out + text.substr(pos);
}

std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

/// The verified episodes and the repaired failures of one run folder.
Status ReadRun(const fs::path& dir, std::vector<Verified>& verified, std::vector<std::string>& pitfalls,
               std::set<std::string>& arches) {
  const fs::path file = dir / "trajectories.jsonl";
  StatusOr<std::unique_ptr<dataset::JsonlReader>> reader = dataset::JsonlReader::Open(file);
  if (!reader.ok()) return Status::InvalidArgument(file.string() + ": not readable (a generate run folder?)");
  while (std::optional<dataset::JsonlReader::Line> line = (*reader)->NextText()) {
    if (!line->value.ok()) return line->value.status();  // a line past the cap, a failed read
    json j = json::parse(line->text, nullptr, false);
    if (j.is_discarded()) continue;  // a torn last line
    KFORGE_ASSIGN_OR_RETURN(
        dataset::Trajectory t,
        dataset::TrajectoryFromJson(j, file.string() + ":" + std::to_string(line->number)));
    if (!t.correct() || !t.best || t.truncated) continue;
    const dataset::Attempt& best = t.attempts[*t.best];
    const double low =
        best.bench && std::isfinite(best.bench->speedup.ratio) && std::isfinite(best.bench->speedup.lo)
            ? best.bench->speedup.lo
            : 0;
    nlohmann::json plan = dataset::SolutionToRecord(best);
    if (!(low > 1) || !plan.is_object()) continue;
    Verified v;
    v.task = t.task.id;
    v.family = IdFamily(t.task.id);
    v.source = plan.value("source", std::string());
    v.plan = std::move(plan);
    v.plan.erase("source");
    v.plan.erase("task");
    v.speedup = t.speedup().value_or(0);
    v.speedup_low = low;
    v.record_hash = dataset::TextHash(line->text);
    verified.push_back(std::move(v));
    if (t.device && t.device->Has("name"))
      arches.insert(t.device->name + " (cc " + (t.device->Has("cc") ? t.device->cc : "?") + ")");
    for (const dataset::Attempt& a : t.attempts) {
      if (a.correct || a.turn >= best.turn) continue;
      std::string why = !a.parse_error.empty() ? a.parse_error
                        : a.verdict            ? a.verdict->message
                                               : std::string();
      pitfalls.push_back("- " + std::string(a.StatusName()) + " (" + t.task.id + ", turn " + std::to_string(a.turn) +
                         ", fixed in turn " + std::to_string(best.turn) + "): " + OneLine(why, 400));
    }
  }
  return Status::Ok();
}

}  // namespace

namespace {

/// The distillation prompt (prompts/skill_distill.md): the skill's name, its families with their
/// fastest verified kernels, and the pitfalls the runs recorded.
StatusOr<std::string> DistillPrompt(const DistillOptions& options, const std::string& name,
                                    const std::map<std::string, std::vector<const Verified*>>& by_family,
                                    const std::vector<std::string>& pitfalls) {
  std::string families, reference_files, examples;
  for (const auto& [family, list] : by_family) {
    families += (families.empty() ? "" : ", ") + family;
    reference_files += (reference_files.empty() ? "" : ", ") + std::string("references/") + family + ".md";
    for (const Verified* v : list) {
      char speed[64];
      std::snprintf(speed, sizeof(speed), "%.2fx (lower bound %.2fx)", v->speedup, v->speedup_low);
      examples += "### " + v->task + " (" + family + "): " + speed + "\n```cuda\n" +
                  v->source.substr(0, kMaxSourceInPrompt) + "\n```\n```json\n" + v->plan.dump() + "\n```\n\n";
    }
  }
  KFORGE_ASSIGN_OR_RETURN(std::string prompt_template,
                          common::ReadFile(options.prompts_dir / "skill_distill.md"));
  std::string pitfall_lines;
  for (const std::string& p : pitfalls) pitfall_lines += p + "\n";
  return Fill(prompt_template,
              {{"name", name},
               {"families", families},
               {"reference_files", reference_files},
               {"examples", examples},
               {"pitfalls", pitfalls.empty() ? std::string("(none recorded)") : pitfall_lines},
               {"max_body_tokens", std::to_string(kMaxBodyTokens - 500)}},
              (options.prompts_dir / "skill_distill.md").string());
}

/// What the teacher wrote of the skill: its one-line description and SKILL.md's body.
struct SkillText {
  std::string description;
  std::string body;
};

/// Sends the distillation prompt to the teacher and reads the DESCRIPTION: and BODY: of its reply.
StatusOr<SkillText> AskTeacher(const DistillOptions& options, const std::string& name, const std::string& prompt) {
  auto provider = llm::MakeProvider(options.teacher, options.provider);
  if (!provider.ok()) return provider.status().WithContext("--teacher");
  KFORGE_ASSIGN_OR_RETURN(auto client, llm::Client::Create(std::move(*provider), options.client));
  llm::ChatRequest request;
  request.model = options.model;
  request.max_tokens = options.max_tokens;
  request.tag = "skill distill " + name;
  request.messages = {common::Message::User(prompt)};
  llm::ChatResponse response = client->Complete(request).get();
  if (!response.ok())
    return Status::Unavailable(client->Redact(
        "teacher: " + std::string(llm::ErrorKindName(response.error.kind)) + ": " + response.error.message));
  const std::string& reply = response.message.content;
  const size_t d = reply.find("DESCRIPTION:");
  const size_t b = reply.find("BODY:", d == std::string::npos ? 0 : d);
  if (d == std::string::npos || b == std::string::npos)
    return Status::InvalidArgument(
        "the teacher's reply has no \"DESCRIPTION:\" line followed by \"BODY:\" (" + OneLine(reply, 120) +
        ")");
  SkillText text;
  std::string& description = text.description;
  description = reply.substr(d + 12, reply.find('\n', d) - d - 12);
  description =
      OneLine(description.substr(std::min(description.find_first_not_of(' '), description.size())), 1024);
  std::string& body = text.body;
  body = reply.substr(b + 5);
  body = body.substr(std::min(body.find_first_not_of("\n "), body.size()));
  if (body.empty() || body.back() != '\n') body += '\n';
  return text;
}

/// The skill's folder but SKILL.md: references by family, the sources, the verify wrapper and the
/// evals. `sources` gets the records' hashes, one a line.
Status WriteSkillFiles(const fs::path& out, const std::string& name, const std::vector<Verified>& verified,
                       const std::vector<Verified>& best,
                       const std::map<std::string, std::vector<const Verified*>>& by_family, std::string& sources) {
  json source_list = json::array();
  for (const Verified& v : verified) {
    sources += v.record_hash + "\n";
    source_list.push_back({{"task", v.task},
                           {"record", v.record_hash},
                           {"speedup", v.speedup},
                           {"speedup_low", v.speedup_low}});
  }
  json evals = {{"skill_name", name}, {"families", json::array()}, {"evals", json::array()}};
  for (const auto& [family, list] : by_family) evals["families"].push_back(family);
  int id = 0;
  for (const Verified& v : best)
    evals["evals"].push_back({{"id", ++id}, {"task", v.task}, {"family", v.family}});
  std::error_code ec;
  fs::create_directories(out / "references", ec);
  fs::create_directories(out / "scripts", ec);
  fs::create_directories(out / "evals", ec);
  if (ec) return Status::IoError(out.string() + ": cannot create it (" + ec.message() + ")");
  for (const auto& [family, list] : by_family) {
    std::string text =
        "# Verified " + family +
        " kernels\n\nEach was correct on the GPU and faster than its "
        "reference (the speedup's 95% interval above 1x). The plan is kforge's launch plan.\n\n";
    for (const Verified* v : list) {
      char speed[64];
      std::snprintf(speed, sizeof(speed), "%.2fx, lower bound %.2fx", v->speedup, v->speedup_low);
      text += "## " + v->task + " (" + speed + ")\n\n```cuda\n" + v->source + "\n```\n\n```json\n" +
              v->plan.dump(2) + "\n```\n\n";
    }
    KFORGE_RETURN_IF_ERROR(common::WriteFileAtomic(out / "references" / (family + ".md"), text));
  }
  KFORGE_RETURN_IF_ERROR(
      common::WriteFileAtomic(out / "references" / "sources.json", source_list.dump(2) + "\n"));
  KFORGE_RETURN_IF_ERROR(common::WriteFileAtomic(
      out / "scripts" / "verify.sh",
      "#!/bin/sh\n# Verify solutions the way the references were verified: scripts/verify.sh [--tasks ROOT] "
      "SOLUTION.json...\nexec kforge verify \"$@\"\n"));
  fs::permissions(out / "scripts" / "verify.sh",
                  fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add, ec);
  KFORGE_RETURN_IF_ERROR(common::WriteFileAtomic(out / "evals" / "evals.json", evals.dump(2) + "\n"));
  return Status::Ok();
}

}  // namespace

StatusOr<DistillSummary> RunDistill(const DistillOptions& options) {
  if (options.run_dirs.empty()) return Status::InvalidArgument("name at least one run folder");
  if (options.out.empty()) return Status::InvalidArgument("--out DIR/NAME is required");
  const fs::path out = options.out.lexically_normal().filename().empty()
                           ? options.out.lexically_normal().parent_path()
                           : options.out.lexically_normal();
  const std::string name = out.filename().string();
  {
    // The name is checked before anything is sent: the folder's name is the skill's.
    std::error_code ec;
    if (fs::exists(fs::symlink_status(out, ec)))
      return Status::InvalidArgument("--out " + out.string() + ": already exists; name a new folder");
  }
  std::vector<Verified> verified;
  std::vector<std::string> pitfalls;
  std::set<std::string> arches;
  for (const fs::path& dir : options.run_dirs)
    KFORGE_RETURN_IF_ERROR(ReadRun(dir, verified, pitfalls, arches));
  if (verified.empty())
    return Status::InvalidArgument(
        "no verified episode (correct, speedup's lower bound above 1x) in the run folders");
  // The fastest verified kernel of each task, by family.
  std::sort(verified.begin(), verified.end(), [](const Verified& a, const Verified& b) {
    return a.task != b.task ? a.task < b.task : a.speedup_low > b.speedup_low;
  });
  std::vector<Verified> best;
  for (const Verified& v : verified)
    if (best.empty() || best.back().task != v.task) best.push_back(v);
  std::map<std::string, std::vector<const Verified*>> by_family;
  for (const Verified& v : best) by_family[v.family].push_back(&v);
  if (pitfalls.size() > kMaxPitfalls) pitfalls.resize(kMaxPitfalls);

  KFORGE_ASSIGN_OR_RETURN(const std::string prompt, DistillPrompt(options, name, by_family, pitfalls));
  KFORGE_ASSIGN_OR_RETURN(const SkillText text, AskTeacher(options, name, prompt));
  std::string sources;
  KFORGE_RETURN_IF_ERROR(WriteSkillFiles(out, name, verified, best, by_family, sources));
  std::string arch;
  for (const std::string& a : arches) arch += (arch.empty() ? "" : "; ") + a;
  std::string skill_md = "---\nname: " + name + "\ndescription: " + Quoted(text.description) + "\n";
  if (!options.license.empty()) skill_md += "license: " + Quoted(options.license) + "\n";
  skill_md +=
      "metadata:\n  teacher: " + Quoted(llm::ProviderKindName(options.teacher.kind) + " " + options.model) +
      "\n  arch: " + Quoted(arch.empty() ? "unknown" : arch) + "\n  trajectories: \"" +
      std::to_string(verified.size()) + "\"\n  trajectories-hash: \"sha256:" + common::Sha256Hex(sources) +
      "\"\n---\n" + text.body;
  KFORGE_RETURN_IF_ERROR(common::WriteFileAtomic(out / "SKILL.md", skill_md));

  CheckResult checked = CheckSkill(out);
  if (!checked.ok())
    return Status::InvalidArgument(out.string() + " was written but is not a valid skill: " +
                                   checked.problems.front() + " (kforge skill check " + out.string() + ")");
  DistillSummary summary;
  summary.verified = static_cast<int>(verified.size());
  summary.pitfalls = static_cast<int>(pitfalls.size());
  for (const auto& [family, list] : by_family) summary.families.push_back(family);
  summary.hash = checked.skill.hash;
  return summary;
}

}  // namespace kforge::skill
