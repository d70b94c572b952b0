// The price table: loading and cost computation.
#include "kforge/llm/prices.h"

#include <fstream>
#include <sstream>

#include "kforge/common/files.h"

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
  cache_rules_["anthropic"] = CacheRule{0.1, 1.25};
  cache_rules_["openai"] = CacheRule{0.5, 1.0};
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
    KFORGE_RETURN_IF_ERROR(CheckPrices(p, path, {"input", "output", "cache_read", "cache_write"}));
    if (!p.contains("input") || !p.contains("output"))
      return Status::ParseError(path + ": needs input and output");
    ModelPrice price;
    price.input = p["input"].get<double>();
    price.output = p["output"].get<double>();
    if (p.contains("cache_read")) price.cache_read = p["cache_read"].get<double>();
    if (p.contains("cache_write")) price.cache_write = p["cache_write"].get<double>();
    table.prices_[name] = price;
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

std::optional<ModelPrice> PriceTable::Find(const std::string& model) const {
  if (auto it = prices_.find(model); it != prices_.end()) return it->second;
  const ModelPrice* best = nullptr;
  size_t best_len = 0;
  for (const auto& [name, price] : prices_) {
    if (name.size() < model.size() && model.compare(0, name.size(), name) == 0 &&
        (model[name.size()] == '-' || model[name.size()] == '@') && name.size() > best_len) {
      best = &price;
      best_len = name.size();
    }
  }
  if (best) return *best;
  return std::nullopt;
}

std::optional<ModelPrice> PriceTable::Find(const std::string& provider, const std::string& model) const {
  std::optional<ModelPrice> p = Find(model);
  if (!p) return std::nullopt;
  // replay and exec have no rule of their own: the model's maker decides.
  auto it = cache_rules_.find(provider);
  if (it == cache_rules_.end())
    it = cache_rules_.find(model.rfind("claude", 0) == 0 ? "anthropic" : "openai");
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
