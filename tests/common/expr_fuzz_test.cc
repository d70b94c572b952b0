// Fuzzes the shape-expression evaluator against a 128-bit reference evaluator: every input either
// gets the exact value or an error (never a signal), errors are one bounded line, and the syntax
// check accepts whatever evaluates. Seeds: the expressions in examples/ and tasks/.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/fuzz.h"
#include "kforge/common/expr.h"

namespace kforge::common {
namespace {

const std::map<std::string, int64_t> kSymbols = {{"N", 1000}, {"B", 16},          {"D", 4096},
                                                 {"H", 7},    {"BIG", INT64_MAX}, {"SMALL", INT64_MIN}};
const std::map<std::string, std::vector<int64_t>> kShapes = {
    {"x", {16, 4096}}, {"w", {3, 3, 3, 8}}, {"e", {}}, {"z", {0, 5}}, {"h", {int64_t{1} << 40, 1 << 30}}};

ExprEnv Env() {
  ExprEnv env;
  env.symbol = [](std::string_view name) -> std::optional<int64_t> {
    auto it = kSymbols.find(std::string(name));
    return it == kSymbols.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  env.shape = [](std::string_view name) -> std::optional<std::vector<int64_t>> {
    auto it = kShapes.find(std::string(name));
    return it == kShapes.end() ? std::nullopt : std::optional<std::vector<int64_t>>(it->second);
  };
  return env;
}

/// The grammar of docs/formats.md in 128-bit arithmetic: a value, or nullopt for any error
/// (syntax, unknown name, division by zero, a result or intermediate outside int64).
class Reference {
 public:
  explicit Reference(std::string_view text) : t_(text) {}

  std::optional<int64_t> Run() {
    if (t_.size() > 1024) return std::nullopt;
    Int v = Sum();
    Space();
    if (p_ != t_.size()) err_ = true;
    if (err_) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  bool too_deep() const { return deep_; }

 private:
  using Int = __int128;
  Int Check(Int v) {
    if (v < INT64_MIN || v > INT64_MAX) err_ = true;
    return err_ ? 0 : v;
  }
  void Space() {
    while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
  }
  bool Eat(char c) {
    Space();
    if (p_ < t_.size() && t_[p_] == c) return ++p_, true;
    return false;
  }
  void Expect(char c) {
    if (!Eat(c)) err_ = true;
  }
  Int Sum() {
    Int v = Product();
    while (!err_) {
      if (Eat('+'))
        v = Check(v + Product());
      else if (Eat('-'))
        v = Check(v - Product());
      else
        break;
    }
    return v;
  }
  Int Product() {
    Int v = Unary();
    while (!err_) {
      char op = Eat('*') ? '*' : Eat('/') ? '/' : Eat('%') ? '%' : 0;
      if (op == 0) break;
      Int r = Unary();
      if (err_) break;
      if (op == '*') {
        v = Check(v * r);
      } else if (r == 0 || (op == '/' && v == INT64_MIN && r == -1)) {
        err_ = true;
      } else {
        v = op == '/' ? v / r : v % r;
      }
    }
    return v;
  }
  Int Unary() {
    if (++depth_ > 60) deep_ = err_ = true;
    if (err_) return 0;
    Int v = Eat('-') ? Check(-Unary()) : Eat('+') ? Unary() : Primary();
    --depth_;
    return v;
  }
  std::string Word() {
    size_t start = p_;
    while (p_ < t_.size() &&
           (std::isalnum(static_cast<unsigned char>(t_[p_])) || t_[p_] == '_' || t_[p_] == '.'))
      ++p_;
    return std::string(t_.substr(start, p_ - start));
  }
  Int Primary() {
    Space();
    if (p_ >= t_.size()) return err_ = true, 0;
    char c = t_[p_];
    if (Eat('(')) {
      Int v = Sum();
      Expect(')');
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      Int v = 0;
      while (p_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[p_])))
        v = Check(v * 10 + (t_[p_++] - '0'));
      return v;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') return err_ = true, 0;
    std::string name = Word();
    Space();
    if (p_ < t_.size() && t_[p_] == '(') return Call(name);
    auto it = kSymbols.find(name);
    if (it == kSymbols.end()) return err_ = true, 0;
    return it->second;
  }
  Int Call(const std::string& fn) {
    Expect('(');
    if (fn == "numel" || fn == "size") {
      Space();
      std::string tensor = Word();
      Int dim = 0;
      if (fn == "size") {
        Expect(',');
        dim = Sum();
      }
      Expect(')');
      auto it = kShapes.find(tensor);
      if (err_ || it == kShapes.end()) return err_ = true, 0;
      const std::vector<int64_t>& shape = it->second;
      if (fn == "numel") {
        Int n = 1;
        for (int64_t d : shape) n = Check(n * d);
        return n;
      }
      Int rank = static_cast<Int>(shape.size());
      Int index = dim < 0 ? dim + rank : dim;
      if (index < 0 || index >= rank) return err_ = true, 0;
      return shape[static_cast<size_t>(index)];
    }
    if (fn != "cdiv" && fn != "min" && fn != "max") return err_ = true, 0;
    Int a = Sum();
    Expect(',');
    Int b = Sum();
    Expect(')');
    if (err_) return 0;
    if (fn == "min") return a < b ? a : b;
    if (fn == "max") return a > b ? a : b;
    if (b == 0) return err_ = true, 0;
    Int q = a / b;
    return Check((a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q);
  }

  std::string_view t_;
  size_t p_ = 0;
  int depth_ = 0;
  bool err_ = false;
  bool deep_ = false;
};

// Every string in a JSON document that reads as an expression ("i64:" prefixes dropped).
void CollectExpressions(const nlohmann::json& j, std::set<std::string>& out) {
  if (j.is_structured()) {
    for (const auto& item : j) CollectExpressions(item, out);
  } else if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s.size() > 4 && s[3] == ':') s = s.substr(4);
    if (s.size() < 200 && ParseExpr(s).ok()) out.insert(s);
  } else if (j.is_number_integer()) {
    out.insert(j.dump());
  }
}

std::vector<std::string> Seeds() {
  std::set<std::string> exprs = {"cdiv(N, 256)", "size(x, -1)", "numel(w) / max(B, 1) % 7", "-(H - 8) * 3",
                                 "min(numel(z), size(h, 0))"};
  std::string root = KFORGE_SOURCE_DIR;
  for (const char* dir : {"/examples", "/tasks", "/tests"}) {
    for (const std::string& text : fakes::ReadFilesUnder(root + dir, ".json")) {
      nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (!j.is_discarded()) CollectExpressions(j, exprs);
    }
  }
  return {exprs.begin(), exprs.end()};
}

std::string Outcome(const StatusOr<int64_t>& value);

// The outcome: "ok" with the value's sign and magnitude, or the error without the echoed text; then
// the functions and operators the input uses, so that each combination is worth keeping.
std::string Label(const std::string& text, const StatusOr<int64_t>& value) {
  std::string used = "|";
  for (const char* token : {"cdiv(", "min(", "max(", "numel(", "size(", "/", "%", "*", "-"})
    if (text.find(token) != std::string::npos) used += token;
  return Outcome(value) + used;
}

std::string Outcome(const StatusOr<int64_t>& value) {
  if (value.ok()) {
    int bits = 0;
    for (uint64_t m = *value < 0 ? ~static_cast<uint64_t>(*value) : static_cast<uint64_t>(*value); m; m >>= 1)
      ++bits;
    return std::string("ok") + (*value < 0 ? "-" : "+") +
           std::to_string(bits == 0 ? 0 : 1 + (bits - 1) / 16) + (bits >= 63 ? "max" : "");
  }
  const std::string& m = value.status().message();
  size_t at = m.rfind(": ");
  return fakes::MessageLabel(at == std::string::npos ? m : m.substr(at));
}

fakes::FuzzOutcome Property(const std::string& text) {
  StatusOr<int64_t> got = EvalExpr(text, Env());
  Reference ref(text);
  std::optional<int64_t> want = ref.Run();
  fakes::FuzzOutcome outcome{"", Label(text, got)};
  if (!got.ok()) {
    const std::string& m = got.status().message();
    if (m.find('\n') != std::string::npos) return {"error message spans lines: " + m.substr(0, 200), ""};
    if (m.size() > 400) return {"error message of " + std::to_string(m.size()) + " bytes", ""};
  }
  if (!ref.too_deep()) {
    if (want && !got.ok())
      return {"rejected, the reference gives " + std::to_string(*want) + ": " + got.status().message(), ""};
    if (want && *got != *want)
      return {"value " + std::to_string(*got) + ", the reference gives " + std::to_string(*want), ""};
    if (!want && got.ok()) return {"evaluated to " + std::to_string(*got) + ", the reference rejects it", ""};
  }
  if (got.ok()) {
    Status syntax = ParseExpr(text);
    if (!syntax.ok()) return {"evaluates, but the syntax check rejects it: " + syntax.message(), ""};
  }
  return outcome;
}

TEST(ExprFuzzTest, EveryInputGetsTheReferenceValueOrOneLineError) {
  fakes::FuzzTarget target;
  target.name = "expr";
  target.seeds = Seeds();
  target.dictionary = {"-9223372036854775807-1",
                       "9223372036854775807",
                       "-1",
                       "0",
                       "1",
                       "4294967296",
                       "cdiv(",
                       "min(",
                       "max(",
                       "numel(",
                       "size(",
                       ",",
                       ")",
                       "(",
                       "*",
                       "/",
                       "%",
                       "-",
                       "+",
                       "BIG",
                       "SMALL",
                       "N",
                       "x",
                       "h",
                       "z",
                       "e",
                       " ",
                       "numel(h)",
                       "size(x,-3)",
                       "2147483648"};
  target.max_bytes = 2048;
  target.property = Property;
  target.mutate = [](const std::string& parent, std::mt19937_64& rng) {
    std::string e =
        fakes::RandomExpression(rng, {"N", "B", "D", "H", "BIG", "SMALL"}, {"x", "w", "e", "z", "h"});
    if (parent.empty() || rng() % 2 == 0) return e;
    size_t at = rng() % parent.size();
    return parent.substr(0, at) + e + parent.substr(at);
  };
  fakes::FuzzReport report = fakes::RunFuzz(target, fakes::FuzzSeconds(), fakes::FuzzSeed());
  std::printf("fuzz expr: %s\n", report.Summary().c_str());
  RecordProperty("executions", std::to_string(report.executions));
  EXPECT_GT(report.seeds, 20u);
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
}

// The reference itself, on known values, so that a wrong reference cannot hide a wrong evaluator.
TEST(ExprFuzzTest, ReferenceAgreesWithKnownValues) {
  struct Case {
    const char* text;
    std::optional<int64_t> value;
  } cases[] = {{"cdiv(N, 256)", 4},       {"-7 / 2", -3},
               {"cdiv(-7, 2)", -3},       {"cdiv(7, -2)", -3},
               {"size(x, -1)", 4096},     {"numel(h)", std::nullopt},
               {"BIG + 1", std::nullopt}, {"cdiv(-9223372036854775807-1, -1)", std::nullopt},
               {"1 / 0", std::nullopt},   {"(1", std::nullopt}};
  for (const Case& c : cases) EXPECT_EQ(Reference(c.text).Run(), c.value) << c.text;
}

}  // namespace
}  // namespace kforge::common
