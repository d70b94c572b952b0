// `kforge worker`: finds a device, then loads the worker library (LibTorch and the GPU checks) and
// hands it stdin/stdout. Loading LibTorch takes most of a second, so it overlaps CUDA context creation,
// and the parent process, which never loads it, starts fast.
#include "kforge/verify/worker.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "kforge/common/verdict.h"
#include "kforge/cuda/device.h"
#include "kforge/verify/worker_protocol.h"

namespace kforge::verify {
namespace {

constexpr char kLibraryName[] = "libkforge_worker.so";
constexpr char kEntryPoint[] = "kforge_worker_serve";

/// Answers every request with no_gpu and `why` (no device, or no worker library).
int ServeNoGpu(const std::string& why) {
  std::string line = FailureReplyJson(common::VerdictStatus::kNoGpu, why).dump() + "\n";
  std::string request;
  while (std::getline(std::cin, request)) {
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
  }
  return 0;
}

/// Creates the device's primary context (the worker library then finds it ready).
std::string InitDevice(int device_index) {
  auto device = cuda::OpenDevice(device_index);
  if (!device.ok()) return device.status().message();
  if (cudaFree(nullptr) != cudaSuccess) return cudaGetErrorString(cudaGetLastError());
  return "";
}

}  // namespace

std::filesystem::path WorkerLibraryPath() {
  if (const char* path = std::getenv("KFORGE_WORKER_LIBRARY"); path && *path) return path;
  std::error_code error;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  // Beside the executable in a build tree; PREFIX/lib/kforge for an installed PREFIX/bin/kforge.
  const std::filesystem::path beside = exe.parent_path() / kLibraryName;
  const std::filesystem::path installed = exe.parent_path().parent_path() / "lib/kforge" / kLibraryName;
  return std::filesystem::exists(beside, error) || !std::filesystem::exists(installed, error) ? beside : installed;
}

int RunWorker(int device_index, bool orderly_exit) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the parent
  int count = cuda::DeviceCount();
  if (count <= device_index) {
    return ServeNoGpu("no CUDA device " + std::to_string(device_index) + " (found " + std::to_string(count) +
                      ")");
  }
  std::string device_error;
  std::thread init([&] { device_error = InitDevice(device_index); });
  std::filesystem::path path = WorkerLibraryPath();
  // Lazy binding: LibTorch has far more symbols than a worker ever calls.
  void* library = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  init.join();
  if (!device_error.empty()) return ServeNoGpu(device_error);
  if (library == nullptr) {
    const char* error = dlerror();
    return ServeNoGpu("cannot load the worker library (this kforge may be built without LibTorch): " +
                      std::string(error ? error : path.string()));
  }
  auto serve = reinterpret_cast<int (*)(int)>(dlsym(library, kEntryPoint));
  if (serve == nullptr) return ServeNoGpu(path.string() + " has no " + kEntryPoint);
  int rc = serve(device_index);
  if (orderly_exit) return rc;  // e.g. under compute-sanitizer, which reports at exit
  std::fflush(stdout);
  std::_Exit(rc);  // skips LibTorch's and the CUDA context's teardown
}

}  // namespace kforge::verify
