// The PyTorch reference of a task, run from its torch.export package by LibTorch's NativeRT, and
// the inputs it is judged on.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/common/task.h"
#include "kforge/reference/tensor.h"

namespace at {
class Tensor;
}

namespace kforge::reference {

/// "2.11.0" (the LibTorch this binary links).
std::string LibTorchVersion();

/// Number of CUDA devices LibTorch sees (0 without a GPU or without CUDA support).
int CudaDeviceCount();

/// Number of input distributions GenerateInputs knows (indices 0 .. kNumDistributions-1).
inline constexpr int kNumDistributions = 3;

/// Fresh inputs for `variant`, drawn on `device` with a generator seeded from (seed, input index),
/// so the same arguments give the same values. `distribution_index` 0 draws each input's recorded
/// `init`; 1 and 2 draw alternatives over the same domain, then apply the same scale and shift:
///   randn:   1: randn * 4 + 1           2: randn * 0.25 - 0.5 (small magnitudes)
///   rand:    1: rand^2 (mass near 0)    2: 1 - rand^2 (mass near 1)
///   uniform: 1: low + (high-low) u^2    2: high - (high-low) u^2
///   randint: 1: low or high-1 for half the entries, else uniform
///            2: uniform over [low, high) from another stream
///   ones, zeros: unchanged.
StatusOr<TensorSet> GenerateInputs(const common::Task& task, std::string_view variant, uint64_t seed,
                                   int distribution_index, Device device);

/// GenerateInputs into existing tensors: every task input by name, of the variant's dtype and shape
/// (a candidate's guarded buffers, borrowed), so the inputs exist once. float32 inputs on a CUDA device
/// drawn from randn, rand or uniform are written by one kforge kernel from a counter-based hash (one
/// pass at memory speed, any size); other inputs are drawn with LibTorch in chunks of 2^24 elements,
/// so temporaries stay small whatever the input's size. With `digests`, each input's Digest
/// (compare.h) is stored there by name: computed while drawing where kforge's kernel draws.
Status GenerateInputsInto(const common::Task& task, std::string_view variant, uint64_t seed,
                          int distribution_index, TensorSet& inputs,
                          std::map<std::string, uint64_t>* digests = nullptr);

/// Tensors of a safetensors file whose names start with `prefix`, with the prefix dropped
/// (golden files: "input.", "output.").
StatusOr<TensorSet> LoadTensors(const std::filesystem::path& file, std::string_view prefix, Device device);

/// Output buffers for a candidate: the task's outputs for `variant`, filled per `fill`.
StatusOr<TensorSet> AllocateOutputs(const common::Task& task, std::string_view variant, Device device,
                                    Fill fill = {});

/// Makes `stream` LibTorch's current CUDA stream on `device` for the scope's lifetime, so that a
/// reference run enqueues its kernels there (bench times it with its own events).
class CudaStreamScope {
 public:
  CudaStreamScope(cudaStream_t stream, int device);
  ~CudaStreamScope();
  CudaStreamScope(const CudaStreamScope&) = delete;
  CudaStreamScope& operator=(const CudaStreamScope&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// One loaded reference package with its parameters resident on the device.
/// Run is serialised internally; the object may be shared between threads.
class ReferenceProgram {
 public:
  /// Loads `task.artifacts.packages[variant][device kind]` and the params file (moved to `device`
  /// once). Errors name the task and the missing or mismatching artifact.
  static StatusOr<std::unique_ptr<ReferenceProgram>> Load(const common::Task& task, std::string_view variant,
                                                          Device device);
  ~ReferenceProgram();
  ReferenceProgram(const ReferenceProgram&) = delete;
  ReferenceProgram& operator=(const ReferenceProgram&) = delete;

  /// Runs `forward(inputs..., params...)`; `inputs` must hold every task input (by name) on the
  /// program's device. Returns out0, out1, ... checked against the task's output specs.
  StatusOr<TensorSet> Run(const TensorSet& inputs);

  /// Runs `forward` like Run but drops the outputs as LibTorch returns them, without the contiguous
  /// copies and checks Run makes: what bench times, so that the reference pays only for its own work.
  Status Execute(const TensorSet& inputs);

  /// The parameters and buffers, in the task's order, on the device.
  const TensorSet& params() const;
  Device device() const;
  const std::string& variant() const;

 private:
  struct Impl;
  explicit ReferenceProgram(std::unique_ptr<Impl> impl);
  StatusOr<std::vector<at::Tensor>> Invoke(const TensorSet& inputs);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kforge::reference
