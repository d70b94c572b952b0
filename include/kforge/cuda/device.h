// The GPU a worker runs on: presence, limits and identity.
#pragma once

#include <cstdint>
#include <string>

#include "kforge/common/status.h"
#include "kforge/common/verdict_parts.h"

namespace kforge::cuda {

/// Limits and identity of one device, read once by the worker.
struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_block_dims[3] = {0, 0, 0};
  int max_grid_dims[3] = {0, 0, 0};
  size_t shared_per_block = 0;        ///< Without opting in.
  size_t shared_per_block_optin = 0;  ///< Upper bound for dynamic shared memory.
  size_t total_memory = 0;
  int l2_bytes = 0;
  /// The record form verdicts and bench records keep.
  common::DeviceRecord Record() const;
};

/// Number of usable CUDA devices; 0 (not an error) when there is no driver or no GPU.
int DeviceCount();

/// Makes `index` current on this thread and reads its properties.
StatusOr<DeviceInfo> OpenDevice(int index);

}  // namespace kforge::cuda
