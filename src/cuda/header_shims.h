// Headers that models include by habit but NVRTC does not ship (<math.h>, <cstdint>, <limits>,
// <torch/extension.h>...). kforge supplies them to NVRTC in memory: C and C++ library headers as
// small NVRTC-safe equivalents, host-only headers as empty files with a warning. The table of
// them is kHeaderShims in header_shims.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kforge::cuda::internal {

/// A header kforge supplies.
struct HeaderShim {
  /// As written in an #include; a name ending in '/' stands for every header below it.
  std::string_view name;
  /// What NVRTC reads for it (empty for a dropped header).
  std::string_view text;
  /// Another shim that `text` includes, or empty.
  std::string_view needs;
  /// Set for a dropped header: why it is not needed, shown as a compile warning.
  std::string_view dropped_because;
};

/// The shim for `header` (as written between <> or ""), or nullptr.
const HeaderShim* FindHeaderShim(std::string_view header);

/// A header handed to NVRTC in memory (nvrtcCreateProgram's headers).
struct InMemoryHeader {
  std::string name;
  std::string text;
};

/// The in-memory headers a source that names `headers` needs: the shims among them and the ones
/// those include, each once. Appends one warning per dropped header to `warnings`.
std::vector<InMemoryHeader> ShimsFor(const std::vector<std::string>& headers,
                                     std::vector<std::string>* warnings);

}  // namespace kforge::cuda::internal
