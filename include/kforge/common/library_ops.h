// Library ops a launch plan may call between its kernels (plan v2, `{"op": ...}` steps): the allowlist,
// each op's tensor arguments and the attributes it takes. The worker runs them with LibTorch on the
// candidate's stream; everything here is checked before anything runs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/names.h"
#include "kforge/common/status.h"

namespace kforge::common {

/// Kinds of attribute values.
enum class OpAttrKind {
  kInt,     ///< an integer
  kInts,    ///< an integer or a list of integers (dims, stride, padding, ...)
  kNumber,  ///< a number (eps, alpha, ...)
  kBool,
};

struct OpAttr {
  std::string_view name;
  OpAttrKind kind;
};

struct LibraryOp {
  std::string_view name;  ///< as in torch: "linear", "conv2d", "softmax", ...
  int min_tensors;        ///< tensor arguments, in torch's order
  int max_tensors;        ///< -1: any number (cat, stack)
  std::vector<OpAttr> attrs;
  std::string_view what;  ///< one line, for docs and errors
};

/// Which library ops a plan may call (--allow-ops): none, the allowlist below, or also any functional
/// ATen operator by its schema name (`aten::NAME[.OVERLOAD]`).
enum class OpPolicy { kLibrary, kAll, kNone };
inline constexpr NameTable<OpPolicy, 3> kOpPolicyNames = {
    {{OpPolicy::kLibrary, "library"}, {OpPolicy::kAll, "all"}, {OpPolicy::kNone, "none"}}};
static_assert(kOpPolicyNames.MatchesEnum());

/// `aten::NAME` or `aten::NAME.OVERLOAD` (lower-case identifiers): an operator outside the allowlist.
bool IsAtenOpName(std::string_view name);

/// Checks the attributes of an `aten::` op: identifier keys, values that are integers, lists of up to
/// 8 integers, numbers or booleans. Which names the operator takes is known only when it runs.
Status CheckAtenOpAttrs(const nlohmann::json& attrs, const std::string& path);

/// Every op a plan may call, in a stable order.
const std::vector<LibraryOp>& LibraryOps();

/// The op called `name`, or nullptr.
const LibraryOp* FindLibraryOp(std::string_view name);

/// Checks `attrs` (a JSON object) against `op`: known names and value kinds. Errors name `path`.
Status CheckOpAttrs(const LibraryOp& op, const nlohmann::json& attrs, const std::string& path);

/// A plan that spends more than this share of its GPU time in library ops (`op` and `fill` steps) is
/// mostly PyTorch again: its speed is the library's, not its kernels'.
inline constexpr double kMostlyLibraryOps = 0.9;

/// How much of a plan's GPU time went to library ops, as verdicts (checks.library_ops) and bench
/// records (library_ops) say it: "most_time" when `ops_fraction` > kMostlyLibraryOps, else "some_time".
std::string_view LibraryOpsShare(double ops_fraction);

}  // namespace kforge::common
