// Integer shape expressions: launch sizes, scalar arguments, tensor shapes and cost formulas.
// Grammar (docs/formats.md): integers, + - * / %, parentheses, unary minus, cdiv, min, max,
// numel(t), size(t, d), and shape symbols. 64-bit signed; overflow and division by zero are errors.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/status.h"

namespace kforge::common {

/// What names mean while evaluating. Either function may be empty.
struct ExprEnv {
  /// Value of a shape symbol, or nullopt when unknown.
  std::function<std::optional<int64_t>(std::string_view)> symbol;
  /// Shape of a named tensor (for numel/size), or nullopt when unknown.
  std::function<std::optional<std::vector<int64_t>>(std::string_view)> shape;
};

/// Evaluates `text`. Errors name the expression and the position: `in "cdiv(N, 0)": division by zero`.
StatusOr<int64_t> EvalExpr(std::string_view text, const ExprEnv& env);

/// Checks syntax only (names are not resolved).
Status ParseExpr(std::string_view text);

}  // namespace kforge::common
