// Recursive-descent evaluator for shape expressions (grammar in docs/formats.md).
#include "kforge/common/expr.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <optional>

#include "kforge/common/text.h"

namespace kforge::common {
namespace {

// Values are nullopt only while checking syntax (no environment): a name's value is unknown, and
// so is anything computed from it. Errors that do not depend on names (`N / 0`, a literal that
// overflows) are still found then; errors that do (`cdiv(N, B - 1)`) wait for real values.
using Value = std::optional<int64_t>;

class Evaluator {
 public:
  Evaluator(std::string_view text, const ExprEnv* env) : text_(text), env_(env) {}

  StatusOr<int64_t> Run() {
    if (text_.size() > kMaxLength) {
      return Status::InvalidArgument("in " + Quote(text_, kEchoBytes) + ": expression of " +
                                     std::to_string(text_.size()) + " characters, over the " +
                                     std::to_string(kMaxLength) + "-character limit");
    }
    Value value = Sum();
    if (!error_.empty()) return Status::InvalidArgument(error_);
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected " + CharText(text_[pos_]));
    return value.value_or(1);
  }

 private:
  static constexpr size_t kMaxLength = 1024;
  static constexpr size_t kEchoBytes = 60;  ///< Of the expression, in error messages.
  static constexpr int kMaxDepth = 64;
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

  Status Fail(const std::string& what) {
    if (error_.empty()) {
      error_ = "in " + Quote(text_, kEchoBytes) + " at " + std::to_string(pos_ + 1) + ": " + what;
    }
    return Status::InvalidArgument(error_);
  }
  bool failed() const { return !error_.empty(); }

  /// 'c' for a printable character, else its escape ("\x01").
  static std::string CharText(char c) {
    if (c > ' ' && c < 0x7f && c != '\'') return std::string("'") + c + "'";
    return Quote(std::string_view(&c, 1));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Eat(c)) Fail(std::string("expected '") + c + "'");
  }

  Value Overflow() {
    Fail("integer overflow");
    return 0;
  }

  Value Sum() {
    Value value = Product();
    while (!failed()) {
      char op = Eat('+') ? '+' : Eat('-') ? '-' : 0;
      if (op == 0) break;
      Value rhs = Product();
      if (failed()) break;
      if (!value || !rhs) {
        value = std::nullopt;
        continue;
      }
      int64_t out;
      bool overflow =
          op == '+' ? __builtin_add_overflow(*value, *rhs, &out) : __builtin_sub_overflow(*value, *rhs, &out);
      value = overflow ? Overflow() : Value(out);
    }
    return value;
  }

  Value Product() {
    Value value = Unary();
    while (!failed()) {
      SkipSpace();
      size_t op_pos = pos_;
      char op = Eat('*') ? '*' : Eat('/') ? '/' : Eat('%') ? '%' : 0;
      if (op == 0) break;
      Value rhs = Unary();
      if (failed()) break;
      if (rhs && *rhs == 0 && op != '*') pos_ = op_pos;  // point at the operator, not past the divisor
      value = Apply(op, value, rhs);
    }
    return value;
  }

  Value Apply(char op, Value a, Value b) {
    if (op != '*' && b && *b == 0) {
      Fail(op == '/' ? "division by zero" : "modulo by zero");
      return 0;
    }
    if (!a || !b) return std::nullopt;
    int64_t out = 0;
    if (op == '*') return __builtin_mul_overflow(*a, *b, &out) ? Overflow() : Value(out);
    if (*b == -1) {  // INT64_MIN / -1 overflows, and INT64_MIN % -1 traps on x86
      if (op == '%') return 0;
      return *a == kMin ? Overflow() : Value(-*a);
    }
    return op == '/' ? *a / *b : *a % *b;
  }

