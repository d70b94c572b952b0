#include "kforge/export/report.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include <gtest/gtest.h>

#include "export/record_builder.h"
#include "fakes/command.h"
#include "kforge/common/files.h"
#include "kforge/export/report_html.h"
#include "kforge/export/report_table.h"

namespace kforge::exporter {
namespace {

namespace fs = std::filesystem;

/// A run of `tasks` tasks over levels 1-3, `samples` episodes each, correct with probability
/// `p_correct` and log-normal speedups around `speedup`.
std::vector<dataset::Trajectory> SyntheticRun(const std::string& run, int tasks, int samples,
                                              double p_correct, double speedup, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> log_speed(std::log(speedup), 0.6);
  std::vector<dataset::Trajectory> records;
  for (int t = 0; t < tasks; ++t) {
    for (int s = 0; s < samples; ++s) {
      testing::RecordSpec spec;
      spec.run = run;
      spec.level = 1 + t % 3;
      spec.task = "kernelbench/level" + std::to_string(*spec.level) + "/" + std::to_string(t) + "_Task";
      spec.sample = s;
      spec.turns = 1 + static_cast<int>(u(rng) * 4);
      spec.correct = u(rng) < p_correct - 0.1 * (*spec.level - 1);
      spec.speedup = std::exp(log_speed(rng));
      spec.sol_pct = 10 + 60 * u(rng);
      spec.harness_error = u(rng) < 0.02;
      records.push_back(testing::MakeRecord(spec));
    }
  }
  return records;
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge-report-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  RunReport Run(const std::string& label, const std::vector<dataset::Trajectory>& records) {
    fs::path path = dir_ / (label + ".jsonl");
    testing::WriteRecords(path.string(), records);
    StatusOr<RunReport> run = ReportRun(label, {path}, [](const std::string&) {});
    EXPECT_TRUE(run.ok()) << run.status().message();
    return *run;
  }
  /// The teacher and a weaker student, compared with the student as the baseline.
  Report TeacherAndStudent() {
    Report report;
    report.runs.push_back(Run("teacher", SyntheticRun("teacher", 60, 4, 0.9, 1.6, 1)));
    report.baseline = Run("student", SyntheticRun("student", 60, 4, 0.5, 0.9, 2));
    report.comparisons.push_back(Compare(report.runs[0], *report.baseline));
    return report;
  }
  fs::path dir_;
};

TEST_F(ReportTest, ComparingARunWithItselfChangesNothing) {
  RunReport run = Run("a", SyntheticRun("a", 30, 3, 0.7, 1.2, 3));
  Comparison c = Compare(run, run, 500, 7);
  EXPECT_EQ(c.common_tasks, 30);
  ASSERT_EQ(c.deltas.size(), 6u);
  for (const Delta& d : c.deltas) {
    ASSERT_TRUE(d.delta) << d.metric;
    EXPECT_NEAR(*d.delta, d.ratio ? 1.0 : 0.0, 1e-12) << d.metric;
    ASSERT_TRUE(d.lo && d.hi) << d.metric;
    EXPECT_NEAR(*d.lo, *d.delta, 1e-12) << d.metric;
    EXPECT_NEAR(*d.hi, *d.delta, 1e-12) << d.metric;
  }
}

TEST_F(ReportTest, ABetterRunShowsAnIntervalAboveZero) {
  Report report = TeacherAndStudent();
  const Comparison& c = report.comparisons[0];
  EXPECT_EQ(c.common_tasks, 60);
  const Delta& correctness = c.deltas[0];
  EXPECT_EQ(correctness.metric, "correctness");
  EXPECT_GT(*correctness.delta, 0.2);
  EXPECT_GT(*correctness.lo, 0.0);
  EXPECT_LT(*correctness.lo, *correctness.delta);
  EXPECT_GT(*correctness.hi, *correctness.delta);
  const Delta& geomean = c.deltas.back();
  EXPECT_EQ(geomean.metric, "geomean_speedup");
  EXPECT_TRUE(geomean.ratio);
  EXPECT_GT(*geomean.lo, 1.0);
  // Deterministic: the same seed gives the same interval.
  Comparison again = Compare(report.runs[0], *report.baseline);
  EXPECT_EQ(*again.deltas[0].lo, *correctness.lo);
}

TEST_F(ReportTest, OverlappingShardsCountEachRecordOnce) {
  // Two shard folders that overlap (a rerun wrote tasks 10-19 again), joined the way the merge job
  // joins them: the metrics are those of the records once each.
  const std::vector<dataset::Trajectory> all = SyntheticRun("a", 20, 3, 0.7, 1.2, 5);
  const std::vector<dataset::Trajectory> second(all.begin() + 30, all.end());
  std::vector<dataset::Trajectory> joined = all;
  joined.insert(joined.end(), second.begin(), second.end());
  RunReport once = Run("once", all);
  RunReport twice = Run("twice", joined);
  EXPECT_EQ(once.scan.records, 60);
  EXPECT_EQ(once.scan.duplicates, 0);
  EXPECT_EQ(twice.scan.records, 60);
  EXPECT_EQ(twice.scan.duplicates, 30);
  EXPECT_EQ(ToJson(twice.groups.front()), ToJson(once.groups.front()));
  ASSERT_EQ(twice.groups.size(), once.groups.size());
  for (size_t g = 0; g < once.groups.size(); ++g) EXPECT_EQ(ToJson(twice.groups[g]), ToJson(once.groups[g]));
  Report report;
  report.runs.push_back(twice);
  EXPECT_EQ(ToJson(report)["runs"][0]["read"]["duplicates"], 30);
  report.runs[0] = once;
  EXPECT_FALSE(ToJson(report)["runs"][0]["read"].contains("duplicates")) << "records without duplicates read as before";
}

TEST_F(ReportTest, OfRecordsSharingAnIdTheLastFinishedCounts) {
  testing::RecordSpec spec;
  spec.task = "kernelbench/level1/1_Task";
  spec.correct = false;
  dataset::Trajectory failed = testing::MakeRecord(spec);  // started 2025-01-01T00:00:00Z, ran 0 s
  spec.correct = true;
  dataset::Trajectory rerun = testing::MakeRecord(spec);
  rerun.created_at = "2025-01-01T00:00:00Z";
  rerun.wall_s = 30;  // same start, finished later
  for (const auto& order : {std::vector{failed, rerun}, std::vector{rerun, failed}}) {
    RunReport run = Run("order", order);
    EXPECT_EQ(run.scan.records, 1);
    EXPECT_EQ(run.scan.duplicates, 1);
    EXPECT_EQ(run.groups.front().correct, 1) << "the later-finished record is kept, whatever the order";
  }
  // On a tie the record read last is kept.
  rerun.wall_s = 0;
  EXPECT_EQ(Run("tie", {failed, rerun}).groups.front().correct, 1);
  EXPECT_EQ(Run("tie", {rerun, failed}).groups.front().correct, 0);
}

TEST_F(ReportTest, JsonFiguresHaveThePrecisionOfTheirSamples) {
  std::vector<dataset::Trajectory> records;
  for (int i = 0; i < 3; ++i) {
    testing::RecordSpec spec;
    spec.task = "kernelbench/level1/" + std::to_string(i) + "_Task";
    spec.speedup = 1.1;
    spec.sol_pct = 12.3;
    records.push_back(testing::MakeRecord(spec));
  }
  Report report;
  report.runs.push_back(Run("a", records));
  nlohmann::json json = ToJson(report);
  const nlohmann::json& all = json["runs"][0]["groups"][0];
  EXPECT_EQ(all["speedup_quantiles"]["p50"].get<double>(), 1.1);
  EXPECT_EQ(all["median_sol_pct"].get<double>(), 12.3);
  std::string text = json.dump();
  EXPECT_EQ(text.find("1.100000023841858"), std::string::npos) << "float32 widened to double";
  EXPECT_NE(text.find("\"p50\":1.1,"), std::string::npos) << text.substr(0, 800);
}

TEST_F(ReportTest, TableAndJsonCarryTheMetrics) {
  Report report = TeacherAndStudent();
  std::string table = RenderTable(report, /*per_task=*/true);
  const GroupMetrics& all = report.runs[0].groups[0];
  EXPECT_NE(table.find("run teacher: " + std::to_string(all.episodes) + " episodes of 60 tasks"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find(Percent(all.correctness)), std::string::npos);
  EXPECT_NE(table.find(Times(all.geomean_speedup)), std::string::npos);
  EXPECT_NE(table.find("pass@1"), std::string::npos);
  EXPECT_NE(table.find("level 3"), std::string::npos);
  EXPECT_NE(table.find("kernelbench/level1/0_Task"), std::string::npos) << "per-task rows";
  EXPECT_NE(table.find("teacher against the baseline student"), std::string::npos);
  EXPECT_NE(table.find("harness errors: " + std::to_string(all.unjudged)), std::string::npos);

  nlohmann::json j = ToJson(report);
  EXPECT_EQ(j["schema"], "kforge.report/1");
  EXPECT_EQ(j["runs"][0]["groups"][0]["episodes"], all.episodes);
  EXPECT_EQ(j["runs"][0]["groups"][0]["fast_p"]["fast_1.5"], *all.fast_p[2]);
  EXPECT_EQ(j["runs"][0]["groups"][0]["pass_at_k"].size(), 1u) << "4 samples per task: pass@1 only";
  EXPECT_EQ(j["comparisons"][0]["deltas"][0]["metric"], "correctness");
  EXPECT_TRUE(j["comparisons"][0]["deltas"].back().contains("ratio"));
  EXPECT_EQ(j["runs"][0]["tasks"].size(), 60u);
}

TEST_F(ReportTest, KernelsMostlyInLibraryOpsAreShownWithFastPWithoutThem) {
  std::vector<dataset::Trajectory> records;
  testing::RecordSpec spec;
  spec.speedup = 2.5;
  records.push_back(testing::MakeRecord(spec));  // own kernels
  spec.sample = 1;
  spec.ops_fraction = 0.3;
  records.push_back(testing::MakeRecord(spec));  // some library ops, its speed mostly its own
  spec.sample = 2;
  spec.ops_fraction = 0.96;
  spec.speedup = 1.8;
  records.push_back(testing::MakeRecord(spec));  // PyTorch again
  spec.sample = 3;
  spec.correct = false;
  records.push_back(testing::MakeRecord(spec));
  Report report;
  report.runs.push_back(Run("mixed", records));
  const GroupMetrics& all = report.runs[0].groups[0];
  EXPECT_EQ(all.mostly_library_ops, 1);
  EXPECT_DOUBLE_EQ(*all.fast_p[1], 0.75);
  EXPECT_DOUBLE_EQ(*all.fast_p_without_library_ops[1], 0.5);

  std::string table = RenderTable(report, /*per_task=*/false);
  EXPECT_NE(
      table.find("library ops: 1 of 3 correct kernels spent over 90% of their GPU time in them; "
                 "fast_p without their speedups: fast_0 50.0%  fast_1 50.0%  fast_1.5 50.0%  fast_2 50.0%"),
      std::string::npos)
      << table;
  nlohmann::json group = ToJson(report)["runs"][0]["groups"][0];
  EXPECT_EQ(group["mostly_library_ops"], 1);
  EXPECT_EQ(group["fast_p"]["fast_1"], 0.75);
  EXPECT_EQ(group["fast_p_without_library_ops"]["fast_1"], 0.5);
  EXPECT_EQ(ToJson(report)["runs"][0]["tasks"][0]["mostly_library_ops"], 1);
  std::string html = RenderHtml(report);
  EXPECT_NE(html.find("<th>mostly library ops</th>"), std::string::npos);
  EXPECT_NE(html.find("more than 90% of their GPU time"), std::string::npos);

  Report plain = TeacherAndStudent();
  EXPECT_NE(RenderTable(plain, false).find("library ops: 0 of "), std::string::npos);
  EXPECT_EQ(RenderTable(plain, false).find("fast_p without"), std::string::npos) << "nothing to leave out";
}

TEST_F(ReportTest, HtmlIsOneSelfContainedPage) {
  std::string html = RenderHtml(TeacherAndStudent());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  int svgs = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) ++svgs;
  EXPECT_EQ(svgs, 5) << "speedup distribution, fast_p, turns, correctness and fast_1 per level";
  for (const char* external : {"<script", "src=", "href=", "@import", "url("})
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  EXPECT_NE(html.find("teacher against student"), std::string::npos);
  EXPECT_NE(html.find("student (baseline)"), std::string::npos);
  // Readable at 1280 px: plots shrink with the page, wide tables scroll inside their box.
  EXPECT_NE(html.find("max-width: 1240px"), std::string::npos);
  EXPECT_NE(html.find(".plots svg { width: 100%; height: auto; }"), std::string::npos);
  EXPECT_NE(html.find("overflow-x: auto"), std::string::npos);
}

// Another module's sections (a skill eval's) follow the metrics and the comparison, before the plots,
// in order, each distinct CSS once in the page's style.
TEST_F(ReportTest, SectionsFollowTheMetricsWithTheirCss) {
  const std::string css = ".extra .yes { color: #070; }\n";
  std::string html =
      RenderHtml(TeacherAndStudent(), {{"<section class=\"extra\"><h2>First</h2></section>\n", css},
                                       {"<section class=\"extra\"><h2>Second</h2></section>\n", css}});
  const size_t style_end = html.find("</style>");
  ASSERT_NE(html.find(css), std::string::npos);
  EXPECT_LT(html.find(css), style_end);
  EXPECT_EQ(html.find(css, html.find(css) + 1), std::string::npos) << "once";
  EXPECT_LT(html.find("<h2>Against the baseline</h2>"), html.find("<h2>First</h2>"));
  EXPECT_LT(html.find("<h2>First</h2>"), html.find("<h2>Second</h2>"));
  EXPECT_LT(html.find("<h2>Second</h2>"), html.find("<h2>Plots</h2>"));
  EXPECT_EQ(RenderHtml(TeacherAndStudent()).find("<section"), std::string::npos) << "none unless given";
}

TEST_F(ReportTest, LegendsSitAboveThePlotArea) {
  std::string html = RenderHtml(TeacherAndStudent());
  // The plot area starts at the top of the y axis: <line x1="64.0" x2="64.0" y1="TOP" ...>.
  static const std::regex kAxis(R"re(<line x1="64\.0" x2="64\.0" y1="([0-9.]+)")re");
  static const std::regex kSwatch(R"re(<rect x="[0-9.]+" y="([0-9.]+)" width="12" height="10")re");
  std::smatch axis;
  ASSERT_TRUE(std::regex_search(html, axis, kAxis));
  const double top = std::stod(axis[1].str());
  int swatches = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kSwatch); it != std::sregex_iterator();
       ++it) {
    EXPECT_LE(std::stod((*it)[1].str()) + 10, top) << "a legend entry inside the plot area";
    ++swatches;
  }
  EXPECT_GE(swatches, 2);
}

// Renders the page with headless Chromium into the build folder, for a person to look at.
TEST_F(ReportTest, HtmlRendersInChromium) {
  std::string chromium;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
    if (fakes::RunCommand(std::string("command -v ") + name + " >/dev/null 2>&1").exit_code == 0) {
      chromium = name;
      break;
    }
  if (chromium.empty()) GTEST_SKIP() << "no chromium binary (apt-get install -y chromium)";
  fs::path out = fs::path(KFORGE_BINARY).parent_path();
  fs::path html = out / "report_html_test.html", png = out / "report_html_test.png";
  ASSERT_TRUE(common::WriteFileAtomic(html, RenderHtml(TeacherAndStudent())).ok());
  fs::remove(png);
  fakes::CommandResult run = fakes::RunCommand(
      chromium +
      " --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2400 --screenshot=" +
      png.string() + " file://" + html.string() + " 2>&1");
  ASSERT_TRUE(fs::exists(png)) << run.out;
  EXPECT_GT(fs::file_size(png), 50000u) << "a page with plots, not a blank one";
  std::ifstream in(png, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  std::printf("report page: %s\n", png.c_str());
}

}  // namespace
}  // namespace kforge::exporter
