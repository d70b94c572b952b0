// The chat form and its JSON forms: chat, record (written back byte for byte) and TRL row.
#include "kforge/common/chat.h"

#include <algorithm>
#include <iterator>

#include <gtest/gtest.h>

namespace kforge::common {
namespace {

using nlohmann::json;

TEST(ChatJsonTest, MessagesRoundTrip) {
  std::vector<Message> messages = {
      Message::System("be brief"),
      Message::User("write relu"),
      Message::Assistant("", {ToolCall{"call_1", "submit", json{{"source", "x"}}}}),
      Message::ToolResult("call_1", "compile error", /*is_error=*/true),
  };
  json j = json::array();
  for (const Message& m : messages) j.push_back(MessageToJson(m));
  StatusOr<std::vector<Message>> back = MessagesFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 4u);
  EXPECT_EQ((*back)[0].role, Role::kSystem);
  EXPECT_EQ((*back)[2].tool_calls.at(0).name, "submit");
  EXPECT_EQ((*back)[2].tool_calls.at(0).arguments["source"], "x");
  EXPECT_EQ((*back)[3].tool_call_id, "call_1");
  EXPECT_TRUE((*back)[3].is_error);
  EXPECT_EQ(j[2]["tool_calls"][0]["type"], "function");
  EXPECT_EQ(j[2]["tool_calls"][0]["function"]["name"], "submit");
}

TEST(ChatJsonTest, AcceptsOpenAiMessages) {
  json j = json::parse(R"([
    {"role": "assistant", "content": null,
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
    {"role": "assistant", "content": null,
     "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{not json"}}]},
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
  ])");
  StatusOr<std::vector<Message>> m = MessagesFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)[0].tool_calls[0].arguments["a"], 1);
  EXPECT_EQ((*m)[1].tool_calls[0].arguments, json("{not json"));
  EXPECT_EQ((*m)[2].content, "ab");
}

TEST(ChatJsonTest, ErrorsNameThePath) {
  struct Case {
    const char* json;
    const char* expected;
  };
  const Case cases[] = {
      {R"([{"role": "robot", "content": "x"}])", "messages[0]: role: unknown role \"robot\""},
      {R"([{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}])",
       "messages[1]: tool_call_id"},
      {R"([{"role": "assistant", "tool_calls": [{"id": "c"}]}])", "messages[0]: tool_calls[0].function.name"},
  };
  for (const Case& c : cases) {
    StatusOr<std::vector<Message>> m = MessagesFromJson(json::parse(c.json));
    ASSERT_FALSE(m.ok()) << c.json;
    EXPECT_NE(m.status().message().find(c.expected), std::string::npos) << m.status().message();
  }
}

TEST(ChatJsonTest, ThinkingBlocksMalformedArgumentsAndToolErrorsRoundTrip) {
  Message assistant = Message::Assistant("Here.", {ToolCall{"call_1", "run", json("{\"source\": \"x")}});
  assistant.reasoning = "Try a grid-stride loop.";
  assistant.blocks = {{ContentBlock::Type::kThinking, "Try a grid-stride loop.", "sig==", "", ""},
                      {ContentBlock::Type::kRedactedThinking, "", "", "opaque", ""},
                      {ContentBlock::Type::kText, "Here.", "", "", ""},
                      {ContentBlock::Type::kToolUse, "", "", "", "call_1"}};
  const Message result = Message::ToolResult("call_1", "compile error", /*is_error=*/true);

  const json a = MessageToJson(assistant);
  EXPECT_EQ(
      a.dump(),
      R"({"blocks":[{"signature":"sig==","thinking":"Try a grid-stride loop.","type":"thinking"},)"
      R"({"data":"opaque","type":"redacted_thinking"},{"text":"Here.","type":"text"},)"
      R"({"id":"call_1","type":"tool_use"}],"content":"Here.","reasoning_content":"Try a grid-stride loop.",)"
      R"("role":"assistant","tool_calls":[{"function":{"arguments":"{\"source\": \"x","name":"run"},)"
      R"("id":"call_1","type":"function"}]})");
  const json r = MessageToJson(result);
  EXPECT_EQ(r.dump(), R"({"content":"compile error","is_error":true,"role":"tool","tool_call_id":"call_1"})");

  for (const json& j : {a, r}) {
    StatusOr<Message> back = MessageFromRecord(j);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, j == a ? assistant : result);
    EXPECT_EQ(back->as_read, nullptr) << "the chat form is the record form";
    EXPECT_EQ(MessageToRecord(*back), j);
  }
  StatusOr<Message> back = MessageFromJson(a);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->tool_calls[0].arguments, json("{\"source\": \"x"))
      << "arguments that are not JSON stay text";
  EXPECT_EQ(back->blocks[0].signature, "sig==");
}

