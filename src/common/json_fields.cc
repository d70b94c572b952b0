// Strict JSON field access with JSON-path errors.
#include "kforge/common/json_fields.h"

#include <algorithm>
#include <cstdint>

namespace kforge::common {

std::string JsonTypeName(const nlohmann::json& value) {
  if (value.is_number_integer()) return "integer";
  return value.type_name();
}

Status JsonFields::CheckObject(std::initializer_list<std::string_view> allowed) const {
  if (!object_.is_object()) {
    return Status::InvalidArgument((path_.empty() ? "top level" : path_) + ": expected an object, got " +
                                   JsonTypeName(object_));
  }
  for (const auto& [key, value] : object_.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string shown = key.size() > 40 ? key.substr(0, 40) + "..." : key;
      return Status::InvalidArgument(Child(shown) + ": unknown field");
    }
  }
  return Status::Ok();
}

bool JsonFields::Has(std::string_view key) const { return object_.contains(key); }

std::string JsonFields::Child(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

Status JsonFields::Error(std::string_view key, const std::string& what) const {
  return Status::InvalidArgument(Child(key) + ": " + what);
}

StatusOr<const nlohmann::json*> JsonFields::Get(std::string_view key) const {
  auto it = object_.find(key);
  if (it == object_.end()) return Error(key, "missing");
  return &*it;
}

StatusOr<std::string> JsonFields::String(std::string_view key) const {
  KFORGE_ASSIGN_OR_RETURN(const nlohmann::json* value, Get(key));
  if (!value->is_string()) return Error(key, "expected a string, got " + JsonTypeName(*value));
  return value->get<std::string>();
}

StatusOr<std::string> JsonFields::StringOr(std::string_view key, std::string fallback) const {
  if (!Has(key)) return fallback;
  return String(key);
}

StatusOr<int64_t> JsonFields::Int(std::string_view key) const {
  KFORGE_ASSIGN_OR_RETURN(const nlohmann::json* value, Get(key));
  if (!value->is_number_integer()) return Error(key, "expected an integer, got " + JsonTypeName(*value));
  return value->get<int64_t>();
}

StatusOr<double> JsonFields::Number(std::string_view key) const {
  KFORGE_ASSIGN_OR_RETURN(const nlohmann::json* value, Get(key));
  if (!value->is_number()) return Error(key, "expected a number, got " + JsonTypeName(*value));
  return value->get<double>();
}

StatusOr<nlohmann::json> ParseJson(std::string_view text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // Report line and column rather than nlohmann's message, which can quote the input.
    size_t offset = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    size_t line = 1, column = 1;
    for (size_t i = 0; i < offset; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return Status::ParseError(where + ": line " + std::to_string(line) + ", column " +
                              std::to_string(column) + ": malformed JSON");
  }
}

}  // namespace kforge::common
