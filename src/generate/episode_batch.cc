// The episodes of a generate run (generate/episode_batch.h).
#include "generate/episode_batch.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>

#include <spdlog/spdlog.h>

#include "generate/episode_queue.h"
#include "generate/teacher_setup.h"
#include "kforge/common/thread_pool.h"

namespace kforge::generate {
namespace {

using Clock = std::chrono::steady_clock;

std::string Fixed(double v, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

/// Masks the teacher's secrets in every string (and key) of a record: a key the teacher echoes
/// reaches neither the run folder nor anything exported from it.
void RedactStrings(nlohmann::json& value, const llm::Client& client) {
  if (value.is_string()) {
    std::string& text = value.get_ref<std::string&>();
    text = client.Redact(std::move(text));
  } else if (value.is_array()) {
    for (nlohmann::json& item : value) RedactStrings(item, client);
  } else if (value.is_object()) {
    nlohmann::json masked = nlohmann::json::object();
    for (auto& [key, item] : value.items()) {
      RedactStrings(item, client);
      masked[client.Redact(key)] = std::move(item);
    }
    value = std::move(masked);
  }
}

/// Progress on stderr: one line per finished episode (a rewritten line on a terminal).
class Progress {
 public:
  Progress(int total, Clock::time_point start) : total_(total), start_(start), tty_(isatty(2)) {}
  void Finished(const dataset::Trajectory& t, const GenerateSummary& s) {
    double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    int done = s.finished;
    double eta = done > 0 ? elapsed / done * (total_ - done) : 0;
    char line[512];
    std::string what = t.correct() ? "correct" : std::string(dataset::StopReasonName(t.stop));
    if (t.speedup()) what += " " + Fixed(*t.speedup(), "%.2f") + "x";
    std::snprintf(
        line, sizeof(line),
        "[%d/%d] %s#%d: %s in %d turn%s | correct %d, faster %d, tokens %lld, $%.2f, ETA %.0fs", done, total_,
        t.task.id.c_str(), t.sample, what.c_str(), t.turns(), t.turns() == 1 ? "" : "s", s.correct, s.faster,
        static_cast<long long>(tokens_ += t.usage.input_tokens + t.usage.output_tokens), s.cost_usd, eta);
    std::fprintf(stderr, tty_ ? "\r\033[K%s" : "%s\n", line);
    if (tty_ && done == total_) std::fputc('\n', stderr);
  }

 private:
  int total_;
  Clock::time_point start_;
  bool tty_;
  int64_t tokens_ = 0;
};

/// What each planned episode's first request shares with others, for the EpisodeQueue: its task and
/// view, or a prompt of its own when that prefix is below the model's cache minimum (never cached, so
/// its samples are not held back for a warm-up). Says once how many prompts are below it.
std::vector<std::string> SharedPrompts(const EpisodeContext& context,
                                       const std::vector<PlannedEpisode>& planned,
                                       const std::map<std::string, std::string>& references,
                                       bool warm_cache) {
  const GenerateOptions& options = context.options;
  std::map<std::string, bool> cacheable;  // task + view -> prefix above the minimum
  const int64_t minimum = CacheMinimumTokens(options.teacher->kind, options.model);
  int64_t longest = 0;
  for (const PlannedEpisode& p : planned) {
    const std::string key = p.task->id + "\n" + std::string(ViewName(p.view));
    if (!warm_cache || cacheable.count(key)) continue;
    StatusOr<llm::ChatRequest> opening =
        OpeningRequest(options, context.prompts, context.system_prompt, context.tools,
                       {p.task, p.view, 0, references.at(p.task->id), "", {}});
    const int64_t tokens = opening.ok() ? PrefixTokens(*opening) : minimum;
    longest = std::max(longest, tokens);
    cacheable[key] = tokens >= minimum;
  }
  const auto below =
      std::count_if(cacheable.begin(), cacheable.end(), [](const auto& c) { return !c.second; });
  if (below > 0)
    std::fprintf(
        stderr,
        "generate: --cache-warmup skipped for %ld of %zu prompts: their shared prefix (~%lld tokens at "
        "most) is below %s's cache minimum of %lld tokens, so no sample could read it; their samples "
        "start together\n",
        static_cast<long>(below), cacheable.size(), static_cast<long long>(longest), options.model.c_str(),
        static_cast<long long>(minimum));
  std::vector<std::string> prompts_of;
  for (size_t i = 0; i < planned.size(); ++i) {
    const PlannedEpisode& p = planned[i];
    const std::string key = p.task->id + "\n" + std::string(ViewName(p.view));
    prompts_of.push_back(cacheable[key] ? key : key + "\n" + std::to_string(i));
  }
  return prompts_of;
}

/// The threads of a batch: each takes the next episode from the queue, runs it and writes it, until
/// the queue is empty or the batch stops.
class EpisodeBatch {
 public:
  EpisodeBatch(const EpisodeContext& context, const std::vector<PlannedEpisode>& planned,
               const std::map<std::string, std::string>& references, bool warm_cache, RunDir& run,
               GenerateSummary& summary, std::atomic<bool>& stopping)
      : context_(context),
        planned_(planned),
        references_(references),
        run_(run),
        summary_(summary),
        queue_(SharedPrompts(context, planned, references, warm_cache),
               warm_cache ? std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(context.options.cache_warmup_s))
                          : Clock::duration::zero()),
        progress_(static_cast<int>(planned.size()), Clock::now()),
        stopping_(stopping) {}

  /// One thread's loop.
  void Work() {
    while (!StopStarting()) {
      const std::optional<size_t> index = queue_.Take();
      if (!index) return;
      EpisodeEnd end = EpisodeEnd::kFinished;
      dataset::Trajectory t = Run(*index, end);
      if (end != EpisodeEnd::kFinished) {
        KeepUnfinished(t, end);
      } else if (!Write(t)) {
        return;
      }
    }
  }

 private:
  /// Whether no more episodes start (a fatal error, the budget); then wakes the threads waiting for a
  /// held episode.
  bool StopStarting() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stop_starting_ && !stopping_) return false;
    queue_.Close();
    return true;
  }

