// The price table: loading and cost computation.
#include "kforge/llm/prices.h"

#include <cctype>
#include <fstream>
#include <vector>
#include <sstream>

#include "kforge/common/files.h"
#include "kforge/llm/provider.h"

namespace kforge::llm {
namespace {

Status CheckPrices(const nlohmann::json& p, const std::string& path,
                   std::initializer_list<const char*> fields) {
  if (!p.is_object()) return Status::ParseError(path + ": must be an object");
  for (const auto& [field, value] : p.items()) {
    bool known = false;
    for (const char* f : fields) known = known || field == f;
    if (!known) return Status::ParseError(path + "." + field + ": unknown field");
    if (!value.is_number() || value.get<double>() < 0)
      return Status::ParseError(path + "." + field + ": must be a non-negative number");
  }
  return Status::Ok();
}

}  // namespace

PriceTable::PriceTable() {
  cache_rules_[ProviderKindName(ProviderKind::kAnthropic)] = CacheRule{0.1, 1.25};
  cache_rules_[ProviderKindName(ProviderKind::kOpenAi)] = CacheRule{0.5, 1.0};
}

StatusOr<PriceTable> PriceTable::FromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::ParseError("prices: must be a JSON object");
  if (j.value("schema", "") != "kforge.prices/1")
    return Status::ParseError("prices.schema: must be kforge.prices/1");
  if (!j.contains("models") || !j["models"].is_object())
    return Status::ParseError("prices.models: missing object");
  PriceTable table;
  for (const auto& [name, p] : j["models"].items()) {
    const std::string path = "prices.models." + name;
    nlohmann::json numbers = p;
    std::vector<std::string> aliases;
    if (p.is_object() && p.contains("aliases")) {
      if (!p["aliases"].is_array()) return Status::ParseError(path + ".aliases: must be a list of model ids");
      for (const nlohmann::json& alias : p["aliases"]) {
        if (!alias.is_string() || alias.get<std::string>().empty())
          return Status::ParseError(path + ".aliases: must be a list of model ids");
        aliases.push_back(alias.get<std::string>());
      }
      numbers.erase("aliases");
    }
    KFORGE_RETURN_IF_ERROR(CheckPrices(numbers, path, {"input", "output", "cache_read", "cache_write"}));
    if (!p.contains("input") || !p.contains("output"))
      return Status::ParseError(path + ": needs input and output");
    ModelPrice price;
    price.input = p["input"].get<double>();
    price.output = p["output"].get<double>();
    if (p.contains("cache_read")) price.cache_read = p["cache_read"].get<double>();
    if (p.contains("cache_write")) price.cache_write = p["cache_write"].get<double>();
    table.prices_[name] = price;
    for (const std::string& alias : aliases) table.aliases_[alias] = name;
  }
  if (j.contains("providers")) {
    if (!j["providers"].is_object()) return Status::ParseError("prices.providers: must be an object");
    for (const auto& [name, p] : j["providers"].items()) {
      KFORGE_RETURN_IF_ERROR(CheckPrices(p, "prices.providers." + name, {"cache_read", "cache_write"}));
      table.cache_rules_[name] = CacheRule{p.value("cache_read", 1.0), p.value("cache_write", 1.0)};
    }
  }
  return table;
}

StatusOr<PriceTable> PriceTable::Load(const std::string& path) {
  StatusOr<std::string> text = common::ReadFile(path);
  if (!text.ok()) return Status::NotFound(path + ": cannot open price table");
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Status::ParseError(path + ": not valid JSON");
  StatusOr<PriceTable> t = FromJson(j);
  if (!t.ok()) return t.status().WithContext(path);
  return t;
}

std::string PriceTable::Undated(const std::string& model) {
  auto digits = [&model](size_t from, size_t n) {
    if (from + n > model.size()) return false;
    for (size_t i = from; i < from + n; ++i)
      if (!std::isdigit(static_cast<unsigned char>(model[i]))) return false;
    return true;
  };
  const size_t n = model.size();
  if (n > 7 && model.compare(n - 7, 7, "-latest") == 0) return model.substr(0, n - 7);
  // -20250929 or @20250929 (Anthropic, Vertex)
  if (n > 9 && (model[n - 9] == '-' || model[n - 9] == '@') && digits(n - 8, 8)) return model.substr(0, n - 9);
  // -2024-08-06 (OpenAI)
  if (n > 11 && model[n - 11] == '-' && digits(n - 10, 4) && model[n - 6] == '-' && digits(n - 5, 2) &&
      model[n - 3] == '-' && digits(n - 2, 2))
    return model.substr(0, n - 11);
  return model;
}

void PriceTable::MergeOver(const PriceTable& over) {
  for (const auto& [name, price] : over.prices_) {
    prices_[name] = price;
    aliases_.erase(name);  // the name is an entry of its own now
  }
  for (const auto& [alias, name] : over.aliases_) aliases_[alias] = name;
  for (const auto& [provider, rule] : over.cache_rules_) cache_rules_[provider] = rule;
}

std::optional<ModelPrice> PriceTable::Find(const std::string& model) const {
  for (const std::string& name : {model, Undated(model)}) {
    if (auto it = prices_.find(name); it != prices_.end()) return it->second;
    if (auto it = aliases_.find(name); it != aliases_.end()) return prices_.at(it->second);
  }
  // "vendor/model" (OpenRouter, LiteLLM) is priced as the model.
  if (size_t slash = model.rfind('/'); slash != std::string::npos && slash + 1 < model.size())
    return Find(model.substr(slash + 1));
  return std::nullopt;
}

std::optional<ModelPrice> PriceTable::Find(const std::string& provider, const std::string& model) const {
  std::optional<ModelPrice> p = Find(model);
  if (!p) return std::nullopt;
  // replay and exec have no rule of their own: the model's maker decides.
  auto it = cache_rules_.find(provider);
  if (it == cache_rules_.end())
    it = cache_rules_.find(
        ProviderKindName(model.rfind("claude", 0) == 0 ? ProviderKind::kAnthropic : ProviderKind::kOpenAi));
  const CacheRule rule = it == cache_rules_.end() ? CacheRule{} : it->second;
  if (!p->cache_read) p->cache_read = p->input * rule.read;
  if (!p->cache_write) p->cache_write = p->input * rule.write;
  return p;
}

std::optional<double> PriceTable::Cost(const std::string& provider, const std::string& model,
                                       const Usage& u) const {
  std::optional<ModelPrice> p = Find(provider, model);
  if (!p) return std::nullopt;
  return (u.input_tokens * p->input + u.output_tokens * p->output + u.cache_read_tokens * *p->cache_read +
          u.cache_write_tokens * *p->cache_write) /
         1e6;
}

}  // namespace kforge::llm
