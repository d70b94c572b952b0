// task.json validation shared by the loader's files (private to common): a checker whose errors
// carry the file and the JSON path, and the parsers of the parts measured at import.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kforge/common/json_fields.h"
#include "kforge/common/status.h"
#include "kforge/common/task.h"
#include "kforge/common/text.h"

namespace kforge::common::task_json {

using nlohmann::json;

/// Validation state for one file: errors carry the file and the JSON path.
class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}

  Status Error(const std::string& path, const std::string& msg) const {
    return Status::InvalidArgument(file_ + ": " + (path.empty() ? "" : path + ": ") + msg);
  }

  // Rejects keys of `obj` that are not in `allowed`.
  Status OnlyKeys(const json& obj, const std::string& path,
                  std::initializer_list<std::string_view> allowed) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
        return Error(path.empty() ? KeyText(it.key()) : path + "." + KeyText(it.key()), "unknown field");
    }
    return Status::Ok();
  }

  Status Require(const json& obj, const std::string& path, std::string_view key) const {
    if (!obj.contains(key)) return Error(path, "missing field \"" + std::string(key) + "\"");
    return Status::Ok();
  }

  StatusOr<std::string> String(const json& v, const std::string& path) const {
    if (!v.is_string()) return Error(path, "expected a string, got " + std::string(v.type_name()));
    return v.get<std::string>();
  }

  StatusOr<int64_t> Int(const json& v, const std::string& path) const {
    if (!v.is_number_integer()) return Error(path, "expected an integer, got " + Describe(v));
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      return Error(path, "integer out of range");
    return v.get<int64_t>();
  }

  StatusOr<double> Number(const json& v, const std::string& path) const {
    if (!v.is_number()) return Error(path, "expected a number, got " + Describe(v));
    return v.get<double>();
  }

  Status Object(const json& v, const std::string& path) const {
    if (!v.is_object()) return Error(path, "expected an object, got " + std::string(v.type_name()));
    return Status::Ok();
  }

  Status Array(const json& v, const std::string& path) const {
    if (!v.is_array()) return Error(path, "expected an array, got " + std::string(v.type_name()));
    return Status::Ok();
  }

  const std::string& file() const { return file_; }

 private:
  static std::string Describe(const json& v) {
    if (v.is_number_float()) return "a fraction";
    return v.type_name();
  }
  std::string file_;
};

/// Parses an input init (`{"dist": ...}`) at `path` into `init`.
Status ParseInit(const Checker& c, const json& v, const std::string& path, InitSpec& init);

/// An integer >= 0 at `path`.
StatusOr<int64_t> Count(const Checker& c, const json& v, const std::string& path);

/// `conditioning`, `behaviour` and `domains` of `root` into `task` (task_measures.cc); inputs
/// must be parsed already.
Status ParseMeasures(const Checker& c, const json& root, Task& task);

}  // namespace kforge::common::task_json
