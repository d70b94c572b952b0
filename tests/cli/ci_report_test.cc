// CI reports: the JUnit XML of a mixed batch judged by the fake worker (structure checked without an
// XML library), GitHub's escapes, annotations at the solution file's line, the step summary, and
// `--junit` refusing to write over an input.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cli/ci_report.h"
#include "cli/cmd_tasks_check.h"
#include "fakes/command.h"
#include "fakes/task_root.h"
#include "kforge/common/files.h"
#include "kforge/verify/verifier.h"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

/// Checks that `xml` is well formed as far as this writer goes: every tag closed in order, no raw
/// `<` or `&` in text, one root. Returns the element names in document order, or an error text.
std::vector<std::string> Elements(const std::string& xml, std::string* error) {
  std::vector<std::string> names, open;
  size_t i = xml.rfind("<?xml", 0) == 0 ? xml.find("?>") + 2 : 0;
  int roots = 0;
  while (i < xml.size()) {
    if (xml[i] == '&') {
      size_t semi = xml.find(';', i);
      std::string entity = xml.substr(i, semi - i + 1);
      if (semi == std::string::npos ||
          (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" &&
           entity != "&apos;" && entity.rfind("&#", 0) != 0)) {
        *error = "bad entity at " + std::to_string(i);
        return {};
      }
      i = semi + 1;
      continue;
    }
    if (xml[i] != '<') {
      ++i;
      continue;
    }
    size_t close = xml.find('>', i);
    std::string tag = xml.substr(i + 1, close - i - 1);
    if (tag.find('<') != std::string::npos) {
      *error = "raw < in a tag at " + std::to_string(i);
      return {};
    }
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) {
        *error = "unbalanced </" + tag.substr(1) + ">";
        return {};
      }
      open.pop_back();
    } else {
      std::string name = tag.substr(0, tag.find_first_of(" />"));
      names.push_back(name);
      if (open.empty()) ++roots;
      if (tag.back() != '/') open.push_back(name);
    }
    i = close + 1;
  }
  if (!open.empty() || roots != 1) *error = "unclosed elements or several roots";
  return names;
}

/// The value of attribute `name` in the first element `<tag ...` that contains `marker`.
std::string Attribute(const std::string& xml, const std::string& marker, const std::string& name) {
  size_t at = xml.find(marker);
  if (at == std::string::npos) return "(no element)";
  size_t start = xml.rfind('<', at);
  size_t end = xml.find('>', at);
  std::string tag = xml.substr(start, end - start);
  size_t key = tag.find(" " + name + "=\"");
  if (key == std::string::npos) return "(no attribute)";
  key += name.size() + 3;
  return tag.substr(key, tag.find('"', key) - key);
}

/// The <testcase> element (up to its end) whose name attribute is `name`.
std::string TestCaseOf(const std::string& xml, const std::string& name) {
  size_t at = xml.find("name=\"" + name + "\"");
  if (at == std::string::npos) return "";
  size_t start = xml.rfind("<testcase", at);
  return xml.substr(start, xml.find("</testcase>", at) - start);
}

class CiReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_ci_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    auto text = common::ReadFile(fs::path(KFORGE_SOURCE_DIR) / "examples/demo/relu.json");
    ASSERT_TRUE(text.ok());
    relu_ = nlohmann::json::parse(*text);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// The demo relu solution with `marker` for the fake worker appended to its source, in a file.
  std::string Relu(const std::string& name, const std::string& marker) {
    nlohmann::json solution = relu_;
    solution["source"] = solution["source"].get<std::string>() + "// fake:" + marker + "\n";
    return Write(name, solution.dump(2));
  }
  std::string Write(const std::string& name, const std::string& text) {
    fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  /// The cases of judging `files` with the fake worker, in order.
  std::vector<CiCase> Judge(const std::vector<std::string>& files) {
    verify::VerifyOptions options;
    options.tasks_root = tasks_.path();
    options.worker_program = KFORGE_FAKE_WORKER;
    options.seed = 7;
    options.trials = 2;
    options.use_cache = false;
    verify::Verifier verifier(options);
    verify::SolutionReader reader(files);
    std::vector<CiCase> cases;
    verifier.Run(reader, [&](const common::Verdict& verdict, const std::optional<common::BenchResult>&) {
      cases.push_back(CaseFromVerdict(verdict));
    });
    return cases;
  }

  fakes::TaskRoot tasks_{{"demo"}};
  fs::path dir_;
  nlohmann::json relu_;
};

