// Outputs that candidates doing no real work would leave, made on the device for `kforge tasks audit`:
// what a judge must refuse on every task whose outputs depend on its inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "kforge/common/dtype.h"
#include "kforge/common/status.h"
#include "kforge/reference/tensor.h"

namespace kforge::reference {

/// `src`'s elements in order, cast to `dtype`, repeated or cut to fill `shape` (a kernel that copies
/// an input into an output of another size).
StatusOr<Tensor> CopyAs(const Tensor& src, common::DType dtype, const std::vector<int64_t>& shape);

/// A copy of `t` whose second half (by flat index) is zero (a kernel that covers half its grid).
StatusOr<Tensor> FirstHalfOf(const Tensor& t);

}  // namespace kforge::reference
