// Strict JSON object reading: typed field access whose errors carry a JSON path, and
// rejection of unknown fields, so typos in hand-written files fail loudly. Wire messages between
// kforge's processes are read with it too (Read: strict types, optional fields keep their defaults).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/names.h"
#include "kforge/common/status.h"

namespace kforge::common {

/// `value` as JSON text, compact (or indented by `indent`), with invalid UTF-8 in its strings replaced
/// by U+FFFD instead of thrown on: how kforge writes every record, line, request body and hash input.
std::string JsonText(const nlohmann::json& value, int indent = -1);

/// "object", "array", "string", ... ("integer" for integers) for error messages.
std::string JsonTypeName(const nlohmann::json& value);

/// Sets `out` from `value` when it holds a T: nullopt then, else why not ("expected a boolean, got
/// integer"; "integer out of range" for an integer that T cannot hold). T: bool, an integer type,
/// double, std::string, std::filesystem::path, std::vector<std::string> or nlohmann::json (any value).
/// The one conversion of both readers of JSON, JsonFields and RecordReader.
template <typename T>
std::optional<std::string> ConvertJson(const nlohmann::json& value, T& out) {
  auto expected = [&](const char* what) {
    return std::string("expected ") + what + ", got " + JsonTypeName(value);
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) return expected("a boolean");
    out = value.get<bool>();
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    if (!value.is_number_unsigned()) return expected("an unsigned integer");
    out = value.get<uint64_t>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!value.is_number_integer()) return expected("an integer");
    if (value.is_number_unsigned() ? value.get<uint64_t>() > uint64_t(std::numeric_limits<T>::max())
                                   : value.get<int64_t>() < int64_t(std::numeric_limits<T>::min()) ||
                                         value.get<int64_t>() > int64_t(std::numeric_limits<T>::max()))
      return "integer out of range";
    out = value.get<T>();
  } else if constexpr (std::is_same_v<T, double>) {
    if (!value.is_number()) return expected("a number");
    out = value.get<double>();
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::filesystem::path>) {
    if (!value.is_string()) return expected("a string");
    out = value.get<std::string>();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (!value.is_array()) return expected("an array");
    std::vector<std::string> items;
    for (size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string())
        return "element " + std::to_string(i) + ": expected a string, got " + JsonTypeName(value[i]);
      items.push_back(value[i].get<std::string>());
    }
    out = std::move(items);
  } else {
    static_assert(std::is_same_v<T, nlohmann::json>);
    out = value;
  }
  return std::nullopt;
}

/// What a field must hold, for JsonFields::Expect.
enum class JsonKind { kString, kInteger, kNumber, kNumberOrNull, kBool, kObject, kArray };

/// Reads fields of one JSON object located at `path` (e.g. "launches[2]").
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string path) : object_(object), path_(std::move(path)) {}
  /// As above; Error() and the Read functions start each error with "context: " (the message read:
  /// "check reply").
  JsonFields(const nlohmann::json& object, std::string path, std::string context)
      : object_(object), path_(std::move(path)), context_(std::move(context)) {}

  /// Fails unless the value is an object whose keys are all in `allowed`.
  Status CheckObject(std::initializer_list<std::string_view> allowed) const;
  Status CheckObject(std::span<const std::string_view> allowed) const;
  bool Has(std::string_view key) const;
  /// Path of a child, for nested errors: "launches[2].grid".
  std::string Child(std::string_view key) const;
  StatusOr<std::string> String(std::string_view key) const;
  StatusOr<std::string> StringOr(std::string_view key, std::string fallback) const;
  StatusOr<int64_t> Int(std::string_view key) const;
  StatusOr<double> Number(std::string_view key) const;
  /// The child value; fails when missing.
  StatusOr<const nlohmann::json*> Get(std::string_view key) const;
  Status Error(std::string_view key, const std::string& what) const;

  /// Fails unless the value is an object, whatever its keys.
  Status CheckIsObject() const;
  /// Sets `out` from `key` when it is there; fails when it has the wrong type ("expected a boolean,
  /// got integer"; an integer out of T's range), or is required and missing. T: bool, an integer
  /// type, double, std::string, std::filesystem::path or nlohmann::json (any value).
  template <typename T>
  Status Read(std::string_view key, T& out, bool required = false) const {
    auto it = object_.find(key);
    if (it == object_.end()) return required ? Error(key, "missing") : Status::Ok();
    if (std::optional<std::string> why = ConvertJson(*it, out)) return Error(key, *why);
    return Status::Ok();
  }
  /// A value that must be an object (or null when `nullable`), when it is there.
  Status ReadObject(std::string_view key, nlohmann::json& out, bool nullable = false) const;
  /// A value that must be an array, when it is there.
  Status ReadArray(std::string_view key, nlohmann::json& out) const;
  /// A value of a closed set, by its name in `names`; required ("unknown status \"fine\"").
  template <typename E, size_t N>
  Status ReadNamed(std::string_view key, const NameTable<E, N>& names, E& out) const {
    std::string name;
    KFORGE_RETURN_IF_ERROR(Read(key, name, /*required=*/true));
    std::optional<E> value = names.Parse(name);
    if (!value) return Error(key, "unknown " + std::string(key) + " \"" + name.substr(0, 40) + "\"");
    out = *value;
    return Status::Ok();
  }

  /// Checks without reading: fails unless the value at `path` is an object ("PATH: expected an
  /// object") holding `key` ("PATH.key: missing") of `kind` ("PATH.key: expected an integer, found
  /// string"). A key that is not a plain name is quoted (KeyText).
  Status Expect(std::string_view key, JsonKind kind) const;
  /// Expect, where an absent `key` is fine.
  Status ExpectIfPresent(std::string_view key, JsonKind kind) const;
  /// Expect(key, kArray), then every element of `kind` ("PATH.key[3]: expected a string, found null").
  Status ExpectElements(std::string_view key, JsonKind kind) const;
  /// ExpectIfPresent for every key of the object `key` (checked to be one): maps of names to values.
  Status ExpectValues(std::string_view key, JsonKind kind) const;

 private:
  /// The path of a child with its key as KeyText writes it.
  std::string KeyPath(std::string_view key) const;
  Status Expected(std::string_view key, const char* what, const nlohmann::json& got) const {
    return Error(key, std::string("expected ") + what + ", got " + JsonTypeName(got));
  }

  const nlohmann::json& object_;
  std::string path_;
  std::string context_;
};

/// Limits on a document, checked while it is parsed (so that no input builds a huge tree).
struct JsonLimits {
  /// Deepest nesting of arrays and objects. Default 64.
  size_t max_depth = 64;
  /// Most values (scalars, arrays and objects) in the document. Default 2^20.
  size_t max_values = size_t{1} << 20;
};

/// Parses `text` strictly: a leading UTF-8 byte order mark is skipped; duplicate keys, numbers
/// outside a double's range and documents over `limits` are errors. ParseError messages say
/// `where: line L, column C: ...` or `where: <JSON path>: ...`, on one line, never quoting the input
/// beyond a key.
StatusOr<nlohmann::json> ParseJson(std::string_view text, const std::string& where, JsonLimits limits = {});

/// A JSON key for an error message: as is when it is a short plain name, else quoted (common::Quote).
std::string KeyText(std::string_view key);

}  // namespace kforge::common
