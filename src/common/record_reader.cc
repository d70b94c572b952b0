// Lenient typed reading of records.
#include "kforge/common/record_reader.h"

#include <utility>

namespace kforge::common {

using nlohmann::json;

RecordReader::RecordReader(const json& object, std::string path, Status& status,
                           std::vector<std::string>* absent, std::string pointer)
    : object_(object),
      path_(std::move(path)),
      status_(status),
      absent_(absent),
      pointer_(std::move(pointer)) {
  if (status_.ok() && !object_.is_object())
    status_ =
        Status::InvalidArgument((path_.empty() ? std::string("record") : path_) + ": expected an object");
}

const json* RecordReader::Find(std::string_view key) {
  if (!status_.ok() || !object_.is_object()) return nullptr;
  auto it = object_.find(key);
  if (it == object_.end()) {
    if (absent_) absent_->push_back(pointer_ + "/" + std::string(key));
    return nullptr;
  }
  return it->is_null() ? nullptr : &*it;
}

void RecordReader::Number(std::string_view key, double& out, double if_null) {
  if (!status_.ok() || !object_.is_object()) return;
  if (auto it = object_.find(key); it != object_.end() && it->is_null()) {
    out = if_null;
    return;
  }
  const json* value = Find(key);
  if (!value) return;
  if (!value->is_number()) return Fail(key, "expected a number or null");
  out = value->get<double>();
}

void RecordReader::Interval(std::string_view key, double& low, double& high, double if_null) {
  const json* value = Find(key);
  if (!value) return;
  auto bound = [](const json& v) { return v.is_number() || v.is_null(); };
  if (!value->is_array() || value->size() != 2 || !bound((*value)[0]) || !bound((*value)[1]))
    return Fail(key, "expected [low, high]");
  low = (*value)[0].is_null() ? if_null : (*value)[0].get<double>();
  high = (*value)[1].is_null() ? if_null : (*value)[1].get<double>();
}

void RecordReader::Raw(std::string_view key, json& out) {
  if (!status_.ok() || !object_.is_object()) return;
  auto it = object_.find(key);
  if (it == object_.end()) {
    Find(key);  // notes it absent
    return;
  }
  out = *it;
}

std::optional<RecordReader> RecordReader::Object(std::string_view key) {
  const json* value = Find(key);
  if (!value) return std::nullopt;
  if (!value->is_object()) {
    Fail(key, "expected an object or null");
    return std::nullopt;
  }
  return RecordReader(*value, Path(key), status_, absent_, pointer_ + "/" + std::string(key));
}

const json* RecordReader::Array(std::string_view key) {
  const json* value = Find(key);
  if (value && !value->is_array()) {
    Fail(key, "expected an array");
    return nullptr;
  }
  return value;
}

std::string RecordReader::Path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void RecordReader::Fail(std::string_view key, const std::string& what) {
  if (status_.ok()) status_ = Status::InvalidArgument(Path(key) + ": " + what);
}

}  // namespace kforge::common
