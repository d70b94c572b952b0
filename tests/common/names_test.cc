#include "kforge/common/names.h"

#include <gtest/gtest.h>

#include "kforge/common/verdict.h"

namespace kforge::common {
namespace {

enum class Color { kRed, kGreen, kBlue };
constexpr NameTable<Color, 3> kColorNames = {{{Color::kRed, "red"}, {Color::kGreen, "green"}, {Color::kBlue, "blue"}}};
static_assert(kColorNames.MatchesEnum());
static_assert(kColorNames.Name(Color::kGreen) == "green");
static_assert(kColorNames.Parse("blue") == Color::kBlue);
static_assert(!kColorNames.Parse("Blue"), "names are exact");

constexpr NameTable<Color, 3> kShuffled = {{{Color::kGreen, "green"}, {Color::kRed, "red"}, {Color::kBlue, "blue"}}};
static_assert(!kShuffled.InEnumOrder(), "a table out of enum order is caught at compile time");
static_assert(!kShuffled.MatchesEnum());

constexpr NameTable<Color, 2> kShort = {{{Color::kRed, "red"}, {Color::kGreen, "green"}}};
static_assert(kShort.InEnumOrder());
static_assert(!kShort.MatchesEnum(), "a value without its row is caught at compile time");

constexpr NameTable<Color, 4> kLong = {{{Color::kRed, "red"}, {Color::kGreen, "green"}, {Color::kBlue, "blue"}}};
static_assert(!kLong.MatchesEnum(), "a row count above the rows written is caught at compile time");

static_assert(names_detail::IsNamedValue<Color::kBlue>());
static_assert(!names_detail::IsNamedValue<static_cast<Color>(3)>());

TEST(NameTableTest, SpellingsForMessagesLeaveOutAnEmptyName) {
  EXPECT_EQ(kColorNames.Spellings(), "red, green or blue");
  enum class Stop { kNone, kDone };
  constexpr NameTable<Stop, 2> names = {{{Stop::kNone, ""}, {Stop::kDone, "done"}}};
  EXPECT_EQ(names.Spellings(), "done");
  EXPECT_EQ(names.Parse(""), Stop::kNone);
}

TEST(NameTableTest, VerdictStatusesRoundTripThroughTheirTable) {
  for (const auto& [status, name] : kVerdictStatusNames.rows) {
    EXPECT_EQ(VerdictStatusName(status), name);
    auto parsed = ParseVerdictStatus(name);
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_EQ(*parsed, status);
  }
  EXPECT_FALSE(ParseVerdictStatus("out_of_memory").ok());
}

}  // namespace
}  // namespace kforge::common
