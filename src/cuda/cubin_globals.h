// The writable module-scope variables of a CUBIN (`__device__` and `__managed__`): the object symbols
// of its `.nv.global` (zero at load) and `.nv.global.init` (initialised) sections, read from the ELF
// bytes alone, with no GPU. The worker restores each to its image at load before every run of a
// candidate, so no state survives from one run to the next.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/status.h"

namespace kforge::cuda {

struct CubinGlobal {
  std::string name;  ///< the symbol, mangled for C++ names ("_ZN2ns2d2E")
  uint64_t bytes = 0;
};

/// In symbol-table order; variables of size 0 are left out. InvalidArgument naming what is wrong when
/// the bytes are not a 64-bit little-endian ELF file with a well-formed symbol table.
StatusOr<std::vector<CubinGlobal>> CubinGlobals(std::string_view cubin);

}  // namespace kforge::cuda
