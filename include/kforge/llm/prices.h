// The price table: dollars per million tokens per model, loaded from a user-editable JSON file
// (prompts/prices.json ships the defaults).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "kforge/common/status.h"
#include "kforge/llm/chat.h"

namespace kforge::llm {

/// USD per million tokens.
struct ModelPrice {
  double input = 0;
  double output = 0;
  double cache_read = 0;
  double cache_write = 0;
};

class PriceTable {
 public:
  /// {"schema": "kforge.prices/1", "models": {"NAME": {"input": 3, "output": 15, "cache_read": 0.3,
  /// "cache_write": 3.75}}}. cache_read/cache_write default to input.
  static StatusOr<PriceTable> FromJson(const nlohmann::json& j);
  static StatusOr<PriceTable> Load(const std::string& path);

  void Set(const std::string& model, ModelPrice price) { prices_[model] = price; }
  /// Exact name, else the longest table entry that is a prefix of `model` followed by '-' or '@'
  /// ("claude-sonnet-4-5-20250929" uses "claude-sonnet-4-5").
  std::optional<ModelPrice> Find(const std::string& model) const;
  /// Cost in USD, or nullopt when the model is not in the table.
  std::optional<double> Cost(const std::string& model, const Usage& usage) const;

 private:
  std::map<std::string, ModelPrice> prices_;
};

}  // namespace kforge::llm