TEST_F(CiReportTest, MixedBatchIsOneTestCaseEachWithFailuresErrorsAndProperties) {
  nlohmann::json broken = relu_;
  broken["source"] =
      "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
      "  long long i = blockIdx.x;\n"
      "  if (i < n) y[i] = x[i] <oops>\n}\n";
  nlohmann::json no_kernel = relu_;
  no_kernel["launches"][0]["kernel"] = "gelu";
  std::vector<std::string> files = {Relu("ok.json", "ok"), Relu("mismatch.json", "mismatch"),
                                    Relu("dies.json", "die"), Write("broken.json", broken.dump(2)),
                                    Write("no_kernel.json", no_kernel.dump(2))};
  std::vector<CiCase> cases = Judge(files);
  ASSERT_EQ(cases.size(), 5u);
  std::string xml = JUnitXml("kforge verify", {{"seed", "7"}}, cases);

  std::string error;
  std::vector<std::string> elements = Elements(xml, &error);
  ASSERT_EQ(error, "") << xml;
  EXPECT_EQ(std::count(elements.begin(), elements.end(), "testcase"), 5);
  EXPECT_EQ(std::count(elements.begin(), elements.end(), "failure"), 3);  // mismatch, compile, plan
  EXPECT_EQ(std::count(elements.begin(), elements.end(), "error"), 1);    // the worker died
  EXPECT_EQ(Attribute(xml, "<testsuite ", "tests"), "5");
  EXPECT_EQ(Attribute(xml, "<testsuite ", "failures"), "3");
  EXPECT_EQ(Attribute(xml, "<testsuite ", "errors"), "1");
  EXPECT_EQ(Attribute(xml, "<testsuites ", "name"), "kforge verify");

  std::string ok = TestCaseOf(xml, files[0]);
  EXPECT_EQ(Attribute(ok, "<testcase", "classname"), "demo/relu");
  EXPECT_EQ(ok.find("<failure"), std::string::npos);
  EXPECT_NE(ok.find("<property name=\"peak_device_bytes\" value=\"512\"/>"), std::string::npos) << ok;
  EXPECT_NE(ok.find("<property name=\"judge\" value=\"" + std::to_string(common::kJudgeVersion) + "\"/>"),
            std::string::npos);
  EXPECT_GT(std::stod(Attribute(ok, "<testcase", "time")), 0.0009);  // the fake's 1 ms GPU check

  std::string mismatch = TestCaseOf(xml, files[1]);
  EXPECT_EQ(Attribute(mismatch, "<failure", "type"), "mismatch");
  EXPECT_EQ(Attribute(mismatch, "<failure", "message"), "mismatch: out0: 7 of 100 elements differ");

  std::string died = TestCaseOf(xml, files[2]);
  EXPECT_EQ(Attribute(died, "<error", "type"), "harness_error");
  EXPECT_EQ(died.find("<failure"), std::string::npos);

  std::string compile = TestCaseOf(xml, files[3]);
  EXPECT_EQ(Attribute(compile, "<failure", "type"), "compile_error");
  EXPECT_NE(compile.find("&lt;oops&gt;"), std::string::npos) << "the log, escaped: " << compile;
  EXPECT_EQ(Attribute(compile, "<testcase", "file"), files[3]);

  std::string plan = TestCaseOf(xml, files[4]);
  EXPECT_EQ(Attribute(plan, "<failure", "type"), "invalid_solution");
}

