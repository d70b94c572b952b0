// What a CUBIN's symbol table says about state that could outlive a run, read from the ELF bytes alone,
// with no GPU: the writable module-scope variables (`__device__` and `__managed__`: the object symbols of
// its `.nv.global` and `.nv.global.init` sections), which the worker restores to their image at load
// before every run, and the functions it imports, among them the device heap's `malloc`, which the
// compiler refuses.
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

/// The functions the CUBIN calls but does not define, resolved by the driver at load (`malloc`, `free`,
/// `vprintf`), in symbol-table order. Errors as CubinGlobals.
StatusOr<std::vector<std::string>> CubinImports(std::string_view cubin);

}  // namespace kforge::cuda