  dataset::Trajectory Run(size_t index, EpisodeEnd& end) {
    const PlannedEpisode& item = planned_[index];
    dataset::Trajectory t;
    try {
      t = RunEpisode(context_,
                     {item.task, item.view, item.sample, references_.at(item.task->id), item.id,
                      [this, index] { queue_.FirstReply(index); }},
                     end);
      queue_.FirstReply(index);          // an episode that ended before its first reply
    } catch (const std::exception& e) {  // a bug: this episode, never the batch
      queue_.FirstReply(index);
      t.id = item.id;
      t.task.id = item.task->id;
      t.stop = dataset::StopReason::kHarnessError;
      t.error = std::string("internal error: ") + e.what();
    }
    return t;
  }

  /// Not final: kept apart (for its cost and for diagnosis), run again by a rerun.
  void KeepUnfinished(const dataset::Trajectory& t, EpisodeEnd end) {
    Status kept = end == EpisodeEnd::kTransient || !t.attempts.empty() || t.usage.cost_usd > 0
                      ? run_.AppendUnfinished(dataset::ToJson(t))
                      : Status::Ok();
    std::lock_guard<std::mutex> lock(mu_);
    if (!kept.ok() && summary_.fatal.ok()) summary_.fatal = kept;
    summary_.cost_usd += t.usage.cost_usd;
    summary_.usage.AddTokens(t.usage);
    if (end == EpisodeEnd::kTransient) {
      ++summary_.deferred;
      run_.Log(t.id + " unfinished: " + t.error);
    }
    if (!context_.client.fatal_status().ok() || !kept.ok()) stopping_ = true;
    if (context_.client.budget_reached() && !stop_starting_) {
      stop_starting_ = true;
      summary_.stopped_by_budget = true;
    }
  }

