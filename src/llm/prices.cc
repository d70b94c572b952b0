// The price table: loading and cost computation.
#include "kforge/llm/prices.h"

#include <fstream>
#include <sstream>

namespace kforge::llm {

StatusOr<PriceTable> PriceTable::FromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::ParseError("prices: must be a JSON object");
  if (j.value("schema", "") != "kforge.prices/1")
    return Status::ParseError("prices.schema: must be kforge.prices/1");
  if (!j.contains("models") || !j["models"].is_object())
    return Status::ParseError("prices.models: missing object");
  PriceTable table;
  for (const auto& [name, p] : j["models"].items()) {
    const std::string path = "prices.models." + name;
    if (!p.is_object()) return Status::ParseError(path + ": must be an object");
    for (const auto& [field, value] : p.items()) {
      if (field != "input" && field != "output" && field != "cache_read" && field != "cache_write")
        return Status::ParseError(path + "." + field + ": unknown field");
      if (!value.is_number() || value.get<double>() < 0)
        return Status::ParseError(path + "." + field + ": must be a non-negative number");
    }
    if (!p.contains("input") || !p.contains("output"))
      return Status::ParseError(path + ": needs input and output");
    ModelPrice price;
    price.input = p["input"].get<double>();
    price.output = p["output"].get<double>();
    price.cache_read = p.value("cache_read", price.input);
    price.cache_write = p.value("cache_write", price.input);
    table.prices_[name] = price;
  }
  return table;
}

StatusOr<PriceTable> PriceTable::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot open price table");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
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

std::optional<double> PriceTable::Cost(const std::string& model, const Usage& u) const {
  std::optional<ModelPrice> p = Find(model);
  if (!p) return std::nullopt;
  return (u.input_tokens * p->input + u.output_tokens * p->output + u.cache_read_tokens * p->cache_read +
          u.cache_write_tokens * p->cache_write) /
         1e6;
}

}  // namespace kforge::llm