TEST_F(CiReportTest, CompileAndPlanErrorsPointAtTheSolutionFilesLine) {
  // Pretty-printed: "source" is line 4 of the file; its third source line starts after two "\n".
  nlohmann::json broken = relu_;
  broken["source"] =
      "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
      "  long long i = blockIdx.x;\n"
      "  if (i < n) y[i] = x[i] <oops>;\n}\n";
  std::string broken_file = Write("broken.json", broken.dump(2));
  nlohmann::json no_kernel = relu_;
  no_kernel["launches"][0]["kernel"] = "gelu";
  std::string no_kernel_file = Write("no_kernel.json", no_kernel.dump(2));
  std::vector<CiCase> cases = Judge({broken_file, no_kernel_file});
  ASSERT_EQ(cases.size(), 2u);

  std::ifstream in(broken_file);
  std::string line;
  int source_line = 0;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find("\"source\"") != std::string::npos) {
      source_line = n;
      break;
    }
  }
  size_t third = line.find("\\n", line.find("\\n") + 2) + 2;
  ASSERT_GE(cases[0].places.size(), 1u) << cases[0].detail;
  EXPECT_EQ(cases[0].places[0].file, broken_file);
  EXPECT_EQ(cases[0].places[0].line, source_line);
  EXPECT_EQ(cases[0].places[0].col, static_cast<int>(third) + 1) << line;
  EXPECT_NE(cases[0].place_messages[0].find("error"), std::string::npos);

  // The plan error names launches[0].kernel: the line of "kernel": "gelu" in the file.
  ASSERT_EQ(cases[1].places.size(), 1u) << cases[1].message;
  std::ifstream plan(no_kernel_file);
  int kernel_line = 0;
  for (int n = 1; std::getline(plan, line); ++n) {
    if (line.find("\"gelu\"") != std::string::npos) kernel_line = n;
  }
  EXPECT_EQ(cases[1].places[0].line, kernel_line);

  std::string annotations = GithubAnnotations(cases);
  EXPECT_EQ(annotations.rfind("::error file=" + EscapeCommandProperty(broken_file) + ",line=" +
                                  std::to_string(source_line) + ",col=" + std::to_string(third + 1) +
                                  ",title=kforge compile_error%3A demo/relu::",
                              0),
            0u)
      << annotations;
  EXPECT_NE(annotations.find(",line=" + std::to_string(kernel_line) + ","), std::string::npos) << annotations;
}

TEST_F(CiReportTest, ModelReplyCompileErrorsCountFromTheCudaFence) {
  std::string reply = "Here is the kernel.\n\n```cuda\n" +
                      std::string(
                          "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
                          "  y[0] = x[0] <oops>;\n}\n") +
                      "```\n\n```json\n" + nlohmann::json({{"launches", relu_["launches"]}}).dump(2) +
                      "\n```\n";
  std::string file = Write("reply.md", reply);
  verify::VerifyOptions options;
  options.tasks_root = tasks_.path();
  options.task = "demo/relu";
  options.compile_only = true;
  options.use_cache = false;
  verify::Verifier verifier(options);
  verify::SolutionReader reader({file});
  std::vector<CiCase> cases;
  verifier.Run(reader, [&](const common::Verdict& v, const std::optional<common::BenchResult>&) {
    cases.push_back(CaseFromVerdict(v));
  });
  ASSERT_EQ(cases.size(), 1u);
  ASSERT_EQ(cases[0].status, "compile_error") << cases[0].message;
  ASSERT_GE(cases[0].places.size(), 1u) << cases[0].detail;
  EXPECT_EQ(cases[0].places[0].line, 5);  // the fence is line 3; the source's line 2 is the file's 5
  EXPECT_EQ(cases[0].places[0].col, 1);
}

