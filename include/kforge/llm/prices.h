// The price table: dollars per million tokens per model, loaded from a user-editable JSON file
// (prompts/prices.json ships the defaults), with per-provider rules for cached input.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "kforge/common/status.h"
#include "kforge/llm/chat.h"

namespace kforge::llm {

/// USD per million tokens. A cache price the table leaves out follows the provider's rule.
struct ModelPrice {
  double input = 0;
  double output = 0;  ///< reasoning tokens are output tokens
  std::optional<double> cache_read;
  std::optional<double> cache_write;
};

/// Cached input as a fraction of the input price, for models whose entry gives no cache price.
struct CacheRule {
  double read = 1;
  double write = 1;
};

class PriceTable {
 public:
  /// Built in: anthropic reads 0.1 and writes 1.25 (five-minute cache); openai reads 0.5 and
  /// writes 1 (OpenAI does not charge writes; DeepSeek's cache hits are reads). A provider without
  /// a rule (replay, exec) uses anthropic's for claude-* models and openai's for the rest.
  PriceTable();

  /// {"schema": "kforge.prices/1", "models": {"NAME": {"input": 3, "output": 15, "cache_read": 0.3,
  /// "cache_write": 3.75, "aliases": ["other-id"]}}, "providers": {"anthropic": {"cache_read": 0.1, "cache_write": 1.25}}}.
  /// "providers" (fractions of input) is optional and replaces the built-in rule per provider.
  static StatusOr<PriceTable> FromJson(const nlohmann::json& j);
  static StatusOr<PriceTable> Load(const std::string& path);

  void Set(const std::string& model, ModelPrice price) { prices_[model] = price; }
  /// `over`'s models, aliases and provider rules replace this table's of the same name; the rest stay
  /// (a user's file over the installed table).
  void MergeOver(const PriceTable& over);
  void SetCacheRule(const std::string& provider, CacheRule rule) { cache_rules_[provider] = rule; }
  /// The exact model id or one of an entry's "aliases"; else the id without its date or "-latest"
  /// suffix ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5@20250929" and "gpt-4o-2024-08-06"
  /// use "claude-sonnet-4-5" and "gpt-4o"); else the part after a "vendor/" prefix. Never a mere
  /// prefix: "claude-opus-4-6" is not "claude-opus-4".
  std::optional<ModelPrice> Find(const std::string& model) const;
  /// `model` without a trailing date (-YYYYMMDD, @YYYYMMDD, -YYYY-MM-DD) or "-latest".
  static std::string Undated(const std::string& model);
  /// The price of `model` with its cache prices filled in by `provider`'s rule.
  std::optional<ModelPrice> Find(const std::string& provider, const std::string& model) const;
  /// Cost in USD, or nullopt when the model is not in the table. `provider` is a Provider::Name().
  std::optional<double> Cost(const std::string& provider, const std::string& model, const Usage& usage) const;

 private:
  std::map<std::string, ModelPrice> prices_;
  std::map<std::string, std::string> aliases_;  ///< alias -> entry name
  std::map<std::string, CacheRule> cache_rules_;
};

}  // namespace kforge::llm
