// Constructors of the concrete providers behind MakeProvider.
#pragma once

#include <memory>
#include <string>

#include "kforge/common/status.h"
#include "kforge/llm/provider.h"

namespace kforge::llm {

/// `api_key` is kept in memory only, sent in a header, and masked out of error messages.
std::unique_ptr<Provider> MakeAnthropicProvider(std::string base_url, std::string api_key,
                                                const ProviderOptions& o);
/// The same API through Message Batches (ProviderOptions::batch_api).
std::unique_ptr<Provider> MakeAnthropicBatchProvider(std::string base_url, std::string api_key,
                                                     const ProviderOptions& o);
/// An empty `api_key` sends no Authorization header (local servers).
std::unique_ptr<Provider> MakeOpenAiProvider(std::string base_url, std::string api_key,
                                             const ProviderOptions& o);
/// The same API through the Batch API (ProviderOptions::batch_api): uploaded files, /batches.
std::unique_ptr<Provider> MakeOpenAiBatchProvider(std::string base_url, std::string api_key,
                                                  const ProviderOptions& o);
StatusOr<std::unique_ptr<Provider>> MakeReplayProvider(const std::string& path);
std::unique_ptr<Provider> MakeExecProvider(std::string command, const ProviderOptions& o);

}  // namespace kforge::llm
