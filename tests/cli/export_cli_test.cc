// `kforge export` end to end: usage errors are one line and exit 2 before anything is written,
// malformed records are named and skipped, a torn last line is only counted, nothing is written
// outside --out, and an export that keeps nothing exits 1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "export/record_builder.h"
#include "fakes/command.h"

namespace {

namespace fs = std::filesystem;
using kforge::testing::MakeRecord;
using kforge::testing::RecordSpec;

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class ExportCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kforge_export_cli_" + std::to_string(getpid()) + "_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_ / "run");
    std::vector<kforge::dataset::Trajectory> records;
    RecordSpec spec;
    records.push_back(MakeRecord(spec));
    spec.task = "kernelbench/level2/7_Other";
    spec.level = 2;
    spec.source = std::string(kforge::testing::kReluSource) + "__device__ int other;\n";
    records.push_back(MakeRecord(spec));
    spec.correct = false;
    spec.sample = 1;
    records.push_back(MakeRecord(spec));
    kforge::testing::WriteRecords(
        (dir_ / "run/trajectories.jsonl").string(), records,
        "{\"schema\": \"kforge.trajectory/2\", \"id\": \"x\"}\n{\"schema\": \"kforge.tra");
  }
  void TearDown() override { fs::remove_all(dir_); }

  CliRun Export(const std::string& args) {
    fs::path err = dir_ / "stderr.txt";
    kforge::fakes::CommandResult result = kforge::fakes::RunCommand(
        "cd " + dir_.string() + " && " + KFORGE_BINARY + " export " + args + " 2>" + err.string());
    std::ifstream in(err);
    return {result.exit_code, result.out, std::string(std::istreambuf_iterator<char>(in), {})};
  }
  std::set<std::string> Files() {
    std::set<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      if (e.path().filename() != "stderr.txt") files.insert(fs::relative(e.path(), dir_).string());
    return files;
  }
  fs::path dir_;
};

