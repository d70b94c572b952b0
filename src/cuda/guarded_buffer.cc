// Guarded device buffers.
#include "kforge/cuda/guarded_buffer.h"

#include <cuda_runtime_api.h>
#include <cstdint>

#include <vector>

#include "kforge/cuda/check.h"

namespace kforge::cuda {
namespace {

DeviceAllocator& CurrentAllocator() {
  static DeviceAllocator allocator;
  return allocator;
}

}  // namespace

void SetDeviceAllocator(DeviceAllocator allocator) { CurrentAllocator() = allocator; }

StatusOr<std::unique_ptr<GuardedBuffer>> GuardedBuffer::Allocate(size_t bytes) {
  void* base = nullptr;
  const DeviceAllocator& allocator = CurrentAllocator();
  size_t total = bytes + 2 * kGuardBytes;
  if (allocator.allocate) {
    base = allocator.allocate(total);
    if (base == nullptr) {
      return Status::ResourceExhausted("out of device memory: cannot allocate " + std::to_string(total) + " bytes");
    }
  } else {
    KFORGE_CUDA_RETURN_IF_ERROR(cudaMalloc(&base, total));
  }
  std::unique_ptr<GuardedBuffer> buffer(new GuardedBuffer(static_cast<uint8_t*>(base), bytes));
  KFORGE_RETURN_IF_ERROR(buffer->ArmGuards());
  return buffer;
}

GuardedBuffer::~GuardedBuffer() {
  const DeviceAllocator& allocator = CurrentAllocator();
  if (allocator.free) {
    allocator.free(base_);
  } else {
    cudaFree(base_);
  }
}

Status GuardedBuffer::Fill(uint8_t byte) {
  KFORGE_CUDA_RETURN_IF_ERROR(cudaMemset(data(), byte, bytes_));
  return Status::Ok();
}

Status GuardedBuffer::CopyFrom(const void* src) {
  KFORGE_CUDA_RETURN_IF_ERROR(cudaMemcpy(data(), src, bytes_, cudaMemcpyDeviceToDevice));
  return Status::Ok();
}

Status GuardedBuffer::ArmGuards() {
  KFORGE_CUDA_RETURN_IF_ERROR(cudaMemset(base_, kGuardPattern, kGuardBytes));
  KFORGE_CUDA_RETURN_IF_ERROR(cudaMemset(base_ + kGuardBytes + bytes_, kGuardPattern, kGuardBytes));
  return Status::Ok();
}

Status GuardedBuffer::CheckGuards() const {
  std::vector<uint8_t> host(kGuardBytes);
  const struct {
    const uint8_t* start;
    const char* side;
  } sides[] = {{base_, "before"}, {base_ + kGuardBytes + bytes_, "after"}};
  for (const auto& s : sides) {
    KFORGE_CUDA_RETURN_IF_ERROR(cudaMemcpy(host.data(), s.start, kGuardBytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < kGuardBytes; ++i) {
      if (host[i] != kGuardPattern) {
        long long offset =
            s.side[0] == 'b' ? -static_cast<long long>(kGuardBytes - i) : static_cast<long long>(bytes_ + i);
        return Status::InvalidArgument(std::string("write out of bounds ") + s.side +
                                       " the buffer (byte offset " + std::to_string(offset) + ")");
      }
    }
  }
  return Status::Ok();
}

}  // namespace kforge::cuda
