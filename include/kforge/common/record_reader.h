// Lenient typed reading of a record kforge wrote (a trajectory, a bench record inside one): a key that
// is absent or null leaves its field as it was, keys it is not asked for are passed over (a newer
// record stays readable), and a key of the wrong type is an error naming its path. The first error
// wins, in a Status the caller owns, so a reader reads on without checking after every field.
// Hand-written files are read strictly instead (json_fields.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/json_fields.h"
#include "kforge/common/names.h"
#include "kforge/common/status.h"
#include "kforge/common/text.h"

namespace kforge::common {

class RecordReader {
 public:
  /// Reads `object`, found at `path` ("t.attempts[1]"; empty at the top). With `absent`, every key
  /// asked for that the object lacks is noted there as a JSON pointer below `pointer` ("/roofline/flops"),
  /// so that the record can be written back with the keys it had.
  RecordReader(const nlohmann::json& object, std::string path, Status& status,
               std::vector<std::string>* absent = nullptr, std::string pointer = "");

  /// The value under `key`: nullptr when it is absent or null.
  const nlohmann::json* Find(std::string_view key);
  template <typename T>
  void Get(std::string_view key, T& out, bool required = false) {
    const nlohmann::json* value = Find(key);
    if (!value) {
      if (required) Fail(key, "missing");
      return;
    }
    if (std::optional<std::string> why = ConvertJson(*value, out)) Fail(key, *why);
  }
  template <typename T>
  void Get(std::string_view key, std::optional<T>& out) {
    if (Find(key) == nullptr) return;
    T value{};
    Get(key, value);
    if (status_.ok()) out = std::move(value);
  }
  /// A value of a closed set, read by its name in `names`.
  template <typename E, size_t N>
  void Name(std::string_view key, const NameTable<E, N>& names, E& out) {
    std::string text;
    if (Find(key) == nullptr) return;
    Get(key, text);
    if (!status_.ok()) return;
    if (std::optional<E> value = names.Parse(text)) {
      out = *value;
    } else {
      Fail(key, Quote(text, 40) + ", expected " + names.Spellings());
    }
  }
  /// A number; null reads as `if_null` (records write an unknown figure as null).
  void Number(std::string_view key, double& out, double if_null);
  /// [low, high], each a number or null (`if_null`).
  void Interval(std::string_view key, double& low, double& high, double if_null);
  /// The value as it is, null included.
  void Raw(std::string_view key, nlohmann::json& out);
  /// A reader of the object under `key`; nullopt when it is absent or null, or not an object (an error).
  std::optional<RecordReader> Object(std::string_view key);
  /// The array under `key`; nullptr when it is absent or null, or not an array (an error).
  const nlohmann::json* Array(std::string_view key);

  /// "path.key".
  std::string Path(std::string_view key) const;
  /// Sets the error "path.key: what" unless there is one already.
  void Fail(std::string_view key, const std::string& what);
  const Status& status() const { return status_; }

 private:
  const nlohmann::json& object_;
  std::string path_;
  Status& status_;
  std::vector<std::string>* absent_;
  std::string pointer_;
};

}  // namespace kforge::common
