// One table of names for a closed set of values (an enum class): the spelling that records, flags
// and messages use, and the parse back. Each set keeps its table beside its enum, in the same order,
// and code handles the values with a `switch` without `default` (the build makes a missed case an
// error), so a new value is added in one place and the compiler finds the rest.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kforge::common {

namespace names_detail {
/// True when V is one of its enum's named values. The compiler spells a template argument in the
/// function's name: a named value as `E::kName`, any other as the cast `(E)n` (GCC and Clang alike).
template <auto V>
constexpr bool IsNamedValue() {
  const std::string_view signature = __PRETTY_FUNCTION__;
  const size_t at = signature.find("V = ");
  return at != std::string_view::npos && signature[at + 4] != '(';
}
}  // namespace names_detail

template <typename E, size_t N>
struct NameTable {
  std::pair<E, std::string_view> rows[N];

  /// True when row i holds the enum value i: Name() indexes by value.
  constexpr bool InEnumOrder() const {
    for (size_t i = 0; i < N; ++i)
      if (static_cast<size_t>(rows[i].first) != i) return false;
    return true;
  }
  /// True when the table is in enum order and has a row for every value: the enum has no named
  /// value N. Tables are checked with static_assert(kTable.MatchesEnum()), so a value added to an
  /// enum without its row, or a row count that says more rows than were written, fails the build.
  constexpr bool MatchesEnum() const {
    return InEnumOrder() && !names_detail::IsNamedValue<static_cast<E>(N)>();
  }
  constexpr std::string_view Name(E value) const { return rows[static_cast<size_t>(value)].second; }
  /// nullopt for a name outside the set; the caller says where it came from.
  constexpr std::optional<E> Parse(std::string_view name) const {
    for (const auto& [value, spelling] : rows)
      if (spelling == name) return value;
    return std::nullopt;
  }
  /// The names but an empty one, in table order: the choices of a flag.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& row : rows)
      if (!row.second.empty()) names.emplace_back(row.second);
    return names;
  }
  /// "a, b or c": the names (but an empty one), for messages.
  std::string Spellings() const {
    const std::vector<std::string> names = Names();
    std::string text;
    for (size_t i = 0; i < names.size(); ++i)
      text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return text;
  }
};

}  // namespace kforge::common