TEST_F(ExportCliTest, UsageErrorsAreOneLineAndWriteNothing) {
  fs::create_directories(dir_ / "full");
  std::ofstream(dir_ / "full/keep.txt") << "x";
  fs::create_directories(dir_ / "empty_dir");
  struct Case {
    std::string args;
    std::string message;
  };
  const Case cases[] = {
      {"missing --out out", "missing: no such run folder or file"},
      {"empty_dir --out out", "a folder without trajectories.jsonl"},
      {"run --out out --levels 1,x", "--levels: \"x\" is not a level number"},
      {"run --out out --split val=2", "--split: \"val=2\": the fraction must be a number in (0, 1)"},
      {"run --out out --format kernelbench --split val=0.1", "--split applies to the JSON lines formats"},
      {"run --out out --balance-cap 3", "--balance-cap needs --balance"},
      {"run --out full", "--out full: not empty (--force replaces a previous export)"},
      {"run --out run/trajectories.jsonl --force", "a file, not a folder"},
      {"run --out out --format kernelbench --tasks nowhere", "--tasks nowhere: no such folder"},
      {"run --out out --holdout nowhere.txt", "--holdout nowhere.txt: no such file or folder"},
      {"run --out out --format csv", "--format"},
      {"run --out out --format trajectory --file-format parquet",
       "--file-format parquet takes messages, pairs, turns or preference rows, not trajectory"},
      {"run --out out --tool-arguments json", "--tool-arguments"},
      {"run --out out --format preference --near-dup 0.9", "--near-dup selects records; --format preference pairs"},
      {"run --out out --near-dup 2", "--near-dup"},
      {"run", "--out is required"},
  };
  std::set<std::string> before = Files();
  for (const Case& c : cases) {
    CliRun run = Export(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.err;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << c.args << "\n" << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << c.args << "\n" << run.err;
    EXPECT_EQ(Files(), before) << c.args << ": nothing is written on a usage error";
  }
}

TEST_F(ExportCliTest, ExportsNamesMalformedLinesAndCountsTheTornOne) {
  CliRun run = Export("run --out data --split val=0.5 --levels 1,2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("kforge export: skipped run/trajectories.jsonl:4: "), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("trajectories.jsonl:5"), std::string::npos) << "a torn last line is not an error";
  EXPECT_NE(run.err.find("3 records read from 1 file (1 malformed, 1 torn lines skipped)"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("2 messages records written to data"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("left out: 1 incorrect"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty());
  for (const std::string& f : Files())
    EXPECT_TRUE(f.rfind("data", 0) == 0 || f.rfind("run", 0) == 0) << f << " was written outside --out";
  EXPECT_TRUE(fs::exists(dir_ / "data/README.md"));
  EXPECT_TRUE(fs::exists(dir_ / "data/stats.json"));

  CliRun again = Export("run --out data");
  EXPECT_EQ(again.exit_code, 2) << "refuses to overwrite";
  EXPECT_EQ(Export("run --out data --force --format pairs").exit_code, 0);
}

TEST_F(ExportCliTest, ARunGivenTwiceIsExportedOnceAndStderrSaysWhatWasDropped) {
  CliRun once = Export("run --out once");
  ASSERT_EQ(once.exit_code, 0) << once.err;
  EXPECT_EQ(once.err.find("duplicate"), std::string::npos) << once.err;
  CliRun twice = Export("run run/trajectories.jsonl --out twice");
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_NE(twice.err.find("3 records read from 2 files"), std::string::npos) << twice.err;
  EXPECT_NE(twice.err.find("export: 3 duplicate records dropped"), std::string::npos) << twice.err;
  auto text = [this](const char* name) {
    std::ifstream in(dir_ / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_FALSE(text("once/train.jsonl").empty());
  EXPECT_EQ(text("twice/train.jsonl"), text("once/train.jsonl"));
}

TEST_F(ExportCliTest, MaxOpsFractionLeavesOutKernelsThatAreMostlyLibraryOps) {
  fs::create_directories(dir_ / "ops");
  RecordSpec own, some, library;
  some.sample = 1;
  some.ops_fraction = 0.4;
  some.source = std::string(kforge::testing::kReluSource) + "__device__ int some;\n";
  library.sample = 2;
  library.ops_fraction = 0.97;
  library.source = std::string(kforge::testing::kReluSource) + "__device__ int library;\n";
  kforge::testing::WriteRecords((dir_ / "ops/trajectories.jsonl").string(),
                                {MakeRecord(own), MakeRecord(some), MakeRecord(library)});
  CliRun run = Export("ops --out data --format trajectory --max-ops-fraction 0.9");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("2 trajectory records written"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("left out: 1 max_ops_fraction"), std::string::npos) << run.err;
  nlohmann::json stats = nlohmann::json::parse(std::ifstream(dir_ / "data/stats.json"));
  EXPECT_EQ(stats["left_out"]["max_ops_fraction"], 1);
  EXPECT_EQ(stats["options"]["max_ops_fraction"], 0.9);
  std::ifstream rows(dir_ / "data/train.jsonl");
  for (std::string line; std::getline(rows, line);)
    EXPECT_NE(nlohmann::json::parse(line)["sample"], 2) << "the record that is PyTorch again is left out";

  run = Export("ops --out all --format trajectory");
  EXPECT_NE(run.err.find("3 trajectory records written"), std::string::npos) << "kept without the flag\n"
                                                                             << run.err;
  run = Export("ops --out none --max-ops-fraction 1.5");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("--max-ops-fraction"), std::string::npos) << run.err;
}

TEST_F(ExportCliTest, NothingKeptExitsOne) {
  CliRun run = Export("run --out data --min-speedup 100");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("0 messages records written"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("2 min_speedup"), std::string::npos) << run.err;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// An export never writes over what it reads: the input inside --out (the run folder itself, with a
// split named like the input) is refused before anything is written, with or without --force.
TEST_F(ExportCliTest, ForceNeverTruncatesItsInput) {
  const std::string before = Read(dir_ / "run/trajectories.jsonl");
  for (const char* args : {"run --out run --force --split trajectories=0.5",
                           "run/trajectories.jsonl --out run --force --format trajectory"}) {
    CliRun run = Export(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.err;
    EXPECT_NE(run.err.find("holds the input run/trajectories.jsonl (as trajectories.jsonl)"), std::string::npos)
        << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(Read(dir_ / "run/trajectories.jsonl"), before) << args;
  }
  // Another name for the same file (a hard link in a previous export's folder) is the same input.
  ASSERT_EQ(Export("run --out data").exit_code, 0);
  fs::create_hard_link(dir_ / "run/trajectories.jsonl", dir_ / "data/linked.jsonl");
  CliRun linked = Export("data/linked.jsonl --out data --force");
  EXPECT_EQ(linked.exit_code, 2) << linked.err;
  EXPECT_NE(linked.err.find("(as linked.jsonl)"), std::string::npos) << linked.err;
  EXPECT_EQ(Read(dir_ / "run/trajectories.jsonl"), before);
}

// --force replaces a previous export's files and nothing else: a user's README.md or train.jsonl in
// the folder is refused by name, and files of other names are left alone.
TEST_F(ExportCliTest, ForceRemovesOnlyWhatTheManifestLists) {
  fs::create_directories(dir_ / "mine");
  std::ofstream(dir_ / "mine/README.md") << "my notes";
  CliRun run = Export("run --out mine --force");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("README.md is not from a previous export"), std::string::npos) << run.err;
  EXPECT_EQ(Read(dir_ / "mine/README.md"), "my notes");

  ASSERT_EQ(Export("run --out data --split val=0.5").exit_code, 0);
  std::ofstream(dir_ / "data/notes.txt") << "keep me";
  ASSERT_EQ(Export("run --out data --force").exit_code, 0) << "a previous export is replaced";
  EXPECT_EQ(Read(dir_ / "data/notes.txt"), "keep me");
  EXPECT_FALSE(fs::exists(dir_ / "data/val.jsonl")) << "the previous export's split is gone";
  // A train.jsonl the manifest does not list (a previous export's stats.json without it).
  ASSERT_EQ(Export("run --out data2").exit_code, 0);
  nlohmann::json manifest = nlohmann::json::parse(Read(dir_ / "data2/stats.json"));
  nlohmann::json listed = nlohmann::json::array();
  for (const nlohmann::json& file : manifest["files"])
    if (file != "train.jsonl") listed.push_back(file);
  manifest["files"] = listed;
  std::ofstream(dir_ / "data2/stats.json") << manifest.dump();
  std::ofstream(dir_ / "data2/train.jsonl") << "user data";
  CliRun refused = Export("run --out data2 --force");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("train.jsonl is not from a previous export"), std::string::npos) << refused.err;
  EXPECT_EQ(Read(dir_ / "data2/train.jsonl"), "user data");
}

// A link planted in the output folder is never followed.
TEST_F(ExportCliTest, APlantedLinkIsNotFollowed) {
  std::ofstream(dir_ / "victim.txt") << "precious";
  ASSERT_EQ(Export("run --out data --format trajectory").exit_code, 0);
  // The previous export listed train.jsonl; it is now a link to a file outside.
  fs::remove(dir_ / "data/train.jsonl");
  fs::create_symlink(dir_ / "victim.txt", dir_ / "data/train.jsonl");
  fs::remove(dir_ / "data/README.md");
  fs::create_symlink(dir_ / "victim.txt", dir_ / "data/README.md");
  CliRun run = Export("run --out data --force --format trajectory");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Read(dir_ / "victim.txt"), "precious");
  EXPECT_FALSE(fs::is_symlink(dir_ / "data/train.jsonl"));
  EXPECT_FALSE(fs::is_symlink(dir_ / "data/README.md"));
  EXPECT_FALSE(Read(dir_ / "data/train.jsonl").empty());
}

// A record with a field of the wrong type (a numeric solution source) is skipped with FILE:LINE.
TEST_F(ExportCliTest, ARecordWithAFieldOfTheWrongTypeIsSkippedWithItsLine) {
  fs::create_directories(dir_ / "bad");
  RecordSpec spec;
  nlohmann::json good = kforge::dataset::ToJson(MakeRecord(spec));
  nlohmann::json bad = good;
  bad["id"] = "bad/1";
  for (nlohmann::json& attempt : bad["attempts"]) attempt["solution"]["source"] = 42;
  std::ofstream(dir_ / "bad/trajectories.jsonl") << bad.dump() << "\n" << good.dump() << "\n";
  for (const char* extra : {"", " --near-dup 0.9", " --format trajectory"}) {
    fs::remove_all(dir_ / "out");
    CliRun run = Export(std::string("bad --out out") + extra);
    EXPECT_EQ(run.exit_code, 0) << extra << "\n" << run.err;
    EXPECT_NE(run.err.find("bad/trajectories.jsonl:1: "), std::string::npos) << extra << "\n" << run.err;
    EXPECT_NE(run.err.find("1 "), std::string::npos);
  }
}

// A compile-only run has nothing correct: the summary says how to export it anyway.
TEST_F(ExportCliTest, NothingCorrectSuggestsIncludeIncorrect) {
  fs::create_directories(dir_ / "compiled");
  RecordSpec spec;
  spec.correct = false;
  kforge::testing::WriteRecords((dir_ / "compiled/trajectories.jsonl").string(), {MakeRecord(spec)});
  CliRun run = Export("compiled --out data");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("--include-incorrect exports those records too"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(dir_ / "data")) << "an empty export leaves no card (nor a folder) behind";
  CliRun again = Export("compiled --out data --include-incorrect");
  EXPECT_EQ(again.exit_code, 0) << "the suggested rerun needs no --force: " << again.err;
}

// An export that fails half way removes what it wrote: no torn data file blocks the rerun's --force.
TEST_F(ExportCliTest, AFailedExportLeavesNoTornFileBehind) {
  // A Parquet writer (python SCRIPT --features F --in ROWS --out OUT) that dies half way, then one that
  // works.
  std::ofstream(dir_ / "torn.sh") << "#!/bin/sh\necho torn > \"$7\"; exit 1\n";
  std::ofstream(dir_ / "copy.sh") << "#!/bin/sh\ncp \"$5\" \"$7\"\n";
  for (const char* script : {"torn.sh", "copy.sh"})
    fs::permissions(dir_ / script, fs::perms::owner_all, fs::perm_options::replace);
  CliRun failed = Export("run --out data --file-format parquet --python ./torn.sh");
  EXPECT_NE(failed.exit_code, 0) << failed.err;
  EXPECT_FALSE(fs::exists(dir_ / "data/train.parquet")) << "a torn data file was left";
  CliRun again = Export("run --out data --file-format parquet --python ./copy.sh --force");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(fs::exists(dir_ / "data/train.parquet"));
}

// What a record names (a teacher, a tag) reaches the card as text, never as markup.
TEST_F(ExportCliTest, TheCardShowsTeacherNamesAndTagsAsText) {
  fs::create_directories(dir_ / "hostile");
  RecordSpec spec;
  kforge::dataset::Trajectory record = MakeRecord(spec);
  record.teacher.model = "m<script>alert(1)</script>|x\n# heading";
  record.task.tags = {"[click](http://evil)", "rlo\xe2\x80\xae" "evil"};
  kforge::testing::WriteRecords((dir_ / "hostile/trajectories.jsonl").string(), {record});
  CliRun run = Export("hostile --out data");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream card(dir_ / "data/README.md");
  const std::string text(std::istreambuf_iterator<char>(card), {});
  EXPECT_EQ(text.find("<script>"), std::string::npos) << text;
  EXPECT_NE(text.find("m&lt;script&gt;alert(1)&lt;/script&gt;\\|x # heading"), std::string::npos) << text;
  EXPECT_NE(text.find("\\[click\\](http://evil)"), std::string::npos) << text;
  EXPECT_EQ(text.find("\xe2\x80\xae"), std::string::npos) << "a bidi control reached the card";
}

}  // namespace

TEST_F(ExportCliTest, AnEndlessInputIsAnErrorNotAHang) {
  const std::set<std::string> before = Files();
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"/dev/zero --out out", "/dev/zero:1: a line longer than 64 MiB"},
           {"run --holdout /dev/zero --out out", "--holdout /dev/zero:1: a line longer than 4096 bytes"}}) {
    const auto start = std::chrono::steady_clock::now();
    kforge::fakes::CommandResult run = kforge::fakes::RunCommand("cd " + dir_.string() + " && timeout 60 " +
                                                                 KFORGE_BINARY + " export " + args + " 2>&1");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out;
    EXPECT_NE(run.out.find(message), std::string::npos) << run.out;
    EXPECT_LT(seconds, 30) << args;
  }
  EXPECT_EQ(Files(), before) << "nothing written";
}
