#include "kforge/common/json_fields.h"

#include <gtest/gtest.h>

#include <string>

namespace kforge::common {
namespace {

TEST(ParseJsonTest, AcceptsWhatNlohmannAccepts) {
  const char* cases[] = {"{}",
                         "[]",
                         "0",
                         "-0.5e-3",
                         "\"x\"",
                         "{\"a\": [1, {\"b\": null}], \"c\": true}",
                         "\xEF\xBB\xBF{\"bom\": 1}",
                         "[1.7976931348623157e308, 18446744073709551615]"};
  for (const char* text : cases) {
    StatusOr<nlohmann::json> got = ParseJson(text, "t.json");
    ASSERT_TRUE(got.ok()) << text << ": " << got.status().ToString();
    std::string plain = text;
    if (plain.rfind("\xEF\xBB\xBF", 0) == 0) plain = plain.substr(3);
    EXPECT_EQ(*got, nlohmann::json::parse(plain)) << text;
  }
}

// Each error is one line naming the file and where, and never aborts the caller with an exception.
TEST(ParseJsonTest, RejectsWithWhereAndWhy) {
  struct Case {
    std::string text;
    std::string message;
  } cases[] = {
      {"{\"x\": 1e400}", "t.json: line 1, column 11: number out of range"},
      {"{\"x\": [-1e400]}", "t.json: line 1, column 13: number out of range"},
      {"{\"x\":\n 1,\n \"x\": 2}", "t.json: x: duplicate key"},
      {"{\"a\": [{\"b\": {\"c\": 1, \"c\": 1}}]}", "t.json: a[0].b.c: duplicate key"},
      {"{\"a b\": 1, \"a b\": 2}", "t.json: \"a b\": duplicate key"},
      {"{\"x\": \"\xff\"}", "t.json: line 1, column 8: invalid UTF-8"},
      {"{\"x\": ", "t.json: line 1, column 7: malformed JSON"},
      {std::string(60 << 20, '['), "t.json: [0][0][0]"},
      {std::string(60 << 20, '['), "nested deeper than 64 levels"},
  };
  for (const Case& c : cases) {
    StatusOr<nlohmann::json> got = ParseJson(c.text, "t.json");
    ASSERT_FALSE(got.ok()) << c.text.substr(0, 100);
    EXPECT_EQ(got.status().code(), Status::Code::kParseError);
    const std::string& m = got.status().message();
    EXPECT_NE(m.find(c.message), std::string::npos) << "got: " << m.substr(0, 300) << "\nwant: " << c.message;
    EXPECT_EQ(m.find('\n'), std::string::npos);
    EXPECT_LE(m.size(), 300u);
  }
}

TEST(ParseJsonTest, CapsValuesAndDepth) {
  std::string flat = "[";
  for (int i = 0; i < 2000; ++i) flat += "0,";
  flat += "0]";
  EXPECT_TRUE(ParseJson(flat, "t.json").ok());
  StatusOr<nlohmann::json> capped = ParseJson(flat, "t.json", {64, 1000});
  ASSERT_FALSE(capped.ok());
  EXPECT_EQ(capped.status().message(), "t.json: more than 1000 values");
  EXPECT_TRUE(ParseJson("[[[[1]]]]", "t.json", {4, 100}).ok());
  EXPECT_EQ(ParseJson("[[[[[1]]]]]", "t.json", {4, 100}).status().message(),
            "t.json: [0][0][0]: nested deeper than 4 levels");
}

TEST(JsonFieldsTest, IntRejectsUnsignedPastInt64) {
  nlohmann::json j = nlohmann::json::parse(R"({"n": 18446744073709551615, "m": 9223372036854775807})");
  JsonFields f(j, "");
  EXPECT_EQ(f.Int("n").status().message(), "n: integer out of range");
  EXPECT_EQ(*f.Int("m"), INT64_MAX);
}

TEST(JsonFieldsTest, UnknownKeysAreShownOnOneLine) {
  nlohmann::json j = {{"ok", 1}, {"bad\nkey", 2}};
  Status s = JsonFields(j, "").CheckObject({"ok"});
  EXPECT_EQ(s.message(), "\"bad\\nkey\": unknown field");
}

TEST(JsonFieldsTest, ExpectChecksKindsAndNamesThePath) {
  const nlohmann::json doc = nlohmann::json::parse(R"({
    "s": "x", "i": 3, "f": 2.5, "n": null, "b": true, "o": {"odd key": 1, "k": "v"}, "a": [1, "two"]
  })");
  const JsonFields top(doc, ""), nested(doc, "runs[2]");
  const struct {
    Status status;
    std::string message;  // empty: ok
  } cases[] = {
      {top.Expect("s", JsonKind::kString), ""},
      {top.Expect("i", JsonKind::kInteger), ""},
      {top.Expect("i", JsonKind::kNumber), ""},
      {top.Expect("f", JsonKind::kInteger), "f: expected an integer, found number"},
      {top.Expect("n", JsonKind::kNumberOrNull), ""},
      {top.Expect("n", JsonKind::kNumber), "n: expected a number, found null"},
      {top.Expect("b", JsonKind::kBool), ""},
      {top.Expect("s", JsonKind::kBool), "s: expected true or false, found string"},
      {top.Expect("o", JsonKind::kObject), ""},
      {top.Expect("a", JsonKind::kObject), "a: expected an object, found array"},
      {top.Expect("missing", JsonKind::kString), "missing: missing"},
      {nested.Expect("missing", JsonKind::kString), "runs[2].missing: missing"},
      {nested.Expect("odd key", JsonKind::kString), "runs[2].\"odd key\": missing"},
      {top.ExpectIfPresent("missing", JsonKind::kString), ""},
      {top.ExpectIfPresent("s", JsonKind::kInteger), "s: expected an integer, found string"},
      {top.ExpectElements("a", JsonKind::kInteger), "a[1]: expected an integer, found string"},
      {top.ExpectElements("o", JsonKind::kInteger), "o: expected an array, found object"},
      {nested.ExpectValues("o", JsonKind::kInteger), "runs[2].o.k: expected an integer, found string"},
      {top.ExpectValues("a", JsonKind::kInteger), "a: expected an object, found array"},
      {JsonFields(doc["a"], "a").Expect("x", JsonKind::kString), "a: expected an object"},
      {JsonFields(doc["a"], "").Expect("x", JsonKind::kString), "top level: expected an object"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.status.ok(), c.message.empty()) << c.status.message();
    EXPECT_EQ(c.status.message(), c.message);
  }
}

}  // namespace
}  // namespace kforge::common
