// Reading NVRTC's log and side outputs: per-kernel resources from the ptxas verbose lines, path
// shortening, and the audit of which files a compile read.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/cuda/compiler.h"

namespace kforge::cuda::internal {

/// Fills `kernels` from the `ptxas info` lines of `log` and returns the log without them
/// (ptxas warnings and errors stay).
std::string ExtractPtxasInfo(std::string_view log, std::map<std::string, KernelInfo>* kernels);

/// A directory prefix and the short name it is replaced with in logs ("<cccl>").
struct PathAlias {
  std::string dir;
  std::string alias;
};

/// Replaces every `dir/` of `aliases` (longest first) with `alias/`.
std::string ShortenPaths(std::string log, std::vector<PathAlias> aliases);

/// True when every absolute path in `log` lies under one of `dirs` and every diagnostic location
/// ("file(line): ") is `program` or such a path.
bool LogNamesOnlyAllowedFiles(std::string_view log, std::string_view program,
                              const std::vector<std::string>& dirs);

/// The headers listed in an NVRTC --fdevice-time-trace file; false when it cannot be parsed.
bool ReadOpenedHeaders(const std::string& trace_json, std::vector<std::string>* headers);

/// True when `path` is an NVRTC builtin header or lies under one of `dirs` (lexically).
bool IsAllowedOpenedFile(std::string_view path, const std::vector<std::string>& dirs);

/// The first line of `log` that reports an error, or its first line; at most 200 characters.
std::string FirstErrorLine(std::string_view log);

}  // namespace kforge::cuda::internal
