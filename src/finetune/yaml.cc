#include "kforge/common/json_fields.h"
// JSON values as block-style YAML, for axolotl's configuration file.
#include <algorithm>
#include <cctype>
#include <string>

#include "finetune/trainer_config.h"

namespace kforge::finetune {
namespace {

using nlohmann::json;

bool PlainKey(const std::string& key) {
  return !key.empty() && (std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_') &&
         std::all_of(key.begin(), key.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
         });
}

std::string Scalar(const json& value) {
  if (value.is_object()) return "{}";
  if (value.is_array()) return "[]";
  std::string text = common::JsonText(value);
  if (value.is_number_float() && text.find_first_of(".") == std::string::npos) {
    size_t e = text.find_first_of("eE");
    if (e == std::string::npos) {
      text += ".0";
    } else {
      text.insert(e, ".0");
      if (text[e + 3] != '-' && text[e + 3] != '+') text.insert(e + 3, "+");
    }
  }
  return text;
}

bool Nested(const json& value) { return (value.is_object() || value.is_array()) && !value.empty(); }

void Emit(const json& value, size_t indent, std::string& out);

// An array item: "- " then the value, whose first line shares the dash's line.
void EmitItem(const json& item, size_t indent, std::string& out) {
  if (!Nested(item)) {
    out += std::string(indent, ' ') + "- " + Scalar(item) + "\n";
    return;
  }
  std::string body;
  Emit(item, indent + 2, body);
  out += std::string(indent, ' ') + "- " + body.substr(indent + 2);
}

void Emit(const json& value, size_t indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (value.is_array()) {
    for (const json& item : value) EmitItem(item, indent, out);
    return;
  }
  for (const auto& [key, child] : value.items()) {
    out += pad + (PlainKey(key) ? key : json(key).dump()) + ":";
    if (Nested(child)) {
      out += "\n";
      Emit(child, indent + 2, out);
    } else {
      out += " " + Scalar(child) + "\n";
    }
  }
}

}  // namespace

std::string ToYaml(const json& value) {
  if (!Nested(value)) return Scalar(value) + "\n";
  std::string out;
  Emit(value, 0, out);
  return out;
}

}  // namespace kforge::finetune
