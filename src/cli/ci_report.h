// What CI systems read from verify, bench and `tasks check`: one case per solution (or task), written
// as a JUnit XML file (--junit) and, on GitHub Actions, as workflow annotations and a step summary
// (--annotations; docs/ci.md).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/names.h"
#include "kforge/common/status.h"
#include "kforge/common/verdict.h"

namespace CLI {
class App;
}

namespace kforge::cli {

/// A place in a file that an annotation points at; line 0 when unknown.
struct SourcePlace {
  std::string file;
  int line = 0;
  int col = 0;
};

/// One test case: a solution judged by verify or bench, or a task checked by `tasks check`.
struct CiCase {
  enum class Outcome {
    kPassed,
    kFailed,   ///< the candidate (or task) failed: a JUnit <failure>
    kError,    ///< kforge could not judge it (harness_error, no_gpu): a JUnit <error>
    kSkipped,  ///< neither, e.g. a task the import found unable to judge kernels
  };
  std::string classname;  ///< the task id
  std::string name;       ///< the solution as given (a path, "path:N", "-:N"), or the task id
  double seconds = 0;
  Outcome outcome = Outcome::kPassed;
  std::string status;   ///< "ok", "mismatch", ...
  std::string message;  ///< one line; empty when passed
  std::string detail;   ///< the failure's full text (the compile log), may be empty
  std::vector<std::pair<std::string, std::string>> properties;  ///< in order: speedup, peak memory, ...
  std::vector<SourcePlace> places;          ///< where annotations point (compile errors, the plan's field)
  std::vector<std::string> place_messages;  ///< the message of each place, same order
};

/// How a verdict status counts in a CI report: passed, failed (the candidate's fault) or an error
/// (kforge's side: a harness error, no GPU).
CiCase::Outcome OutcomeOf(common::VerdictStatus status);

/// The case of a verdict: time = compile ms + the GPU check's ms; properties: the judge, the
/// solution's hash, peak and budget device bytes where measured; places: compile errors and plan
/// errors mapped back to the solution file where the verdict's `solution` names a readable one.
CiCase CaseFromVerdict(const common::Verdict& verdict);

/// "::error file=F,line=L,col=C,title=T::message" lines, one per place of every failed or errored
/// case (one without a file for a case with no place), escaped as GitHub's workflow commands require.
std::string GithubAnnotations(const std::vector<CiCase>& cases);

/// A markdown table of the cases (status, task, solution, time, message) under a heading with counts.
std::string GithubStepSummary(const std::string& suite, const std::vector<CiCase>& cases);

/// GitHub's escapes for a workflow command's message (%, CR, LF) and for a property value (also : and ,).
std::string EscapeCommandData(const std::string& text);
std::string EscapeCommandProperty(const std::string& text);

/// Where in `file` (the solution as given to verify: .json, a model reply, or "path.jsonl:N") the
/// compile log's line `source_line` of the solution's source sits; nullopt when it cannot be told.
std::optional<SourcePlace> PlaceOfSourceLine(const std::string& solution_label, int source_line);

/// Where in the solution file the JSON field `path` ("launches[0].grid[1]") is; nullopt when unknown.
std::optional<SourcePlace> PlaceOfField(const std::string& solution_label, const std::string& path);

/// A JUnit XML document (testsuites > testsuite > testcase) named `suite`, with `suite_properties`
/// on the suite (the seed, the judge's version). Text is escaped; characters XML cannot hold are
/// replaced by U+FFFD.
std::string JUnitXml(const std::string& suite,
                     const std::vector<std::pair<std::string, std::string>>& suite_properties,
                     const std::vector<CiCase>& cases);

/// Where GitHub workflow annotations and the step summary go: always, never, or when the command runs
/// in GitHub Actions (GITHUB_ACTIONS=true).
enum class Annotations { kGithub, kNone, kAuto };
inline constexpr common::NameTable<Annotations, 3> kAnnotationsNames = {
    {{Annotations::kGithub, "github"}, {Annotations::kNone, "none"}, {Annotations::kAuto, "auto"}}};
static_assert(kAnnotationsNames.MatchesEnum());

/// `--junit FILE` and `--annotations github|none|auto`, shared by verify, bench and tasks check.
struct CiFlags {
  std::string junit;                 ///< empty: no JUnit file
  std::string annotations = "auto";  ///< as given; CiReport reads it (kAnnotationsNames)
};
void AddCiFlags(CLI::App& sub, CiFlags& flags);

/// Collects cases while a command runs, then writes what CiFlags ask for.
class CiReport {
 public:
  /// `inputs` are the command's input paths: the JUnit file may not be one of them (compared by
  /// name and by inode), nor lie in a task folder.
  CiReport(std::string suite, CiFlags flags, std::vector<std::string> inputs);

  /// InvalidArgument naming --junit when the file is an input, lies inside a task folder (one holding
  /// task.json) or its folder does not exist, or naming --annotations for an unknown value. Called
  /// before any work.
  Status CheckUsage() const;

  void Add(CiCase c) { cases_.push_back(std::move(c)); }
  void AddSuiteProperty(std::string name, std::string value) {
    suite_properties_.emplace_back(std::move(name), std::move(value));
  }

  /// Writes the JUnit file (atomically), the annotations to stderr (stdout stays the stream the next
  /// command reads; the Actions runner reads workflow commands from both) and appends the summary
  /// to $GITHUB_STEP_SUMMARY when set. The first error, naming the file.
  Status Finish() const;

  const std::vector<CiCase>& cases() const { return cases_; }

 private:
  bool GithubOn() const;

  std::string suite_;
  CiFlags flags_;
  std::optional<Annotations> annotations_;  ///< none: flags_.annotations is not a name (CheckUsage says so)
  std::vector<std::string> inputs_;
  std::vector<std::pair<std::string, std::string>> suite_properties_;
  std::vector<CiCase> cases_;
};

}  // namespace kforge::cli
