// GitHub Actions: `::error` workflow commands and the markdown step summary.
#include <cstdio>
#include <string>

#include "cli/ci_report.h"

namespace kforge::cli {
namespace {

std::string Escape(const std::string& text, bool property) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      case ':':
        out += property ? "%3A" : ":";
        break;
      case ',':
        out += property ? "%2C" : ",";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

/// A markdown table cell: one line, pipes escaped, at most `limit` bytes.
std::string Cell(const std::string& text, size_t limit = 200) {
  std::string out;
  for (char c : text.substr(0, limit)) {
    if (c == '\n' || c == '\r')
      out.push_back(' ');
    else if (c == '|')
      out += "\\|";
    else if (c == '`')
      out += "'";
    else
      out.push_back(c);
  }
  return text.size() > limit ? out + "…" : out;
}

const char* Word(CiCase::Outcome outcome) {
  switch (outcome) {
    case CiCase::Outcome::kPassed:
      return "pass";
    case CiCase::Outcome::kFailed:
      return "fail";
    case CiCase::Outcome::kError:
      return "error";
    case CiCase::Outcome::kSkipped:
      return "skipped";
  }
  return "";
}

}  // namespace

std::string EscapeCommandData(const std::string& text) { return Escape(text, false); }
std::string EscapeCommandProperty(const std::string& text) { return Escape(text, true); }

std::string GithubAnnotations(const std::vector<CiCase>& cases) {
  std::string out;
  for (const CiCase& c : cases) {
    if (c.outcome != CiCase::Outcome::kFailed && c.outcome != CiCase::Outcome::kError) continue;
    std::string title = EscapeCommandProperty("kforge " + c.status + ": " + c.classname);
    if (c.places.empty()) {
      out += "::error title=" + title + "::" + EscapeCommandData(c.name + ": " + c.message) + "\n";
      continue;
    }
    for (size_t i = 0; i < c.places.size(); ++i) {
      const SourcePlace& place = c.places[i];
      out += "::error file=" + EscapeCommandProperty(place.file) + ",line=" + std::to_string(place.line);
      if (place.col > 0) out += ",col=" + std::to_string(place.col);
      out += ",title=" + title + "::" + EscapeCommandData(c.place_messages[i]) + "\n";
    }
  }
  return out;
}

std::string GithubStepSummary(const std::string& suite, const std::vector<CiCase>& cases) {
  int passed = 0, failed = 0, errors = 0, skipped = 0;
  for (const CiCase& c : cases) {
    passed += c.outcome == CiCase::Outcome::kPassed;
    failed += c.outcome == CiCase::Outcome::kFailed;
    errors += c.outcome == CiCase::Outcome::kError;
    skipped += c.outcome == CiCase::Outcome::kSkipped;
  }
  std::string out = "### " + suite + ": " + std::to_string(passed) + " passed, " + std::to_string(failed) +
                    " failed, " + std::to_string(errors) + " errors";
  if (skipped > 0) out += ", " + std::to_string(skipped) + " skipped";
  out +=
      "\n\n| result | status | task | solution | time (s) | message |\n| --- | --- | --- | --- | ---: | --- "
      "|\n";
  for (const CiCase& c : cases) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3f", c.seconds);
    out += "| " + std::string(Word(c.outcome)) + " | " + Cell(c.status) + " | " + Cell(c.classname) + " | " +
           Cell(c.name) + " | " + seconds + " | " + Cell(c.message) + " |\n";
  }
  return out + "\n";
}

}  // namespace kforge::cli