  /// Appends a finished episode and counts it; false when the write failed (the batch stops).
  bool Write(const dataset::Trajectory& t) {
    nlohmann::json record = dataset::ToJson(t);
    RedactStrings(record, context_.client);
    if (dataset::FitRecord(record, dataset::kMaxLineBytes))
      spdlog::warn(
          "generate: {}: record larger than {} MiB, written with its longest strings cut "
          "(\"truncated\": true)",
          t.id, dataset::kMaxLineBytes >> 20);
    Status written = run_.trajectories().Append(record);
    std::lock_guard<std::mutex> lock(mu_);
    if (!written.ok()) {
      summary_.fatal = written;
      stopping_ = true;
      queue_.Close();
      return false;
    }
    Count(t);
    run_.Log(t.id + " " + std::string(dataset::StopReasonName(t.stop)) +
             " turns=" + std::to_string(t.turns()) + " correct=" + (t.correct() ? "1" : "0") +
             (t.speedup() ? " speedup=" + Fixed(*t.speedup(), "%.3f") : ""));
    progress_.Finished(t, summary_);
    return true;
  }

  /// Adds a written episode to the summary (under mu_), and stops starting more at the budget.
  void Count(const dataset::Trajectory& t) {
    GenerateSummary& s = summary_;
    ++s.finished;
    s.turns += t.turns();
    if (t.correct()) ++s.correct;
    if (t.correct() && t.speedup() && *t.speedup() > 1) ++s.faster;
    if (t.best && t.attempts[*t.best].compiled) ++s.compiled;
    if (t.stop == dataset::StopReason::kLlmError) ++s.llm_errors;
    if (t.stop == dataset::StopReason::kHarnessError) ++s.harness_errors;
    s.cost_usd += t.usage.cost_usd;
    s.usage.AddTokens(t.usage);
    const std::optional<double>& cap = context_.options.max_cost_usd;
    if (cap && s.spent_before_usd + s.cost_usd >= *cap && !stop_starting_) {
      stop_starting_ = true;
      s.stopped_by_budget = true;
    }
  }

  const EpisodeContext& context_;
  const std::vector<PlannedEpisode>& planned_;
  const std::map<std::string, std::string>& references_;
  RunDir& run_;
  GenerateSummary& summary_;
  EpisodeQueue queue_;
  std::mutex mu_;  // guards summary_, stop_starting_, progress_
  bool stop_starting_ = false;
  Progress progress_;
  std::atomic<bool>& stopping_;
};

}  // namespace

std::vector<PlannedEpisode> PlanEpisodes(const GenerateOptions& options,
                                         const std::vector<const common::Task*>& shard, RunDir& run,
                                         int& skipped) {
  std::vector<PlannedEpisode> planned;
  for (const common::Task* task : shard) {
    for (View view : options.views) {
      for (int s = 0; s < options.samples; ++s) {
        // The view is part of the id only when a run has several, so one-view ids stay short.
        const std::string view_part = options.views.size() > 1 ? "/" + std::string(ViewName(view)) : "";
        std::string id = run.run_id() + "/" + task->id + view_part + "/" + std::to_string(s);
        if (run.trajectories().Contains(id)) {
          ++skipped;
        } else {
          planned.push_back({task, view, s, id});
        }
      }
    }
  }
  return planned;
}

void RunEpisodes(const EpisodeContext& context, const std::vector<PlannedEpisode>& planned,
                 const std::map<std::string, std::string>& references, bool warm_cache, RunDir& run,
                 GenerateSummary& summary) {
  std::atomic<bool> stopping{false};  // the batch is stopping: episodes start no more turns
  EpisodeContext batch_context = context;
  batch_context.stopping = &stopping;
  EpisodeBatch batch(batch_context, planned, references, warm_cache, run, summary, stopping);
  int n = std::min<int>(context.options.concurrency, static_cast<int>(planned.size()));
  common::ThreadPool episodes(static_cast<size_t>(std::max(n, 1)));
  for (int i = 0; i < n; ++i) episodes.Post([&batch] { batch.Work(); });
}  // every episode has ended: the pool joins its threads before the batch goes

}  // namespace kforge::generate
