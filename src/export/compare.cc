// A run against a baseline: paired by task, with bootstrap intervals.
#include <algorithm>
#include <cmath>
#include <random>

#include "kforge/export/report.h"

namespace kforge::exporter {
namespace {

/// The metrics a comparison shows, read from TallyMetrics.
struct Metric {
  std::string name;
  std::optional<double> (*get)(const TallyMetrics&, size_t);
  size_t fast_index;
  bool ratio;
};

std::vector<Metric> Metrics() {
  std::vector<Metric> metrics = {
      {"correctness", [](const TallyMetrics& m, size_t) { return m.correctness; }, 0, false}};
  for (size_t i = 0; i < kFastP.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "fast_%g", kFastP[i]);
    metrics.push_back({name, [](const TallyMetrics& m, size_t k) { return m.fast_p[k]; }, i, false});
  }
  metrics.push_back(
      {"geomean_speedup", [](const TallyMetrics& m, size_t) { return m.geomean_speedup; }, 0, true});
  return metrics;
}

std::optional<double> Change(const std::optional<double>& run, const std::optional<double>& base,
                             bool ratio) {
  if (!run || !base) return std::nullopt;
  if (!ratio) return *run - *base;
  if (!(*base > 0)) return std::nullopt;
  return *run / *base;
}

double Percentile(std::vector<double>& values, double q) {
  std::sort(values.begin(), values.end());
  double pos = q * static_cast<double>(values.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

Comparison Compare(const RunReport& run, const RunReport& baseline, int resamples, uint64_t seed) {
  Comparison c;
  c.run = run.label;
  c.baseline = baseline.label;
  c.resamples = resamples;
  std::vector<const TaskTally*> ours, theirs;
  for (const auto& [id, tally] : run.tasks) {
    auto it = baseline.tasks.find(id);
    if (it == baseline.tasks.end() || tally.episodes == 0 || it->second.episodes == 0) continue;
    ours.push_back(&tally);
    theirs.push_back(&it->second);
  }
  c.common_tasks = static_cast<int64_t>(ours.size());
  TallyMetrics run_all = FromTallies(ours), base_all = FromTallies(theirs);
  std::vector<Metric> metrics = Metrics();
  std::vector<std::vector<double>> samples(metrics.size());
  if (!ours.empty()) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<size_t> pick(0, ours.size() - 1);
    std::vector<const TaskTally*> a(ours.size()), b(ours.size());
    for (int r = 0; r < resamples; ++r) {
      for (size_t i = 0; i < ours.size(); ++i) {
        size_t j = pick(rng);
        a[i] = ours[j];
        b[i] = theirs[j];
      }
      TallyMetrics ma = FromTallies(a), mb = FromTallies(b);
      for (size_t m = 0; m < metrics.size(); ++m) {
        const Metric& metric = metrics[m];
        if (std::optional<double> d =
                Change(metric.get(ma, metric.fast_index), metric.get(mb, metric.fast_index), metric.ratio))
          samples[m].push_back(*d);
      }
    }
  }
  for (size_t m = 0; m < metrics.size(); ++m) {
    const Metric& metric = metrics[m];
    Delta d;
    d.metric = metric.name;
    d.ratio = metric.ratio;
    d.run = metric.get(run_all, metric.fast_index);
    d.baseline = metric.get(base_all, metric.fast_index);
    d.delta = Change(d.run, d.baseline, metric.ratio);
    // An interval only when almost every resample defined the metric.
    if (d.delta && samples[m].size() * 10 >= static_cast<size_t>(resamples) * 9 && !samples[m].empty()) {
      d.lo = Percentile(samples[m], 0.025);
      d.hi = Percentile(samples[m], 0.975);
    }
    c.deltas.push_back(std::move(d));
  }
  return c;
}

}  // namespace kforge::exporter
