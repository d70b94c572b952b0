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

/// The files `log` shows the compile read: the file of each diagnostic location ("<file>(<line>): "
/// at the start of a line) and of each instantiation context ("at line <n> of <file>"). A path
/// anywhere else (a source line quoted under a diagnostic, a string literal) is not a file read.
std::vector<std::string> FilesNamedInLog(std::string_view log);

/// True when every file of FilesNamedInLog(log) is `program` or passes IsAllowedOpenedFile.
bool LogNamesOnlyAllowedFiles(std::string_view log, std::string_view program,
                              const std::vector<std::string>& dirs,
                              const std::vector<std::string>& in_memory = {});

/// The headers listed in an NVRTC --fdevice-time-trace file; false when it cannot be parsed.
bool ReadOpenedHeaders(const std::string& trace_json, std::vector<std::string>* headers);

/// True when `path` is an NVRTC builtin (`__nv...`, such as its name-expression map), one of the
/// `in_memory` headers kforge handed to NVRTC, or an absolute path under one of `dirs` (lexically).
bool IsAllowedOpenedFile(std::string_view path, const std::vector<std::string>& dirs,
                         const std::vector<std::string>& in_memory = {});

/// NVRTC's file of name expressions, as its diagnostics name it.
inline constexpr std::string_view kNameMapFile = "__nv_name_map";

/// True when `log` reports errors and every one is located in kNameMapFile: the compile failed
/// only because a name expression named nothing.
bool ErrorsOnlyInNameMap(std::string_view log);

/// For each of `names` that a kNameMapFile error concerns, that error's text ("identifier "x" is
/// undefined"), matched through the `#pragma nv_mangled_name <name>` line quoted under it.
std::map<std::string, std::string> NameMapErrors(std::string_view log, const std::vector<std::string>& names);

/// The first line of `log` that reports an error, or its first line; at most 200 characters.
std::string FirstErrorLine(std::string_view log);

}  // namespace kforge::cuda::internal