  Value Unary() {
    if (++depth_ > kMaxDepth) {
      Fail("expression nested too deeply");
      return 0;
    }
    Value value;
    if (Eat('-')) {
      Value inner = Unary();
      if (!inner) {
        value = std::nullopt;
      } else {
        value = *inner == kMin ? Overflow() : Value(-*inner);
      }
    } else if (Eat('+')) {
      value = Unary();
    } else {
      value = Primary();
    }
    --depth_;
    return value;
  }

  Value Primary() {
    SkipSpace();
    if (pos_ >= text_.size()) {
      Fail("unexpected end of expression");
      return 0;
    }
    char c = text_[pos_];
    if (Eat('(')) {
      Value value = Sum();
      Expect(')');
      return value;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return Number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return Name();
    Fail("unexpected " + CharText(c));
    return 0;
  }

  Value Number() {
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int64_t out;
      if (__builtin_mul_overflow(value, 10, &out) || __builtin_add_overflow(out, text_[pos_] - '0', &out)) {
        Fail("integer literal too large");
        return 0;
      }
      value = out;
      ++pos_;
    }
    return value;
  }

  std::string Identifier() {
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  Value Name() {
    size_t start = pos_;
    std::string name = Identifier();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '(') return Call(name, start);
    if (env_ == nullptr) return std::nullopt;  // syntax check only
    std::optional<int64_t> value = env_->symbol ? env_->symbol(name) : std::nullopt;
    if (!value) {
      pos_ = start;
      Fail("unknown symbol " + Quote(name));
      return 0;
    }
    return *value;
  }

  Value Call(const std::string& fn, size_t start) {
    Expect('(');
    if (fn == "numel" || fn == "size") {
      SkipSpace();
      size_t arg_pos = pos_;
      std::string tensor = Identifier();
      if (tensor.empty()) {
        Fail(fn + "() takes a tensor name");
        return 0;
      }
      Value dim = 0;
      if (fn == "size") {
        Expect(',');
        dim = Sum();
      }
      Expect(')');
      if (failed()) return 0;
      if (env_ == nullptr) return std::nullopt;
      std::optional<std::vector<int64_t>> shape = env_->shape ? env_->shape(tensor) : std::nullopt;
      if (!shape) {
        pos_ = arg_pos;
        Fail("unknown tensor " + Quote(tensor));
        return 0;
      }
      if (fn == "numel") {
        int64_t n = 1;
        for (int64_t d : *shape) {
          if (__builtin_mul_overflow(n, d, &n)) return Overflow();
        }
        return n;
      }
      int64_t rank = static_cast<int64_t>(shape->size());
      int64_t index = *dim < 0 && *dim >= -rank ? *dim + rank : *dim;
      if (index < 0 || index >= rank) {
        Fail("size(" + tensor + ", " + std::to_string(*dim) + "): tensor has rank " + std::to_string(rank));
        return 0;
      }
      return (*shape)[index];
    }
    if (fn == "cdiv" || fn == "min" || fn == "max") {
      Value a = Sum();
      Expect(',');
      Value b = Sum();
      Expect(')');
      if (failed()) return 0;
      if (fn == "cdiv" && b && *b == 0) {
        Fail("cdiv by zero");
        return 0;
      }
      if (!a || !b) return std::nullopt;
      if (fn == "min") return std::min(*a, *b);
      if (fn == "max") return std::max(*a, *b);
      if (*a == kMin && *b == -1) return Overflow();  // the quotient, 2^63, does not fit
      int64_t q = *a / *b;
      return (*a % *b != 0 && ((*a < 0) == (*b < 0))) ? q + 1 : q;
    }
    pos_ = start;
    Fail("unknown function " + Quote(fn));
    return 0;
  }

  std::string_view text_;
  const ExprEnv* env_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string error_;
};

}  // namespace

StatusOr<int64_t> EvalExpr(std::string_view text, const ExprEnv& env) { return Evaluator(text, &env).Run(); }

Status ParseExpr(std::string_view text) {
  auto result = Evaluator(text, nullptr).Run();
  return result.ok() ? Status::Ok() : result.status();
}

}  // namespace kforge::common
