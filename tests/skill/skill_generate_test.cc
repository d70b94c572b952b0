// `kforge generate --skill` end to end against a teacher on 127.0.0.1: the text protocol carries the
// skill's body in the system prompt, the tools protocol a catalog line and read_skill_file, whose
// hostile paths are refused; the skill's hash is in the run id and in every record. `kforge skill
// check` on the command line. Compile-only, so it runs without a GPU.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/http_server.h"
#include "fakes/task_root.h"
#include "skill/skill_folder.h"

namespace kforge::skill {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::SkillFolder;

const char* kRelu =
    "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n";
const json kPlan = {{"launches",
                     {{{"kernel", "relu"},
                       {"grid", {"cdiv(numel(x), 256)"}},
                       {"block", {256}},
                       {"args", {"x", "out0", "i64:numel(x)"}}}}}};

json AnthropicText(const std::string& text) {
  return {{"id", "msg_1"},
          {"type", "message"},
          {"role", "assistant"},
          {"model", "claude-test"},
          {"content", {{{"type", "text"}, {"text", text}}}},
          {"stop_reason", "end_turn"},
          {"usage", {{"input_tokens", 100}, {"output_tokens", 50}}}};
}

json OpenAiCalls(const json& calls) {
  json message = {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", calls}};
  return {{"id", "c1"},
          {"object", "chat.completion"},
          {"model", "gpt-test"},
          {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", "tool_calls"}}}},
          {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 50}}}};
}

json Call(const std::string& id, const std::string& name, const json& arguments) {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments.dump()}}}};
}

class SkillGenerateTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::remove_all(out_); }
  void TearDown() override { fs::remove_all(out_); }

  /// Runs generate; returns the exit code, stderr in err_.
  int Generate(const std::string& args, const fs::path& out) {
    const std::string err =
        fs::temp_directory_path().string() + "/kforge-skill-gen-" + std::to_string(getpid()) + ".stderr";
    int code = fakes::RunCommand("ANTHROPIC_API_KEY=sk-test " + std::string(KFORGE_BINARY) +
                                 " generate --tasks " + fakes::ShellQuote(tasks_.path()) +
                                 " --filter demo/relu --compile-only --no-probe "
                                 "--max-turns 2 --out " +
                                 fakes::ShellQuote(out) + " " + args + " 2>" + fakes::ShellQuote(err))
                   .exit_code;
    std::ifstream in(err);
    err_.assign(std::istreambuf_iterator<char>(in), {});
    fs::remove(err);
    return code;
  }

  std::vector<json> Records(const fs::path& out) {
    std::vector<json> records;
    std::ifstream in(out / "trajectories.jsonl");
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) records.push_back(json::parse(line));
    return records;
  }

  fakes::TaskRoot tasks_{{"demo"}};
  fs::path out_ =
      fs::temp_directory_path() / ("kforge-skill-gen-" + std::to_string(getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::string err_;
};

TEST_F(SkillGenerateTest, TextProtocolSendsTheBodyAndRecordsTheHash) {
  SkillFolder skill("softmax-rows");
  fakes::FakeHttpServer server([](const fakes::HttpExchange&) {
    return fakes::FakeReply::Json(
        200,
        AnthropicText("```cuda\n" + std::string(kRelu) + "```\n```json\n" + kPlan.dump() + "\n```\n").dump());
  });
  const std::string teacher = "--teacher anthropic --model claude-test --base-url " + server.url();
  ASSERT_EQ(Generate(teacher + " --skill " + fakes::ShellQuote(skill.dir()), out_ / "with"), 0) << err_;
  ASSERT_EQ(server.request_count(), 1);
  const json body = json::parse(server.requests()[0].body);
  const std::string system = body["system"].dump();
  EXPECT_NE(system.find("## Skill: softmax-rows"), std::string::npos) << system;
  EXPECT_NE(system.find("See [the kernel](references/softmax.cu)."), std::string::npos) << system;
  EXPECT_EQ(system.find("teacher: claude-test"), std::string::npos) << "the front matter is not the body";

  std::vector<json> records = Records(out_ / "with");
  ASSERT_EQ(records.size(), 1u);
  ASSERT_EQ(records[0]["skills"].size(), 1u);
  EXPECT_EQ(records[0]["skills"][0]["name"], "softmax-rows");
  const std::string hash = records[0]["skills"][0]["hash"];
  EXPECT_EQ(hash.substr(0, 7), "sha256:");
  json run = json::parse(std::ifstream(out_ / "with" / "run.json"));
  EXPECT_EQ(run["config"]["skills"][0]["hash"], hash);

  // Without the skill: no skill in the prompt, none in the record, another run id.
  ASSERT_EQ(Generate(teacher, out_ / "without"), 0) << err_;
  EXPECT_EQ(json::parse(server.requests()[1].body)["system"].dump().find("softmax-rows"), std::string::npos);
  std::vector<json> plain = Records(out_ / "without");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_FALSE(plain[0].contains("skills"));
  EXPECT_NE(plain[0]["run_id"], records[0]["run_id"]);

  // One changed byte of a reference is another skill: the run folder refuses it without --force.
  skill.Write("references/softmax.cu", std::string(test_support::kReferenceKernel) + "// v2\n");
  EXPECT_EQ(Generate(teacher + " --skill " + fakes::ShellQuote(skill.dir()), out_ / "with"), 2) << err_;
  EXPECT_NE(err_.find("--force"), std::string::npos) << err_;
}

TEST_F(SkillGenerateTest, ToolsProtocolServesSkillFilesAndRefusesEscapes) {
  SkillFolder skill("softmax-rows");
  std::ofstream(skill.root() / "secret.txt") << "TOP-SECRET-CONTENT";
  fakes::FakeHttpServer server([](const fakes::HttpExchange& ex) {
    json body = json::parse(ex.body);
    bool first = body["messages"].size() == 2;  // system and task
    if (first) {
      auto read = [](const std::string& id, const json& args) { return Call(id, "read_skill_file", args); };
      return fakes::FakeReply::Json(
          200, OpenAiCalls({read("r1", {{"skill", "softmax-rows"}, {"path", "references/softmax.cu"}}),
                            read("r2", {{"skill", "softmax-rows"}, {"path", "../secret.txt"}}),
                            read("r3", {{"skill", "softmax-rows"}, {"path", "references/../../secret.txt"}}),
                            read("r4", {{"skill", "softmax-rows"}, {"path", "/etc/passwd"}}),
                            read("r5", {{"skill", "softmax-rows"}, {"path", "scripts/verify.sh"}}),
                            read("r6", {{"skill", "other"}, {"path", "SKILL.md"}}),
                            read("r7", {{"path", "./SKILL.md"}})})
                   .dump());
    }
    json solution = kPlan;
    solution["source"] = kRelu;
    return fakes::FakeReply::Json(200, OpenAiCalls(json::array({Call("s1", "submit", solution)})).dump());
  });
  ASSERT_EQ(Generate("--protocol tools --teacher openai --model gpt-test --base-url " + server.url() +
                         "/v1 --skill " + fakes::ShellQuote(skill.dir()),
                     out_),
            0)
      << err_;
  ASSERT_EQ(server.request_count(), 2);
  const json first = json::parse(server.requests()[0].body);
  const std::string system = first["messages"][0]["content"];
  EXPECT_NE(system.find("- softmax-rows: Row softmax kernels"), std::string::npos) << system;
  EXPECT_EQ(system.find("See [the kernel]"), std::string::npos) << "tools: the body is read on demand";
  std::vector<std::string> tool_names;
  for (const json& tool : first["tools"]) tool_names.push_back(tool["function"]["name"]);
  EXPECT_EQ(tool_names, (std::vector<std::string>{"run", "submit", "read_skill_file"}));

  const json second = json::parse(server.requests()[1].body);
  std::map<std::string, std::string> results;
  for (const json& m : second["messages"])
    if (m["role"] == "tool") results[m["tool_call_id"]] = m["content"].get<std::string>();
  ASSERT_EQ(results.size(), 7u) << second.dump();
  EXPECT_EQ(results["r1"], test_support::kReferenceKernel);
  EXPECT_NE(results["r2"].find("leaves the skill"), std::string::npos) << results["r2"];
  EXPECT_NE(results["r3"].find("leaves the skill"), std::string::npos) << results["r3"];
  EXPECT_NE(results["r4"].find("is absolute"), std::string::npos) << results["r4"];
  EXPECT_NE(results["r5"].find("only SKILL.md and files under references/"), std::string::npos)
      << results["r5"];
  EXPECT_NE(results["r6"].find("no skill \"other\""), std::string::npos) << results["r6"];
  EXPECT_EQ(results["r7"], test_support::kSkillMd) << "one skill: the name may be left out";
  EXPECT_EQ(second.dump().find("TOP-SECRET-CONTENT"), std::string::npos);

  std::vector<json> records = Records(out_);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["outcome"]["stop"], "submitted")
      << records[0]["messages"].dump().substr(records[0]["messages"].dump().size() - 3000);
  ASSERT_EQ(records[0]["attempts"].size(), 1u) << "reads are not attempts";
  EXPECT_EQ(records[0]["skills"][0]["name"], "softmax-rows");
}