TEST(ChatJsonTest, RecordsKeepTheirOwnJsonWhileTheFieldsAreUnchanged) {
  // A flat tool call, a key the chat form does not read, `reasoning` for `reasoning_content`.
  const json j = json::parse(R"({"role": "assistant", "content": "", "reasoning": "r", "note": 7,
      "tool_calls": [{"id": "c1", "name": "run", "arguments": {"source": "x"}}]})");
  StatusOr<Message> m = MessageFromRecord(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_NE(m->as_read, nullptr);
  EXPECT_EQ(m->reasoning, "r");
  EXPECT_EQ(m->tool_calls.at(0).name, "run");
  EXPECT_EQ(MessageToRecord(*m), j) << "written back as it was read";
  EXPECT_NE(MessageToJson(*m), j);

  Message changed = *m;
  changed.content = "now with text";
  EXPECT_EQ(MessageToRecord(changed), MessageToJson(changed))
      << "a changed message is written in the chat form";

  const json tool = json::parse(R"({"type": "function", "function": {"name": "run", "strict": true}})");
  StatusOr<ToolSpec> spec = ToolSpecFromRecord(tool);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(ToolSpecToRecord(*spec), tool);
  EXPECT_EQ(ToolSpecToJson(*spec)["function"]["description"], "");
}

TEST(ChatJsonTest, TrlRowsGiveRepeatedCallsIdsOfTheirOwnAndNameToolResults) {
  std::vector<Message> messages = {
      Message::User("go"),
      Message::Assistant("",
                         {ToolCall{"c", "run", json("{\"n\": 1}")}, ToolCall{"c", "submit", json("bad{")}}),
      Message::ToolResult("c", "ran"), Message::ToolResult("c", "submitted", /*is_error=*/true)};
  messages[1].reasoning = "think";
  messages[1].blocks = {{ContentBlock::Type::kThinking, "think", "sig", "", ""}};
  std::vector<json> rows = TrlMessagesToJson(messages, {});
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1]["tool_calls"][0]["id"], "c");
  EXPECT_EQ(rows[1]["tool_calls"][1]["id"], "c~2");
  EXPECT_EQ(rows[1]["tool_calls"][0]["function"]["arguments"], (json{{"n", 1}}))
      << "text holding an object: parsed";
  EXPECT_EQ(rows[1]["tool_calls"][1]["function"]["arguments"], "bad{");
  EXPECT_FALSE(rows[1].contains("blocks"));
  EXPECT_FALSE(rows[1].contains("reasoning_content"));
  EXPECT_EQ(rows[3]["tool_call_id"], "c~2");
  EXPECT_EQ(rows[3]["name"], "submit");
  EXPECT_FALSE(rows[3].contains("is_error"));
  for (const json& row : rows)
    for (const auto& [key, value] : row.items())
      EXPECT_NE(std::find(std::begin(kTrlMessageKeys), std::end(kTrlMessageKeys), key),
                std::end(kTrlMessageKeys))
          << key;

  rows = TrlMessagesToJson(messages, {.with_reasoning = true, .arguments_as_text = true});
  EXPECT_EQ(rows[1]["reasoning_content"], "think");
  EXPECT_EQ(rows[1]["tool_calls"][0]["function"]["arguments"], "{\"n\": 1}");
  EXPECT_EQ(TrlToolsToJson({}), json(nullptr));
  EXPECT_EQ(TrlToolsToJson({ToolSpec{"run", "d", json::object(), nullptr}}).dump(),
            R"([{"function":{"description":"d","name":"run","parameters":{}},"type":"function"}])");
}

}  // namespace
}  // namespace kforge::common
