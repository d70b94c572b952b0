// verify over a stream: every solution a reader yields goes through the VerifyService; verdicts come
// out in input order, each as soon as it and the ones before it are judged.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "kforge/common/bench_record.h"
#include "kforge/common/verdict.h"
#include "kforge/verify/service.h"
#include "kforge/verify/solution_reader.h"

namespace kforge::verify {

/// Counts by status, for the summary and the exit code.
struct VerifySummary {
  int total = 0;
  int ok = 0;
  std::map<std::string, int> by_status;
  bool no_gpu = false;
};

/// Reads solutions from `reader` on a thread of its own and submits each (`submit` returns its
/// future); `emit` gets the results in input order, each as soon as it and every earlier one is
/// ready. At most `window` solutions are read ahead of the one waiting to be emitted.
template <typename Result>
void ForEachInOrder(SolutionReader& reader, const std::function<std::future<Result>(SolutionInput)>& submit,
                    const std::function<void(Result&)>& emit, size_t window = 64) {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::future<Result>> pending;
  bool reading = true;
  std::thread read_thread([&] {
    while (true) {
      std::optional<SolutionInput> input;
      bool last = false;
      try {
        input = reader.Next();
      } catch (const std::exception& e) {
        input = SolutionInput{"(input)", Status::Internal(std::string("reading solutions: ") + e.what())};
        last = true;
      }
      if (!input) break;
      std::future<Result> result = submit(std::move(*input));
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return pending.size() < window; });
        pending.push_back(std::move(result));
      }
      cv.notify_all();
      if (last) break;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      reading = false;
    }
    cv.notify_all();
  });
  while (true) {
    std::future<Result>* next = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return !pending.empty() || !reading; });
      if (pending.empty()) break;
      next = &pending.front();  // only this thread pops; deque push_back keeps references valid
    }
    Result result = next->get();
    emit(result);
    {
      std::lock_guard<std::mutex> lock(mu);
      pending.pop_front();
    }
    cv.notify_all();
  }
  read_thread.join();
}

class Verifier {
 public:
  /// Where solutions go to be judged: a VerifyService of this process, or a judge server.
  using Submit = std::function<std::future<Judged>(SolutionInput)>;

  /// Judges with a VerifyService of its own.
  explicit Verifier(VerifyOptions options)
      : service_(std::make_unique<VerifyService>(std::move(options))),
        submit_([service = service_.get()](SolutionInput input) { return service->Submit(std::move(input)); }),
        seed_(service_->seed()) {}
  /// Judges through `submit` (a judge server's connection), which judges with `seed`.
  Verifier(Submit submit, uint64_t seed) : submit_(std::move(submit)), seed_(seed) {}

  /// Checks every solution `reader` yields; `emit` receives each verdict, in input order, as soon
  /// as it and all earlier ones are done, with what `after_check` returned (none when it did not run).
  VerifySummary Run(SolutionReader& reader,
                    const std::function<void(const common::Verdict&,
                                             const std::optional<common::BenchResult>& bench)>& emit);

  /// As Run; `emit` also gets the solution as read (null when it could not be read), for commands
  /// that pass solutions on (`verify --emit passing`).
  VerifySummary RunWithSolutions(
      SolutionReader& reader,
      const std::function<void(const common::Verdict&, const std::optional<common::BenchResult>& bench,
                               const common::Solution*)>& emit);

  uint64_t seed() const { return seed_; }

 private:
  std::unique_ptr<VerifyService> service_;  // null when judging through a server
  Submit submit_;
  uint64_t seed_;
};

}  // namespace kforge::verify
