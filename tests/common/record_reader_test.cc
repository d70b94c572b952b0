#include "kforge/common/record_reader.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kforge::common {
namespace {

using nlohmann::json;

enum class Colour { kRed, kBlue };
constexpr NameTable<Colour, 2> kColours = {{{Colour::kRed, "red"}, {Colour::kBlue, "blue"}}};

TEST(RecordReaderTest, AbsentOrNullLeavesAFieldAsItWasAndUnknownKeysPassOver) {
  const json record = {{"name", "x"}, {"count", nullptr}, {"colour", "blue"}, {"from_a_newer_writer", 1}};
  Status status;
  RecordReader r(record, "t", status);
  std::string name;
  int count = 7, missing = 8;
  std::optional<int> maybe;
  Colour colour = Colour::kRed;
  r.Get("name", name, /*required=*/true);
  r.Get("count", count);
  r.Get("missing", missing);
  r.Get("count", maybe);
  r.Name("colour", kColours, colour);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(name, "x");
  EXPECT_EQ(count, 7);
  EXPECT_EQ(missing, 8);
  EXPECT_FALSE(maybe.has_value());
  EXPECT_EQ(colour, Colour::kBlue);
}

TEST(RecordReaderTest, TheFirstErrorWinsAndNamesItsPath) {
  const json record = {{"count", "three"}, {"colour", "green"}};
  Status status;
  RecordReader r(record, "t.attempts[1]", status);
  int count = 0;
  Colour colour = Colour::kRed;
  std::string id;
  r.Get("count", count);
  r.Name("colour", kColours, colour);
  r.Get("id", id, /*required=*/true);
  EXPECT_EQ(status.message(), "t.attempts[1].count: expected an integer, got string");

  // The same checks as JsonFields::Read: an integer must fit, a list must hold strings.
  const json wide = {{"count", 1LL << 40}, {"tags", {"a", 2}}};
  Status range;
  RecordReader w(wide, "t", range);
  w.Get("count", count);
  EXPECT_EQ(range.message(), "t.count: integer out of range");
  Status items;
  RecordReader l(wide, "t", items);
  std::vector<std::string> tags;
  l.Get("tags", tags);
  EXPECT_EQ(items.message(), "t.tags: element 1: expected a string, got integer");

  const json green = {{"colour", "green"}};
  Status second;
  RecordReader n(green, "t", second);
  n.Name("colour", kColours, colour);
  EXPECT_EQ(second.message(), "t.colour: \"green\", expected red or blue");

  const json array = json::array();
  Status third;
  RecordReader a(array, "t.task", third);
  EXPECT_EQ(third.message(), "t.task: expected an object");

  const json empty = json::object();
  Status fourth;
  RecordReader m(empty, "t", fourth);
  m.Get("id", id, /*required=*/true);
  EXPECT_EQ(fourth.message(), "t.id: missing");
}

TEST(RecordReaderTest, NotesTheKeysARecordLackedAsPointersAtEveryLevel) {
  const json record = {{"a", 1}, {"inner", {{"b", nullptr}}}, {"gone", nullptr}};
  Status status;
  std::vector<std::string> absent;
  RecordReader r(record, "", status, &absent);
  int a = 0;
  double b = 0, c = 0;
  r.Get("a", a);
  r.Get("z", a);
  if (std::optional<RecordReader> inner = r.Object("inner")) {
    inner->Number("b", b, std::nan(""));
    inner->Number("c", c, 0);
  }
  EXPECT_FALSE(r.Object("gone").has_value()) << "null: present, not absent";
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(std::isnan(b)) << "null reads as the value asked for";
  EXPECT_EQ(absent, (std::vector<std::string>{"/z", "/inner/c"}));
}

TEST(RecordReaderTest, IntervalsAndArrays) {
  const json record = {{"ci", {1.5, nullptr}}, {"bad", json::array({1.0})}};
  Status status;
  RecordReader r(record, "t", status);
  double lo = 0, hi = 0;
  r.Interval("ci", lo, hi, -1);
  EXPECT_EQ(lo, 1.5);
  EXPECT_EQ(hi, -1);
  EXPECT_EQ(r.Array("missing"), nullptr);
  EXPECT_TRUE(status.ok());
  r.Interval("bad", lo, hi, -1);
  EXPECT_EQ(status.message(), "t.bad: expected [low, high]");
  const json list = {{"list", 3}};
  Status second;
  RecordReader s(list, "t", second);
  EXPECT_EQ(s.Array("list"), nullptr);
  EXPECT_EQ(second.message(), "t.list: expected an array");
}

}  // namespace
}  // namespace kforge::common
