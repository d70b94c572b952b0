// Strict JSON object reading: typed field access whose errors carry a JSON path, and
// rejection of unknown fields, so typos in hand-written files fail loudly.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"

namespace kforge::common {

/// What a field must hold, for JsonFields::Expect.
enum class JsonKind { kString, kInteger, kNumber, kNumberOrNull, kBool, kObject, kArray };

/// Reads fields of one JSON object located at `path` (e.g. "launches[2]").
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string path) : object_(object), path_(std::move(path)) {}

  /// Fails unless the value is an object whose keys are all in `allowed`.
  Status CheckObject(std::initializer_list<std::string_view> allowed) const;
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

  const nlohmann::json& object_;
  std::string path_;
};

/// "object", "array", "string", ... for error messages.
std::string JsonTypeName(const nlohmann::json& value);

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
