// Solution: what a model writes — CUDA source plus the launch plan that runs it
// (format in docs/formats.md, schema kforge.solution/1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"

namespace kforge::common {

inline constexpr std::string_view kSolutionSchema = "kforge.solution/1";
/// Largest accepted `source`, in bytes.
inline constexpr size_t kMaxSourceBytes = 256 * 1024;

/// One kernel argument: a tensor name passed as a device pointer, or a typed scalar.
struct LaunchArg {
  enum class Kind { kTensor, kI32, kI64, kU32, kU64, kF32, kF64 };
  Kind kind = Kind::kTensor;
  std::string text;   ///< Tensor name, integer expression, or decimal number (for f32/f64).
  double number = 0;  ///< Parsed value of f32/f64 arguments.
};

/// One step of the launch plan, run in order on one stream.
struct LaunchStep {
  enum class Kind { kKernel, kMemset };
  Kind kind = Kind::kKernel;
  std::string kernel;                             ///< Kernel name (kKernel); see IsKernelName.
  std::vector<std::string> grid{"1", "1", "1"};   ///< Always three expressions.
  std::vector<std::string> block{"1", "1", "1"};  ///< Always three expressions.
  std::string shared_bytes = "0";                 ///< Expression.
  std::vector<LaunchArg> args;
  std::string memset_target;  ///< Tensor name (kMemset).
  double memset_value = 0;    ///< Fill value, converted to the tensor's dtype.
};

/// A temporary buffer that kforge allocates for the candidate.
struct ScratchBuffer {
  std::string name;
  std::string dtype;
  std::vector<std::string> shape;  ///< Expressions.
};

struct Solution {
  std::string task;  ///< Task id; may be empty when the caller names the task.
  std::string source;
  std::vector<LaunchStep> launches;
  std::vector<ScratchBuffer> scratch;
  std::vector<std::string> options;
};

/// Validates and converts a solution object. `where` prefixes errors (a file name).
/// Checks structure and expression syntax; names are resolved later against the task.
StatusOr<Solution> SolutionFromJson(const nlohmann::json& json, const std::string& where);

/// Parses a solution from text: a JSON object, or a model reply holding one ```cuda block
/// and one ```json block (launches, scratch, options).
StatusOr<Solution> ParseSolutionText(std::string_view text, const std::string& where);

/// Canonical JSON form (schema first, every field present).
nlohmann::json SolutionToJson(const Solution& solution);

/// "sha256:<hex>" of the canonical JSON form: the solution's identity in records and caches.
std::string SolutionHash(const Solution& solution);

/// Ordinary identifier or module path: [A-Za-z_][A-Za-z0-9_.]*.
bool IsTensorName(std::string_view name);

/// A kernel as a launch names it: a symbol (an identifier of up to 1024 characters, such as an
/// extern "C" name or a mangled one), or a C++ name of up to 256 characters made of identifiers,
/// numbers, spaces and `: < > , * & -`, such as `ns::scale` or `softmax<float, 256>`. The second
/// form is handed to NVRTC as a name expression, so it can never hold a quote, `#`, `/`, a
/// backslash or a line break.
bool IsKernelName(std::string_view name);

}  // namespace kforge::common