TEST_F(SkillGenerateTest, AnInvalidSkillIsOneLineAndNothingIsSent) {
  SkillFolder skill("softmax-rows", {{"SKILL.md", "---\nname: Softmax\ndescription: d\n---\n"}});
  fakes::FakeHttpServer server;
  EXPECT_EQ(Generate("--teacher anthropic --model m --base-url " + server.url() + " --skill " +
                         fakes::ShellQuote(skill.dir()),
                     out_),
            2);
  EXPECT_EQ(err_, "kforge generate: --skill: " + skill.dir().string() +
                      ": SKILL.md:2: name \"Softmax\" may hold only a-z, 0-9 and '-' (\"S\" is not)\n");
  EXPECT_EQ(server.request_count(), 0);
  EXPECT_FALSE(fs::exists(out_ / "run.json"));
}

TEST(SkillCheckCliTest, OkLinesForValidFoldersAndOneLinePerProblem) {
  SkillFolder good("softmax-rows");
  fakes::CommandResult ok =
      fakes::RunCommand(std::string(KFORGE_BINARY) + " skill check " + fakes::ShellQuote(good.dir()));
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_EQ(
      ok.out.rfind(
          "ok " + good.dir().string() + ": softmax-rows, 2 readable files, body about 13 tokens, sha256:", 0),
      0u)
      << ok.out;
  good.Write("SKILL.md",
             "---\nname: softmax-rows\nlicense: MIT\nversion: 1\n---\nSee [x](references/none.md)\n");
  fakes::CommandResult bad =
      fakes::RunCommand(std::string(KFORGE_BINARY) + " skill check " + fakes::ShellQuote(good.dir()));
  EXPECT_EQ(bad.exit_code, 1);
  const std::string prefix = "invalid " + good.dir().string() + ": ";
  EXPECT_EQ(bad.out,
            prefix +
                "SKILL.md:4: version: not a field of the Agent Skills specification (name, description, "
                "license, compatibility, metadata, allowed-tools)\n" +
                prefix + "SKILL.md: description: missing (required)\n" + prefix +
                "SKILL.md:6: links to \"references/none.md\", which is not a file of the skill\n");
}

}  // namespace
}  // namespace kforge::skill
