// Solution: what a model writes — CUDA source plus the launch plan that runs it
// (format in docs/formats.md, schemas kforge.solution/1 and /2: /2 adds library ops, fills and views).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"

namespace kforge::common {

inline constexpr std::string_view kSolutionSchema = "kforge.solution/1";
/// Plans with op, fill or view steps.
inline constexpr std::string_view kSolutionSchemaV2 = "kforge.solution/2";
/// Largest accepted `source`, in bytes.
inline constexpr size_t kMaxSourceBytes = 256 * 1024;

/// One kernel argument: a tensor name passed as a device pointer, a typed scalar, or (plan v2) one
/// element of a tensor read from the device when the step runs (`item:NAME` or `item:NAME[EXPR]`).
struct LaunchArg {
  enum class Kind { kTensor, kI32, kI64, kU32, kU64, kF32, kF64, kItem };
  Kind kind = Kind::kTensor;
  std::string text;   ///< Tensor name (also of kItem), integer expression, or decimal number (for f32/f64).
  double number = 0;  ///< Parsed value of f32/f64 arguments.
  std::string index = "0";  ///< kItem: the element's flat index (expression)
};

/// One step of the launch plan, run in order on one stream.
struct LaunchStep {
  enum class Kind {
    kKernel,
    kMemset,
    kOp,    ///< a library op (common/library_ops.h) writing into `op_out`
    kFill,  ///< every element of `fill_target` set to `fill_value`
    kView,  ///< declares `view_name`: a window of `view_of` for later steps
  };
  Kind kind = Kind::kKernel;
  std::string kernel;                             ///< Kernel name (kKernel); see IsKernelName.
  std::vector<std::string> grid{"1", "1", "1"};   ///< Always three expressions.
  std::vector<std::string> block{"1", "1", "1"};  ///< Always three expressions.
  std::string shared_bytes = "0";                 ///< Expression.
  std::vector<LaunchArg> args;
  std::string memset_target;  ///< Tensor name (kMemset).
  double memset_value = 0;    ///< Fill value, converted to the tensor's dtype.
  std::string op;                          ///< kOp: the op's name
  std::vector<std::string> op_args;        ///< kOp: tensor names, in the op's order
  nlohmann::json op_attrs = nlohmann::json::object();  ///< kOp: attributes (dim, stride, eps, ...)
  std::string op_out;                      ///< kOp: the tensor that receives the result
  std::string fill_target;                 ///< kFill
  double fill_value = 0;                   ///< kFill: any double, inf and NaN included
  std::string view_name;                   ///< kView: the new name
  std::string view_of;                     ///< kView: the tensor it looks into
  std::string view_offset = "0";           ///< kView: first element, in elements of `view_of` (expression)
  std::vector<std::string> view_shape;     ///< kView: contiguous shape (expressions)
  std::string view_dtype;                  ///< kView: reinterpret as this dtype; empty = view_of's
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

/// Which fenced blocks of a model reply make the solution.
enum class ReplyBlocks {
  kExactlyOne,  ///< one ```cuda and one ```json block, else an error (files given to verify)
  kLast,        ///< the last of each: a reply that also quotes an earlier attempt or a fragment (generate)
};

/// Parses a solution from text: a JSON object, or a model reply holding a ```cuda block and a ```json
/// block (launches, scratch, options), chosen by `blocks`.
StatusOr<Solution> ParseSolutionText(std::string_view text, const std::string& where,
                                     ReplyBlocks blocks = ReplyBlocks::kExactlyOne);

/// Whether the plan has steps that need kforge.solution/2 (op, fill, view).
bool UsesPlanV2(const Solution& solution);

/// Canonical JSON form (schema first, every field present); schema /1 unless the plan needs /2.
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
