// Recursive-descent evaluator for shape expressions (grammar in docs/formats.md).
#include "kforge/common/expr.h"

#include <cctype>
#include <cstdint>
#include <limits>

namespace kforge::common {
namespace {

class Evaluator {
 public:
  Evaluator(std::string_view text, const ExprEnv* env) : text_(text), env_(env) {}

  StatusOr<int64_t> Run() {
    if (text_.size() > kMaxLength) return Fail("expression longer than 1024 characters");
    auto value = Sum();
    if (!error_.empty()) return Status::InvalidArgument(error_);
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return value;
  }

 private:
  static constexpr size_t kMaxLength = 1024;
  static constexpr int kMaxDepth = 64;

  Status Fail(const std::string& what) {
    if (error_.empty()) {
      error_ = "in \"" + std::string(text_) + "\" at " + std::to_string(pos_ + 1) + ": " + what;
    }
    return Status::InvalidArgument(error_);
  }
  bool failed() const { return !error_.empty(); }

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

  int64_t Checked(bool overflow, int64_t value) {
    if (overflow) Fail("integer overflow");
    return value;
  }

  int64_t Sum() {
    int64_t value = Product();
    while (!failed()) {
      if (Eat('+')) {
        int64_t rhs = Product();
        int64_t out;
        bool overflow = __builtin_add_overflow(value, rhs, &out);
        value = Checked(overflow, out);
      } else if (Eat('-')) {
        int64_t rhs = Product();
        int64_t out;
        bool overflow = __builtin_sub_overflow(value, rhs, &out);
        value = Checked(overflow, out);
      } else {
        break;
      }
    }
    return value;
  }

  int64_t Product() {
    int64_t value = Unary();
    while (!failed()) {
      SkipSpace();
      size_t op_pos = pos_;
      char op = 0;
      if (Eat('*'))
        op = '*';
      else if (Eat('/'))
        op = '/';
      else if (Eat('%'))
        op = '%';
      else
        break;
      int64_t rhs = Unary();
      if (failed()) break;
      if (rhs == 0 && op != '*') pos_ = op_pos;  // point at the operator, not past the divisor
      value = Apply(op, value, rhs);
    }
    return value;
  }

  int64_t Apply(char op, int64_t a, int64_t b) {
    int64_t out = 0;
    if (op == '*') {
      bool overflow = __builtin_mul_overflow(a, b, &out);
      return Checked(overflow, out);
    }
    if (b == 0) {
      Fail(op == '/' ? "division by zero" : "modulo by zero");
      return 0;
    }
    if (a == std::numeric_limits<int64_t>::min() && b == -1) return Checked(true, 0);
    return op == '/' ? a / b : a % b;
  }

  int64_t Unary() {
    if (++depth_ > kMaxDepth) {
      Fail("expression nested too deeply");
      return 0;
    }
    int64_t value;
    if (Eat('-')) {
      int64_t inner = Unary();
      value = Checked(inner == std::numeric_limits<int64_t>::min(), -inner);
    } else if (Eat('+')) {
      value = Unary();
    } else {
      value = Primary();
    }
    --depth_;
    return value;
  }

  int64_t Primary() {
    SkipSpace();
    if (pos_ >= text_.size()) {
      Fail("unexpected end of expression");
      return 0;
    }
    char c = text_[pos_];
    if (Eat('(')) {
      int64_t value = Sum();
      Expect(')');
      return value;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return Number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return Name();
    Fail("unexpected '" + std::string(1, c) + "'");
    return 0;
  }

  int64_t Number() {
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

  int64_t Name() {
    size_t start = pos_;
    std::string name = Identifier();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '(') return Call(name, start);
    if (env_ == nullptr) return 1;  // syntax check only
    std::optional<int64_t> value = env_->symbol ? env_->symbol(name) : std::nullopt;
    if (!value) {
      pos_ = start;
      Fail("unknown symbol \"" + name + "\"");
      return 0;
    }
    return *value;
  }

  int64_t Call(const std::string& fn, size_t start) {
    Expect('(');
    if (fn == "numel" || fn == "size") {
      SkipSpace();
      size_t arg_pos = pos_;
      std::string tensor = Identifier();
      if (tensor.empty()) {
        Fail(fn + "() takes a tensor name");
        return 0;
      }
      int64_t dim = 0;
      if (fn == "size") {
        Expect(',');
        dim = Sum();
      }
      Expect(')');
      if (failed() || env_ == nullptr) return 1;
      std::optional<std::vector<int64_t>> shape = env_->shape ? env_->shape(tensor) : std::nullopt;
      if (!shape) {
        pos_ = arg_pos;
        Fail("unknown tensor \"" + tensor + "\"");
        return 0;
      }
      if (fn == "numel") {
        int64_t n = 1;
        for (int64_t d : *shape) {
          if (__builtin_mul_overflow(n, d, &n)) return Checked(true, 0);
        }
        return n;
      }
      int64_t rank = static_cast<int64_t>(shape->size());
      int64_t index = dim < 0 ? dim + rank : dim;
      if (index < 0 || index >= rank) {
        Fail("size(" + tensor + ", " + std::to_string(dim) + "): tensor has rank " + std::to_string(rank));
        return 0;
      }
      return (*shape)[index];
    }
    if (fn == "cdiv" || fn == "min" || fn == "max") {
      int64_t a = Sum();
      Expect(',');
      int64_t b = Sum();
      Expect(')');
      if (failed()) return 0;
      if (fn == "min") return a < b ? a : b;
      if (fn == "max") return a > b ? a : b;
      if (b == 0) {
        Fail("cdiv by zero");
        return 0;
      }
      int64_t q = a / b;
      return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
    }
    pos_ = start;
    Fail("unknown function \"" + fn + "\"");
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
