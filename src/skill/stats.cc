// The statistics of a skill's lift (skill/stats.h).
#include "skill/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace kforge::skill {

double McNemarExactP(int b, int c) {
  const int n = b + c;
  if (n <= 0) return 1.0;
  const int k = std::min(b, c);
  // P(X <= k) for X ~ Binomial(n, 1/2), in logs so that large n neither overflows nor underflows.
  double tail = 0;
  for (int i = 0; i <= k; ++i)
    tail +=
        std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
  return std::min(1.0, 2 * tail);
}

std::vector<double> HolmAdjust(const std::vector<double>& p) {
  const size_t m = p.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&p](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(m);
  double running = 0;
  for (size_t rank = 0; rank < m; ++rank) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - rank) * p[order[rank]]));
    adjusted[order[rank]] = running;
  }
  return adjusted;
}

Interval PairedBootstrap(const std::vector<double>& differences, int resamples, uint64_t seed) {
  Interval out;
  const size_t n = differences.size();
  if (n == 0) return out;
  out.mean = std::accumulate(differences.begin(), differences.end(), 0.0) / static_cast<double>(n);
  std::mt19937_64 rng(seed);
  std::vector<double> means(static_cast<size_t>(std::max(resamples, 1)));
  for (double& mean : means) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += differences[rng() % n];
    mean = sum / static_cast<double>(n);
  }
  std::sort(means.begin(), means.end());
  auto at = [&means](double q) {
    const double position = q * static_cast<double>(means.size() - 1);
    const size_t below = static_cast<size_t>(std::floor(position));
    const size_t above = std::min(below + 1, means.size() - 1);
    return means[below] + (position - static_cast<double>(below)) * (means[above] - means[below]);
  };
  out.low = at(0.025);
  out.high = at(0.975);
  return out;
}

double MinimumDetectableEffect(const std::vector<double>& differences, int samples) {
  const size_t n = differences.size();
  if (n < 2 || samples < 1) return std::numeric_limits<double>::infinity();
  const double mean = std::accumulate(differences.begin(), differences.end(), 0.0) / static_cast<double>(n);
  double squares = 0;
  for (double d : differences) squares += (d - mean) * (d - mean);
  const double sd = std::sqrt(squares / static_cast<double>(n - 1));
  const double floor = std::sqrt(0.5 / samples);
  return (1.96 + 0.84) * std::max(sd, floor) / std::sqrt(static_cast<double>(n));
}

}  // namespace kforge::skill
