// The clock probe's PTX and its launches.
#include "bench/clock_probe.h"

#include "bench/sampling.h"
#include "kforge/cuda/check.h"

namespace kforge::bench::internal {
namespace {

// Aligning both ends to %globaltimer ticks keeps the reading exact on GPUs whose timer updates only
// every microsecond. PTX 7.0 / sm_75 so that the driver can JIT it for any device CUDA 13 supports.
constexpr char kPtx[] = R"(.version 7.0
.target sm_75
.address_size 64

.visible .entry kforge_clock_probe(.param .u64 out, .param .u64 spin_ns)
{
  .reg .pred %p<4>;
  .reg .b64 %rd<12>;

  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [spin_ns];
  mov.u64 %rd3, %globaltimer;
$L_tick:
  mov.u64 %rd4, %globaltimer;
  setp.eq.u64 %p1, %rd4, %rd3;
  @%p1 bra $L_tick;
  mov.u64 %rd5, %clock64;
$L_spin:
  mov.u64 %rd6, %globaltimer;
  sub.u64 %rd7, %rd6, %rd4;
  setp.lt.u64 %p2, %rd7, %rd2;
  @%p2 bra $L_spin;
  mov.u64 %rd8, %clock64;
  setp.eq.u64 %p3, %rd1, 0;
  @%p3 bra $L_done;
  sub.u64 %rd9, %rd8, %rd5;
  cvta.to.global.u64 %rd10, %rd1;
  st.global.u64 [%rd10], %rd9;
  st.global.u64 [%rd10+8], %rd7;
$L_done:
  ret;
}
)";

}  // namespace

std::string_view ClockProbePtx() { return kPtx; }

StatusOr<ClockProbe> ClockProbe::Load() {
  cudaLibrary_t raw = nullptr;
  KFORGE_CUDA_RETURN_IF_ERROR(cudaLibraryLoadData(&raw, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  cuda::Library library(raw);
  cudaKernel_t kernel = nullptr;
  KFORGE_CUDA_RETURN_IF_ERROR(cudaLibraryGetKernel(&kernel, library.get(), "kforge_clock_probe"));
  KFORGE_ASSIGN_OR_RETURN(cuda::HostMemory slot, cuda::AllocateMappedHost(2 * sizeof(uint64_t)));
  auto* host = static_cast<uint64_t*>(slot.get());
  host[0] = host[1] = 0;
  void* device_slot = nullptr;
  KFORGE_CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&device_slot, slot.get(), 0));
  return ClockProbe(std::move(library), kernel, std::move(slot), device_slot);
}

Status ClockProbe::Launch(cudaStream_t stream, void* out, uint64_t spin_ns) {
  void* args[] = {&out, &spin_ns};
  KFORGE_CUDA_RETURN_IF_ERROR(
      cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(1), dim3(1), args, 0, stream));
  return Status::Ok();
}

Status ClockProbe::Enqueue(cudaStream_t stream, uint64_t spin_ns) {
  auto* host = static_cast<uint64_t*>(slot_.get());
  host[0] = host[1] = 0;
  return Launch(stream, device_slot_, spin_ns);
}

Status ClockProbe::EnqueueSpin(cudaStream_t stream, uint64_t spin_ns) {
  return Launch(stream, nullptr, spin_ns);
}

double ClockProbe::LastClockMhz() const {
  const auto* host = static_cast<const volatile uint64_t*>(slot_.get());
  return ProbeClockMhz(host[0], host[1]);
}

}  // namespace kforge::bench::internal
