// A fixed set of threads running queued jobs, written once for every module (compiles, blocking
// LLM providers, generate's episodes).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace kforge::common {

class ThreadPool {
 public:
  /// Starts `threads` threads (0: one per core). `on_start` runs first on each (e.g. to set a
  /// signal mask).
  explicit ThreadPool(size_t threads, std::function<void()> on_start = {});
  /// Runs every queued job, then joins.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Queues `job`. An exception leaving it ends the program, as on any thread: use Submit to keep it.
  void Post(std::function<void()> job);

  /// Queues `job`; the future holds its result, or the exception it threw.
  template <typename F>
  std::future<std::invoke_result_t<F&>> Submit(F job) {
    auto task = std::make_shared<std::packaged_task<std::invoke_result_t<F&>()>>(std::move(job));
    auto result = task->get_future();
    Post([task] { (*task)(); });
    return result;
  }

  size_t size() const { return threads_.size(); }

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kforge::common
