// Cases from verdicts, the JUnit XML document, and the --junit/--annotations flags.
#include "cli/ci_report.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "kforge/common/files.h"

namespace kforge::cli {
namespace {

std::string Seconds(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

/// The lines "kernel.cu(12): error: ..." of a compile log: the source line and the error's text.
std::vector<std::pair<int, std::string>> CompileErrors(const std::string& log) {
  std::vector<std::pair<int, std::string>> errors;
  size_t start = 0;
  while (start < log.size() && errors.size() < 10) {
    size_t end = log.find('\n', start);
    std::string_view line(log.data() + start, (end == std::string::npos ? log.size() : end) - start);
    start = end == std::string::npos ? log.size() : end + 1;
    size_t paren = line.find('(');
    size_t close = line.find("): ");
    if (paren == std::string_view::npos || paren == 0 || close == std::string_view::npos ||
        close <= paren + 1)
      continue;
    std::string_view file = line.substr(0, paren);
    if (file.find('/') != std::string_view::npos || file.find(' ') != std::string_view::npos ||
        file.rfind("__nv", 0) == 0)
      continue;  // a header's diagnostic, not the solution's source
    std::string_view digits = line.substr(paren + 1, close - paren - 1);
    if (digits.size() > 7 || digits.find_first_not_of("0123456789") != std::string_view::npos) continue;
    std::string_view rest = line.substr(close + 3);
    if (rest.rfind("error", 0) != 0 && rest.rfind("catastrophic error", 0) != 0) continue;
    errors.emplace_back(std::stoi(std::string(digits)), std::string(rest));
  }
  return errors;
}

/// "LABEL: launches[0].grid: why" -> "launches[0].grid" (the JSON path a plan error names), or "".
std::string FieldOfMessage(const std::string& label, std::string message) {
  if (message.rfind(label + ": ", 0) == 0) message.erase(0, label.size() + 2);
  size_t colon = message.find(": ");
  if (colon == std::string::npos) return "";
  std::string path = message.substr(0, colon);
  return path.find(' ') == std::string::npos ? path : "";
}

/// "LABEL: line L, column C: why" (a JSON syntax error) -> {L, C}.
std::optional<std::pair<int, int>> SyntaxPlace(const std::string& label, const std::string& message) {
  int line = 0, column = 0;
  std::string rest = message.rfind(label + ": ", 0) == 0 ? message.substr(label.size() + 2) : message;
  if (std::sscanf(rest.c_str(), "line %d, column %d", &line, &column) == 2 && line > 0)
    return std::pair{line, column};
  return std::nullopt;
}

/// `text` with each byte that does not start a valid UTF-8 sequence replaced by U+FFFD.
std::string ValidUtf8(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    unsigned char lead = static_cast<unsigned char>(text[i]);
    size_t length = lead < 0x80           ? 1
                    : (lead >> 5) == 0x6  ? 2
                    : (lead >> 4) == 0xE  ? 3
                    : (lead >> 3) == 0x1E ? 4
                                          : 0;
    bool valid = length > 0 && i + length <= text.size() && (length == 1 || lead >= 0xC2);
    for (size_t k = 1; valid && k < length; ++k)
      valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (valid) {
      out.append(text, i, length);
      i += length;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

/// XML text or attribute value: escaped, and with what XML 1.0 cannot hold replaced.
std::string Xml(const std::string& raw) {
  std::string text = ValidUtf8(raw);
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      case '\t':
        out += "&#9;";
        break;
      default:
        if (c < 0x20)
          out += "\xEF\xBF\xBD";
        else
          out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

void Properties(std::string& out, const std::vector<std::pair<std::string, std::string>>& properties,
                const char* indent) {
  if (properties.empty()) return;
  out += std::string(indent) + "<properties>\n";
  for (const auto& [name, value] : properties)
    out += std::string(indent) + "  <property name=\"" + Xml(name) + "\" value=\"" + Xml(value) + "\"/>\n";
  out += std::string(indent) + "</properties>\n";
}

}  // namespace

CiCase::Outcome OutcomeOf(common::VerdictStatus status) {
  if (common::CountsAsHarnessError(status)) return CiCase::Outcome::kError;
  return common::AtFault(status) ? CiCase::Outcome::kFailed : CiCase::Outcome::kPassed;
}

CiCase CaseFromVerdict(const common::Verdict& verdict) {
  CiCase c;
  c.classname = verdict.task.empty() ? "(no task)" : verdict.task;
  c.name = verdict.solution;
  c.status = std::string(common::VerdictStatusName(verdict.status));
  c.message = verdict.message;
  c.seconds = ((verdict.compile ? verdict.compile->ms : 0) + verdict.timing.gpu_ms.value_or(0)) / 1000;
  c.outcome = OutcomeOf(verdict.status);
  c.properties.emplace_back("status", c.status);
  c.properties.emplace_back("judge", std::to_string(verdict.judge));
  if (!verdict.solution_hash.empty()) c.properties.emplace_back("solution_hash", verdict.solution_hash);
  if (const std::optional<common::MemoryRecord>& memory = verdict.memory) {
    for (auto [key, bytes] : {std::pair{"peak_device_bytes", memory->peak_device_bytes},
                              std::pair{"budget_bytes", memory->budget_bytes},
                              std::pair{"footprint_bytes", memory->footprint_bytes}})
      if (memory->Has(key)) c.properties.emplace_back(key, std::to_string(bytes));
  }
  std::string log = verdict.compile ? verdict.compile->log : "";
  if (verdict.status == common::VerdictStatus::kCompileError) {
    c.detail = log;
    for (const auto& [line, text] : CompileErrors(log)) {
      if (std::optional<SourcePlace> place = PlaceOfSourceLine(verdict.solution, line)) {
        c.places.push_back(*place);
        c.place_messages.push_back(text);
      }
    }
  } else if (verdict.status == common::VerdictStatus::kInvalidSolution) {
    std::optional<SourcePlace> place;
    if (auto syntax = SyntaxPlace(verdict.solution, verdict.message)) {
      std::error_code ec;  // a syntax error's line and column are the file's own
      if (std::filesystem::is_regular_file(verdict.solution, ec))
        place = SourcePlace{verdict.solution, syntax->first, syntax->second};
    } else if (std::string field = FieldOfMessage(verdict.solution, verdict.message); !field.empty()) {
      place = PlaceOfField(verdict.solution, field);
    }
    if (place) {
      c.places.push_back(*place);
      c.place_messages.push_back(verdict.message);
    }
  }
  return c;
}

std::string JUnitXml(const std::string& suite,
                     const std::vector<std::pair<std::string, std::string>>& suite_properties,
                     const std::vector<CiCase>& cases) {
  int failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  for (const CiCase& c : cases) {
    failures += c.outcome == CiCase::Outcome::kFailed;
    errors += c.outcome == CiCase::Outcome::kError;
    skipped += c.outcome == CiCase::Outcome::kSkipped;
    seconds += c.seconds;
  }
  std::string counts = " tests=\"" + std::to_string(cases.size()) + "\" failures=\"" +
                       std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" +
                       std::to_string(skipped) + "\" time=\"" + Seconds(seconds) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"" + Xml(suite) + "\"" + counts + ">\n";
  out += "  <testsuite name=\"" + Xml(suite) + "\"" + counts + ">\n";
  Properties(out, suite_properties, "    ");
  for (const CiCase& c : cases) {
    out += "    <testcase classname=\"" + Xml(c.classname) + "\" name=\"" + Xml(c.name) + "\" time=\"" +
           Seconds(c.seconds) + "\"";
    if (!c.places.empty()) out += " file=\"" + Xml(c.places.front().file) + "\"";
    out += ">\n";
    Properties(out, c.properties, "      ");
    std::string body = c.detail.empty() ? "" : Xml(c.detail);
    switch (c.outcome) {
      case CiCase::Outcome::kPassed:
        break;
      case CiCase::Outcome::kFailed:
        out += "      <failure type=\"" + Xml(c.status) + "\" message=\"" + Xml(c.status + ": " + c.message) +
               "\">" + body + "</failure>\n";
        break;
      case CiCase::Outcome::kError:
        out += "      <error type=\"" + Xml(c.status) + "\" message=\"" + Xml(c.status + ": " + c.message) +
               "\">" + body + "</error>\n";
        break;
      case CiCase::Outcome::kSkipped:
        out += "      <skipped message=\"" + Xml(c.status + ": " + c.message) + "\"/>\n";
        break;
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

void AddCiFlags(CLI::App& sub, CiFlags& flags) {
  sub.add_option("--junit", flags.junit, "Also write a JUnit XML report to FILE (one testcase per solution)");
  sub.add_option("--annotations", flags.annotations,
                 "GitHub workflow annotations and step summary: github, none, or auto (github when "
                 "GITHUB_ACTIONS=true)")
      ->default_val("auto");
}

CiReport::CiReport(std::string suite, CiFlags flags, std::vector<std::string> inputs)
    : suite_(std::move(suite)),
      flags_(std::move(flags)),
      annotations_(kAnnotationsNames.Parse(flags_.annotations)),
      inputs_(std::move(inputs)) {}

namespace {

/// The task folder (one holding task.json) that `path` lies in, if any.
std::optional<std::filesystem::path> TaskFolderAbove(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::absolute(path, ec), ec).parent_path();
  for (; dir.has_relative_path(); dir = dir.parent_path())
    if (fs::exists(dir / "task.json", ec)) return dir;
  return std::nullopt;
}

}  // namespace

Status CiReport::CheckUsage() const {
  namespace fs = std::filesystem;
  if (!annotations_)
    return Status::InvalidArgument("--annotations " + flags_.annotations + ": expected " +
                                   kAnnotationsNames.Spellings());
  if (flags_.junit.empty()) return Status::Ok();
  std::error_code ec;
  if (fs::is_directory(flags_.junit, ec))
    return Status::InvalidArgument("--junit " + flags_.junit + ": a folder");
  fs::path parent = fs::path(flags_.junit).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    return Status::InvalidArgument("--junit " + flags_.junit + ": no such folder " + parent.string());
  for (const std::string& input : inputs_)
    if (input != "-" && common::SameFile(input, flags_.junit))
      return Status::InvalidArgument("--junit " + flags_.junit + ": is an input; it would be written over");
  if (std::optional<fs::path> task = TaskFolderAbove(flags_.junit))
    return Status::InvalidArgument("--junit " + flags_.junit + ": inside the task folder " + task->string() +
                                   "; write the report elsewhere");
  return Status::Ok();
}

bool CiReport::GithubOn() const {
  switch (annotations_.value_or(Annotations::kNone)) {
    case Annotations::kGithub:
      return true;
    case Annotations::kNone:
      return false;
    case Annotations::kAuto:
      break;
  }
  const char* actions = std::getenv("GITHUB_ACTIONS");
  return actions != nullptr && std::string(actions) == "true";
}

Status CiReport::Finish() const {
  Status first = Status::Ok();
  if (!flags_.junit.empty()) {
    Status written = common::WriteFileAtomic(flags_.junit, JUnitXml(suite_, suite_properties_, cases_));
    if (!written.ok()) first = Status::IoError("--junit " + flags_.junit + ": " + written.message());
  }
  if (!GithubOn()) return first;
  std::string annotations = GithubAnnotations(cases_);
  std::fwrite(annotations.data(), 1, annotations.size(), stderr);
  std::fflush(stderr);
  const char* summary_path = std::getenv("GITHUB_STEP_SUMMARY");
  if (summary_path != nullptr && *summary_path != '\0') {
    std::ofstream summary(summary_path, std::ios::app | std::ios::binary);
    summary << GithubStepSummary(suite_, cases_);
    summary.flush();
    if (!summary && first.ok())
      first = Status::IoError(std::string("GITHUB_STEP_SUMMARY ") + summary_path + ": cannot append");
  }
  return first;
}

}  // namespace kforge::cli