TEST(GithubEscapeTest, DataAndPropertiesEscapeAsGithubSays) {
  struct Case {
    std::string raw, data, property;
  } cases[] = {
      {"plain", "plain", "plain"},           {"100%", "100%25", "100%25"}, {"a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
      {"x: y, z", "x: y, z", "x%3A y%2C z"}, {"%0A", "%250A", "%250A"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(EscapeCommandData(c.raw), c.data) << c.raw;
    EXPECT_EQ(EscapeCommandProperty(c.raw), c.property) << c.raw;
  }
}

TEST(JUnitXmlTest, HostileTextIsEscapedAndControlBytesReplaced) {
  CiCase c;
  c.classname = "t/<x>";
  c.name = "a\"b'&c";
  c.status = "mismatch";
  c.outcome = CiCase::Outcome::kFailed;
  c.message = std::string("bad \x01 byte \xff and ]]> end");
  c.detail = "</failure><injected/>";
  std::string xml = JUnitXml("s", {}, {c});
  std::string error;
  std::vector<std::string> elements = Elements(xml, &error);
  EXPECT_EQ(error, "") << xml;
  EXPECT_EQ(std::count(elements.begin(), elements.end(), "injected"), 0) << xml;
  EXPECT_NE(xml.find("classname=\"t/&lt;x&gt;\""), std::string::npos);
  EXPECT_NE(xml.find("name=\"a&quot;b&apos;&amp;c\""), std::string::npos);
  EXPECT_NE(xml.find("bad \xEF\xBF\xBD byte \xEF\xBF\xBD and ]]&gt; end"), std::string::npos) << xml;
}

TEST_F(CiReportTest, SummaryAndAnnotationsUnderGithubActions) {
  std::string summary_path = (dir_ / "summary.md").string();
  Write("summary.md", "earlier step\n");
  std::vector<CiCase> cases = Judge({Relu("ok.json", "ok"), Relu("mismatch.json", "mismatch")});
  setenv("GITHUB_ACTIONS", "true", 1);
  setenv("GITHUB_STEP_SUMMARY", summary_path.c_str(), 1);
  CiReport report("kforge verify", CiFlags{}, {});
  for (CiCase& c : cases) report.Add(c);
  ::testing::internal::CaptureStderr();
  Status finished = report.Finish();
  std::string err = ::testing::internal::GetCapturedStderr();
  unsetenv("GITHUB_ACTIONS");
  unsetenv("GITHUB_STEP_SUMMARY");
  ASSERT_TRUE(finished.ok()) << finished.message();
  EXPECT_EQ(err, "::error title=kforge mismatch%3A demo/relu::" + (dir_ / "mismatch.json").string() +
                     ": out0: 7 of 100 elements differ\n");
  auto summary = common::ReadFile(summary_path);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->rfind("earlier step\n### kforge verify: 1 passed, 1 failed, 0 errors\n", 0), 0u)
      << *summary;
  EXPECT_NE(summary->find("| fail | mismatch | demo/relu | " + (dir_ / "mismatch.json").string() + " | "),
            std::string::npos)
      << *summary;

  CiReport quiet("kforge verify", CiFlags{"", "none"}, {});
  quiet.Add(cases[1]);
  setenv("GITHUB_ACTIONS", "true", 1);
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(quiet.Finish().ok());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  unsetenv("GITHUB_ACTIONS");
}

TEST_F(CiReportTest, JUnitNeverWritesOverAnInput) {
  std::string input = Relu("ok.json", "ok");
  EXPECT_EQ(CiReport("s", CiFlags{input, "none"}, {input}).CheckUsage().message(),
            "--junit " + input + ": is an input; it would be written over");
  EXPECT_NE(CiReport("s", CiFlags{(dir_ / "missing/x.xml").string(), "none"}, {})
                .CheckUsage()
                .message()
                .find("no such folder"),
            std::string::npos);
  EXPECT_NE(CiReport("s", CiFlags{"", "gitlab"}, {}).CheckUsage().message().find("--annotations gitlab"),
            std::string::npos);
  EXPECT_TRUE(CiReport("s", CiFlags{(dir_ / "r.xml").string(), "none"}, {input, "-"}).CheckUsage().ok());
}

// tasks check: a failing task is a failure, each task one testcase, as the fake worker answers.
TEST_F(CiReportTest, TasksCheckWritesOneTestCasePerTask) {
  for (const std::string id : {"t/good", "t/fake_fail"}) {
    fs::create_directories(dir_ / "root" / id);
    nlohmann::json task =
        nlohmann::json::parse(*common::ReadFile(fs::path(KFORGE_SOURCE_DIR) / "tasks/demo/relu/task.json"));
    task["id"] = id;
    task.erase("artifacts");
    std::ofstream(dir_ / "root" / id / "task.json") << task.dump(2);
    fs::copy_file(fs::path(KFORGE_SOURCE_DIR) / "tasks/demo/relu/reference.py",
                  dir_ / "root" / id / "reference.py");
  }
  TasksCheckOptions options;
  options.root = (dir_ / "root").string();
  options.worker_program = KFORGE_FAKE_WORKER;
  options.ci.junit = (dir_ / "tasks.xml").string();
  options.ci.annotations = "none";
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int code = CheckTasks(options);
  ::testing::internal::GetCapturedStdout();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 1) << err;
  auto xml = common::ReadFile(dir_ / "tasks.xml");
  ASSERT_TRUE(xml.ok()) << err;
  std::string error;
  std::vector<std::string> elements = Elements(*xml, &error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(Attribute(*xml, "<testsuite ", "name"), "kforge tasks check");
  EXPECT_EQ(Attribute(*xml, "<testsuite ", "tests"), "2");
  EXPECT_EQ(Attribute(*xml, "<testsuite ", "failures"), "1");
  EXPECT_EQ(Attribute(TestCaseOf(*xml, "t/fake_fail"), "<failure", "type"), "fail");
  EXPECT_EQ(TestCaseOf(*xml, "t/good").find("<failure"), std::string::npos);
}

}  // namespace
}  // namespace kforge::cli
