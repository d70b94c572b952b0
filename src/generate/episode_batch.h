// The episodes of a generate run: planned from the shard and the run folder (what is there is
// skipped), then run `concurrency` at a time, each written to the run folder as it ends.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "generate/episode.h"
#include "generate/run_dir.h"
#include "kforge/common/task.h"
#include "kforge/generate/generate.h"

namespace kforge::generate {

/// One episode to run: a task under a view, one sample of it, and its record id.
struct PlannedEpisode {
  const common::Task* task;
  View view;
  int sample;
  std::string id;
};

/// Every (task, view, sample) of `shard` whose record `run` lacks, in order; `skipped` counts the others.
std::vector<PlannedEpisode> PlanEpisodes(const GenerateOptions& options,
                                         const std::vector<const common::Task*>& shard, RunDir& run,
                                         int& skipped);

/// Runs `planned` on `context.options.concurrency` threads, in the order of an EpisodeQueue (with
/// `warm_cache`, a task's other samples wait for its first sample's first reply). Each finished
/// episode is redacted and appended to the run's trajectories, the others to unfinished.jsonl; the
/// counts, spend and a fatal write or teacher error go to `summary`. Returns once every episode ended.
void RunEpisodes(const EpisodeContext& context, const std::vector<PlannedEpisode>& planned,
                 const std::map<std::string, std::string>& references, bool warm_cache, RunDir& run,
                 GenerateSummary& summary);

}  // namespace kforge::generate
