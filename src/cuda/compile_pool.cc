// CompilePool: a queue of packaged tasks drained by a fixed set of threads.
#include "kforge/cuda/compile_pool.h"

namespace kforge::cuda {

CompilePool::CompilePool(const Compiler& compiler, size_t threads) : compiler_(compiler) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

std::future<CompileResult> CompilePool::Submit(CompileRequest request) {
  std::packaged_task<CompileResult()> task(
      [this, request = std::move(request)] { return compiler_.Compile(request); });
  std::future<CompileResult> result = task.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return result;
}

void CompilePool::Work() {
  while (true) {
    std::packaged_task<CompileResult()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace kforge::cuda
