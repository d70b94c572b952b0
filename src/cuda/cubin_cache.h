// The on-disk CUBIN cache: DIR/<key[0:2]>/<key>.cubin plus <key>.json with the metadata. Entries
// are written to a temporary name and renamed, so readers never see half an entry; entries that
// do not parse or whose CUBIN does not match its recorded hash are treated as misses.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "kforge/cuda/compiler.h"

namespace kforge::cuda::internal {

class CubinCache {
 public:
  explicit CubinCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  /// The stored result for `key` (64 hex digits) with `cached` set, or nullopt on a miss.
  std::optional<CompileResult> Load(const std::string& key) const;
  /// Stores a kOk or kCompileError result; IO failures are ignored (the cache is an optimisation).
  void Store(const std::string& key, const CompileResult& result) const;

  std::filesystem::path JsonPath(const std::string& key) const;
  std::filesystem::path CubinPath(const std::string& key) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace kforge::cuda::internal
