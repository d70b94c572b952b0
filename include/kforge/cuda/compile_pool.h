// A fixed pool of threads that run Compiler::Compile, so many candidates compile in parallel.
#pragma once

#include <future>

#include "kforge/common/thread_pool.h"
#include "kforge/cuda/compiler.h"

namespace kforge::cuda {

class CompilePool {
 public:
  /// `compiler` must outlive the pool. `threads` 0 means std::thread::hardware_concurrency().
  explicit CompilePool(const Compiler& compiler, size_t threads = 0)
      : compiler_(compiler), threads_(threads) {}
  /// Finishes the queued compiles, then joins the threads.
  ~CompilePool() = default;
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  /// Queues a compile. The future holds the result, or the exception Compile threw.
  std::future<CompileResult> Submit(CompileRequest request) {
    return threads_.Submit([this, request = std::move(request)] { return compiler_.Compile(request); });
  }

  size_t size() const { return threads_.size(); }

 private:
  const Compiler& compiler_;
  common::ThreadPool threads_;
};

}  // namespace kforge::cuda
