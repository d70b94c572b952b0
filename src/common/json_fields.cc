// Strict JSON field access with JSON-path errors.
#include "kforge/common/json_fields.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <vector>

#include "kforge/common/text.h"

namespace kforge::common {

namespace {

using nlohmann::json;

/// Builds the document like nlohmann's own DOM parser, refusing duplicate keys, too deep nesting
/// and too many values as it goes.
class StrictBuilder : public nlohmann::json_sax<json> {
 public:
  explicit StrictBuilder(JsonLimits limits) : limits_(limits) {}

  bool null() override { return Add(nullptr); }
  bool boolean(bool v) override { return Add(v); }
  bool number_integer(number_integer_t v) override { return Add(v); }
  bool number_unsigned(number_unsigned_t v) override { return Add(v); }
  bool number_float(number_float_t v, const string_t&) override { return Add(v); }
  bool string(string_t& v) override { return Add(std::move(v)); }
  bool binary(binary_t& v) override { return Add(json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return Open(json::object()); }
  bool start_array(std::size_t) override { return Open(json::array()); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& k) override {
    json& object = *stack_.back();
    if (object.contains(k)) {
      std::string path = RawPath();
      return Refuse((path.empty() ? "" : path + ".") + KeyText(k) + ": duplicate key");
    }
    slot_ = &object[k];
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    error_position_ = position;
    std::string what = e.what();
    if (e.id == 406) {
      reason_ = "number out of range";
    } else if (what.find("UTF-8") != std::string::npos || what.find("utf-8") != std::string::npos) {
      reason_ = "invalid UTF-8";
    } else {
      reason_ = "malformed JSON";
    }
    return false;
  }

  json& root() { return root_; }
  /// Set when the builder refused the document: "<path>: why".
  const std::string& refusal() const { return refusal_; }
  /// Set on a syntax or number error: the byte offset just past the bad token, and why.
  size_t error_position() const { return error_position_; }
  const std::string& reason() const { return reason_; }

 private:
  bool Refuse(std::string why) {
    refusal_ = std::move(why);
    return false;
  }

  /// "launches[2].grid" for the container being filled; empty at the top level. A deep path keeps
  /// its start and its end.
  std::string RawPath() const {
    std::string path;
    for (size_t i = 1; i < stack_.size(); ++i) path += segments_[i];
    if (!path.empty() && path[0] == '.') path.erase(0, 1);
    if (path.size() <= 160) return path;
    auto boundary = [&path](size_t at) {  // never inside a UTF-8 sequence
      while (at > 0 && (static_cast<unsigned char>(path[at]) & 0xC0) == 0x80) --at;
      return at;
    };
    return path.substr(0, boundary(80)) + "..." + path.substr(boundary(path.size() - 70));
  }
  std::string Path() const {
    std::string path = RawPath();
    return path.empty() ? "top level" : path;
  }

  json* Place(json value) {
    if (++values_ > limits_.max_values) {
      Refuse("more than " + std::to_string(limits_.max_values) + " values");
      return nullptr;
    }
    if (stack_.empty()) {
      root_ = std::move(value);
      segment_.clear();
      return &root_;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      segment_ = "[" + std::to_string(parent.size()) + "]";
      parent.push_back(std::move(value));
      return &parent.back();
    }
    segment_ = "." + KeyText(key_);
    *slot_ = std::move(value);
    return slot_;
  }

  bool Add(json value) { return Place(std::move(value)) != nullptr; }

  bool Open(json container) {
    if (stack_.size() >= limits_.max_depth)
      return Refuse((stack_.empty() ? std::string("top level") : Path()) + ": nested deeper than " +
                    std::to_string(limits_.max_depth) + " levels");
    json* placed = Place(std::move(container));
    if (placed == nullptr) return false;
    stack_.push_back(placed);
    segments_.push_back(segment_);
    return true;
  }

  bool Close() {
    stack_.pop_back();
    segments_.pop_back();
    return true;
  }

  JsonLimits limits_;
  json root_;
  std::vector<json*> stack_;
  std::vector<std::string> segments_;  ///< Path segment of each open container in its parent.
  std::string segment_;
  json* slot_ = nullptr;  ///< Where the next value of the innermost object goes.
  std::string key_;
  size_t values_ = 0;
  std::string refusal_;
  size_t error_position_ = 0;
  std::string reason_;
};

bool Matches(const json& value, JsonKind kind) {
  switch (kind) {
    case JsonKind::kString:
      return value.is_string();
    case JsonKind::kInteger:
      return value.is_number_integer();
    case JsonKind::kNumber:
      return value.is_number();
    case JsonKind::kNumberOrNull:
      return value.is_number() || value.is_null();
    case JsonKind::kBool:
      return value.is_boolean();
    case JsonKind::kObject:
      return value.is_object();
    case JsonKind::kArray:
      return value.is_array();
  }
  return false;
}

const char* KindText(JsonKind kind) {
  switch (kind) {
    case JsonKind::kString:
      return "a string";
    case JsonKind::kInteger:
      return "an integer";
    case JsonKind::kNumber:
      return "a number";
    case JsonKind::kNumberOrNull:
      return "a number or null";
    case JsonKind::kBool:
      return "true or false";
    case JsonKind::kObject:
      return "an object";
    case JsonKind::kArray:
      return "an array";
  }
  return "";
}

/// "PATH: expected an integer, found string" when `value` is not of `kind`.
Status ExpectKind(const json& value, const std::string& path, JsonKind kind) {
  if (Matches(value, kind)) return Status::Ok();
  return Status::InvalidArgument(path + ": expected " + KindText(kind) + ", found " + JsonTypeName(value));
}

}  // namespace

std::string KeyText(std::string_view key) {
  bool plain = !key.empty() && key.size() <= 40 && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  return plain ? std::string(key) : Quote(key, 40);
}

std::string JsonText(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonTypeName(const nlohmann::json& value) {
  if (value.is_number_integer()) return "integer";
  return value.type_name();
}

Status JsonFields::CheckObject(std::initializer_list<std::string_view> allowed) const {
  return CheckObject(std::span<const std::string_view>(allowed.begin(), allowed.size()));
}

Status JsonFields::CheckObject(std::span<const std::string_view> allowed) const {
  if (!object_.is_object()) {
    return Status::InvalidArgument((path_.empty() ? "top level" : path_) + ": expected an object, got " +
                                   JsonTypeName(object_));
  }
  for (const auto& [key, value] : object_.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return Status::InvalidArgument(Child(KeyText(key)) + ": unknown field");
    }
  }
  return Status::Ok();
}

bool JsonFields::Has(std::string_view key) const { return object_.contains(key); }

std::string JsonFields::Child(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

Status JsonFields::Error(std::string_view key, const std::string& what) const {
  return Status::InvalidArgument((context_.empty() ? "" : context_ + ": ") + Child(key) + ": " + what);
}

Status JsonFields::CheckIsObject() const {
  if (object_.is_object()) return Status::Ok();
  return Status::InvalidArgument((context_.empty() ? "" : context_ + ": ") +
                                 (path_.empty() ? "" : path_ + ": ") + "expected an object, got " +
                                 JsonTypeName(object_));
}

Status JsonFields::ReadObject(std::string_view key, json& out, bool nullable) const {
  auto it = object_.find(key);
  if (it == object_.end()) return Status::Ok();
  if (!it->is_object() && !(nullable && it->is_null()))
    return Expected(key, nullable ? "an object or null" : "an object", *it);
  out = *it;
  return Status::Ok();
}

Status JsonFields::ReadArray(std::string_view key, json& out) const {
  auto it = object_.find(key);
  if (it == object_.end()) return Status::Ok();
  if (!it->is_array()) return Expected(key, "an array", *it);
  out = *it;
  return Status::Ok();
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
  if (value->is_number_unsigned() && value->get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()})
    return Error(key, "integer out of range");
  return value->get<int64_t>();
}

StatusOr<double> JsonFields::Number(std::string_view key) const {
  KFORGE_ASSIGN_OR_RETURN(const nlohmann::json* value, Get(key));
  if (!value->is_number()) return Error(key, "expected a number, got " + JsonTypeName(*value));
  return value->get<double>();
}

std::string JsonFields::KeyPath(std::string_view key) const {
  return path_.empty() ? KeyText(key) : path_ + "." + KeyText(key);
}

Status JsonFields::Expect(std::string_view key, JsonKind kind) const {
  if (!object_.is_object())
    return Status::InvalidArgument((path_.empty() ? "top level" : path_) + ": expected an object");
  auto it = object_.find(key);
  if (it == object_.end()) return Status::InvalidArgument(KeyPath(key) + ": missing");
  return ExpectKind(*it, KeyPath(key), kind);
}

Status JsonFields::ExpectIfPresent(std::string_view key, JsonKind kind) const {
  if (object_.is_object() && !object_.contains(key)) return Status::Ok();
  return Expect(key, kind);
}

Status JsonFields::ExpectElements(std::string_view key, JsonKind kind) const {
  KFORGE_RETURN_IF_ERROR(Expect(key, JsonKind::kArray));
  const json& array = *object_.find(key);
  for (size_t i = 0; i < array.size(); ++i)
    KFORGE_RETURN_IF_ERROR(ExpectKind(array[i], KeyPath(key) + "[" + std::to_string(i) + "]", kind));
  return Status::Ok();
}

Status JsonFields::ExpectValues(std::string_view key, JsonKind kind) const {
  KFORGE_RETURN_IF_ERROR(Expect(key, JsonKind::kObject));
  const json& map = *object_.find(key);
  const JsonFields values(map, KeyPath(key));
  for (const auto& [name, value] : map.items()) KFORGE_RETURN_IF_ERROR(values.Expect(name, kind));
  return Status::Ok();
}

StatusOr<nlohmann::json> ParseJson(std::string_view text, const std::string& where, JsonLimits limits) {
  StrictBuilder builder(limits);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const nlohmann::json::exception& e) {  // not expected from sax_parse; one line anyway
    return Status::ParseError(where + ": malformed JSON");
  }
  if (ok) return std::move(builder.root());
  if (!builder.refusal().empty()) return Status::ParseError(where + ": " + builder.refusal());
  // Line and column rather than nlohmann's message, which can quote the input.
  size_t offset =
      std::min<size_t>(builder.error_position() == 0 ? 0 : builder.error_position() - 1, text.size());
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return Status::ParseError(where + ": line " + std::to_string(line) + ", column " + std::to_string(column) +
                            ": " + (builder.reason().empty() ? "malformed JSON" : builder.reason()));
}

}  // namespace kforge::common
