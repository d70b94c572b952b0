// The NVRTC helper's wire: what one side writes, the other reads back, and a malformed message is
// an error naming the field.
#include "cuda/nvrtc_wire.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kforge::cuda::internal {
namespace {

using Kind = NvrtcOutcome::Kind;

NvrtcOutcome Outcome(Kind kind, std::string log, std::string cubin = "") {
  NvrtcOutcome outcome;
  outcome.kind = kind;
  outcome.log = std::move(log);
  outcome.cubin = std::move(cubin);
  return outcome;
}

TEST(NvrtcWireTest, AJobReadsBackAsWritten) {
  NvrtcJob job;
  job.source = "extern \"C\" __global__ void k() {}\n";
  job.name = "candidate.cu";
  job.options = {"--std=c++17", "-arch=sm_90"};
  job.headers = {{"cuda_fp16.h", "// shim\n"}, {"kforge.h", "#pragma once\n"}};
  job.name_expressions = {"k", "&f<float>"};
  const NvrtcRequest read = ParseNvrtcJobFrame(NvrtcJobFrame(job, std::chrono::milliseconds(2500)));
  EXPECT_EQ(read.job.source, job.source);
  EXPECT_EQ(read.job.name, "candidate.cu");
  EXPECT_EQ(read.job.options, job.options);
  ASSERT_EQ(read.job.headers.size(), 2u);
  EXPECT_EQ(read.job.headers[1].name, "kforge.h");
  EXPECT_EQ(read.job.headers[1].text, "#pragma once\n");
  EXPECT_EQ(read.job.name_expressions, job.name_expressions);
  EXPECT_EQ(read.budget.count(), 2500);
  // A deadline already past goes out as a budget of 0.
  EXPECT_EQ(ParseNvrtcJobFrame(NvrtcJobFrame(job, std::chrono::milliseconds(-40))).budget.count(), 0);
}

TEST(NvrtcWireTest, ASourceThatIsNotUtf8IsNotSentAltered) {
  NvrtcJob job;
  job.source = "int x = 1; // \xff\xfe";
  job.name = "candidate.cu";
  EXPECT_ANY_THROW(NvrtcJobFrame(job, std::chrono::milliseconds(1)));
}

TEST(NvrtcWireTest, EveryAnsweredKindReadsBack) {
  for (Kind kind : {Kind::kSuccess, Kind::kCompileError, Kind::kInvalidOption, Kind::kCancelled,
                    Kind::kOutOfMemory}) {
    NvrtcOutcome sent = Outcome(kind, "line 1: error\n");
    if (kind == Kind::kSuccess) {
      sent.cubin = std::string("\x7f" "ELF\0\x01\xff", 7);
      sent.lowered_names = {{"&f<float>", "_Z1fIfEvv"}};
      sent.opened = std::vector<std::string>{"cuda_fp16.h"};
    }
    const NvrtcOutcome read = ParseNvrtcOutcomeFrame(NvrtcOutcomeFrame(sent));
    EXPECT_EQ(read.kind, kind);
    EXPECT_EQ(read.log, sent.log);
    EXPECT_EQ(read.cubin, sent.cubin);
    EXPECT_EQ(read.lowered_names, sent.lowered_names);
    EXPECT_EQ(read.opened, sent.opened);
  }
}

TEST(NvrtcWireTest, AnUnreadTraceStaysUnknown) {
  const NvrtcOutcome read = ParseNvrtcOutcomeFrame(NvrtcOutcomeFrame(Outcome(Kind::kSuccess, "", "c")));
  EXPECT_FALSE(read.opened.has_value());
}

TEST(NvrtcWireTest, ALogThatIsNotUtf8IsReplacedNotRefused) {
  const NvrtcOutcome read =
      ParseNvrtcOutcomeFrame(NvrtcOutcomeFrame(Outcome(Kind::kCompileError, "bad \xff byte")));
  EXPECT_EQ(read.log, "bad \xEF\xBF\xBD byte");
}

std::string MessageOf(const std::string& frame) {
  try {
    ParseNvrtcOutcomeFrame(frame);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(NvrtcWireTest, FailuresAndMalformedAnswersAreErrorsNamingWhat) {
  EXPECT_EQ(MessageOf(NvrtcFailureFrame("nvrtcCreateProgram: out of resources")),
            "NVRTC helper: nvrtcCreateProgram: out of resources");
  EXPECT_EQ(MessageOf("[1, 2]"), "NVRTC helper: malformed answer: not a JSON object");
  EXPECT_EQ(MessageOf("{\"result\": \"success\"}"), "NVRTC helper: malformed answer: field \"log\"");
  EXPECT_EQ(MessageOf("{\"result\": \"exploded\", \"log\": \"\"}"), "NVRTC helper: unknown result \"exploded\"");
  // kDied is the parent's own conclusion; a helper cannot claim it.
  EXPECT_EQ(MessageOf("{\"result\": \"died\", \"log\": \"\"}"), "NVRTC helper: unknown result \"died\"");
  EXPECT_EQ(MessageOf("{\"result\": \"success\", \"log\": \"\", \"cubin_b64\": \"***\"}"),
            "NVRTC helper: bad CUBIN encoding");
  EXPECT_THROW(ParseNvrtcJobFrame("{\"source\": \"\", \"name\": 3}"), std::runtime_error);
}

TEST(NvrtcWireTest, OnlyAHelperOfThisWireIsGreeted) {
  EXPECT_TRUE(IsNvrtcHello(NvrtcHelloFrame("13.0")));
  EXPECT_FALSE(IsNvrtcHello("{\"schema\": \"kforge.nvrtc/0\"}"));
  EXPECT_FALSE(IsNvrtcHello("{\"schema\": 1}"));
  EXPECT_FALSE(IsNvrtcHello("not json"));
}

}  // namespace
}  // namespace kforge::cuda::internal
