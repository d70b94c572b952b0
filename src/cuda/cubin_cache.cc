// See cubin_cache.h.
#include "cuda/cubin_cache.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "kforge/common/files.h"
#include "kforge/common/hash.h"
#include "kforge/common/json_fields.h"

namespace kforge::cuda::internal {
namespace {

constexpr const char* kSchema = "kforge.cubin_cache/2";

}  // namespace

std::filesystem::path CubinCache::JsonPath(const std::string& key) const {
  return dir_ / key.substr(0, 2) / (key + ".json");
}

std::filesystem::path CubinCache::CubinPath(const std::string& key) const {
  return dir_ / key.substr(0, 2) / (key + ".cubin");
}

std::optional<CompileResult> CubinCache::Load(const std::string& key) const {
  const StatusOr<std::string> text = common::ReadFile(JsonPath(key));
  if (!text.ok()) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  try {
    if (!j.is_object() || j.at("schema") != kSchema || j.at("key") != key) return std::nullopt;
    CompileResult r;
    const std::optional<CompileStatus> status = kCompileStatusNames.Parse(j.at("status").get<std::string>());
    if (status != CompileStatus::kOk && status != CompileStatus::kCompileError) return std::nullopt;  // never cached
    r.status = *status;
    r.message = j.at("message").get<std::string>();
    r.log = j.at("log").get<std::string>();
    r.lowered_names = j.at("lowered_names").get<std::map<std::string, std::string>>();
    r.name_errors = j.at("name_errors").get<std::map<std::string, std::string>>();
    for (const auto& [name, k] : j.at("kernels").items()) {
      r.kernels[name] = KernelInfo{k.at("registers").get<int>(), k.at("spill_store_bytes").get<int>(),
                                   k.at("spill_load_bytes").get<int>(), k.at("stack_bytes").get<int>(),
                                   k.at("shared_bytes").get<int>()};
    }
    if (r.status == CompileStatus::kOk) {
      StatusOr<std::string> cubin = common::ReadFile(CubinPath(key));
      if (!cubin.ok() || cubin->empty() || common::Sha256Hex(*cubin) != j.at("cubin_sha256").get<std::string>()) {
        return std::nullopt;
      }
      r.cubin = std::move(*cubin);
    }
    r.cached = true;
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void CubinCache::Store(const std::string& key, const CompileResult& result) const {
  if (result.status != CompileStatus::kOk && result.status != CompileStatus::kCompileError) return;
  std::error_code ec;
  std::filesystem::create_directories(JsonPath(key).parent_path(), ec);
  if (ec) return;
  nlohmann::json kernels = common::KernelStatsToJson(result.kernels);
  nlohmann::json j = {{"schema", kSchema},
                      {"key", key},
                      {"status", std::string(CompileStatusName(result.status))},
                      {"message", result.message},
                      {"log", result.log},
                      {"kernels", kernels},
                      {"lowered_names", result.lowered_names},
                      {"name_errors", result.name_errors},
                      {"cubin_sha256", common::Sha256Hex(result.cubin)},
                      {"cubin_bytes", result.cubin.size()}};
  // The CUBIN goes first: the JSON is the commit record that makes the entry visible.
  if (result.status == CompileStatus::kOk && !common::WriteFileAtomic(CubinPath(key), result.cubin).ok()) return;
  common::WriteFileAtomic(JsonPath(key), common::JsonText(j));
}

}  // namespace kforge::cuda::internal
