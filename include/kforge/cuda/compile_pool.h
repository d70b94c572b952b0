// A fixed pool of threads that run Compiler::Compile, so many candidates compile in parallel.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "kforge/cuda/compiler.h"

namespace kforge::cuda {

class CompilePool {
 public:
  /// `compiler` must outlive the pool. `threads` 0 means std::thread::hardware_concurrency().
  explicit CompilePool(const Compiler& compiler, size_t threads = 0);
  /// Finishes the queued compiles, then joins the threads.
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  /// Queues a compile. The future holds the result, or the exception Compile threw.
  std::future<CompileResult> Submit(CompileRequest request);

  size_t size() const { return threads_.size(); }

 private:
  void Work();

  const Compiler& compiler_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<CompileResult()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kforge::cuda
