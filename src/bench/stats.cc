// Sample statistics and the bootstrap speedup interval.
#include "kforge/bench/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace kforge::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Percentile `p` in [0, 1] of sorted, non-empty `x`: linear interpolation between order statistics.
double Percentile(const std::vector<double>& x, double p) {
  const double h = (static_cast<double>(x.size()) - 1) * p;
  const size_t below = static_cast<size_t>(std::floor(h));
  if (below + 1 >= x.size()) return x.back();
  return x[below] + (h - static_cast<double>(below)) * (x[below + 1] - x[below]);
}

// 1-based rank j of the lower end of the distribution-free confidence interval of the median of n
// samples: the largest j with P(B <= j - 1) <= (1 - confidence) / 2 for B ~ Binomial(n, 1/2), so that
// [x(j), x(n + 1 - j)] covers the median with probability >= confidence. 0 when no j qualifies.
int MedianCiRank(int n, double confidence) {
  const double tail = (1 - confidence) / 2;
  double log_pmf = -n * std::log(2.0);  // P(B = 0)
  double cdf = 0;
  for (int i = 0; i < n; ++i) {
    cdf += std::exp(log_pmf);
    if (cdf > tail) return i;
    log_pmf += std::log(static_cast<double>(n - i)) - std::log(static_cast<double>(i + 1));
  }
  return 0;
}

// Median of x (non-empty); reorders x.
double MedianInPlace(std::vector<double>& x) {
  const size_t mid = x.size() / 2;
  std::nth_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(mid), x.end());
  const double upper = x[mid];
  if (x.size() % 2 == 1) return upper;
  const double lower = *std::max_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

// Uniform integer in [0, n), n > 0, by rejection: the same sequence for a seed on every platform.
uint64_t UniformBelow(std::mt19937_64& engine, uint64_t n) {
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
  uint64_t x = engine();
  while (x >= limit) x = engine();
  return x % n;
}

void Resample(const std::vector<double>& from, std::mt19937_64& engine, std::vector<double>& to) {
  to.resize(from.size());
  for (double& v : to) v = from[UniformBelow(engine, from.size())];
}

}  // namespace

SampleStats Summarize(std::vector<double> ms) {
  SampleStats s;
  s.count = static_cast<int>(ms.size());
  if (ms.empty()) {
    s.median = s.p10 = s.p90 = s.mean = s.min = s.max = s.noise = s.median_lo = s.median_hi = kNaN;
    return s;
  }
  std::sort(ms.begin(), ms.end());
  s.median = Percentile(ms, 0.5);
  s.p10 = Percentile(ms, 0.1);
  s.p90 = Percentile(ms, 0.9);
  s.min = ms.front();
  s.max = ms.back();
  double sum = 0;
  for (const double v : ms) sum += v;
  s.mean = sum / static_cast<double>(ms.size());
  if (ms.size() >= 2) {
    double squares = 0;
    for (const double v : ms) squares += (v - s.mean) * (v - s.mean);
    s.noise = std::sqrt(squares / static_cast<double>(ms.size() - 1)) / s.mean;
  } else {
    s.noise = kNaN;
  }
  const int j = MedianCiRank(s.count, 0.95);
  if (j > 0) {
    s.median_lo = ms[static_cast<size_t>(j - 1)];
    s.median_hi = ms[static_cast<size_t>(s.count - j)];
  } else {
    s.median_lo = s.median_hi = kNaN;
  }
  return s;
}

SpeedupEstimate BootstrapSpeedup(const std::vector<double>& reference_ms,
                                 const std::vector<double>& candidate_ms, uint64_t seed, int iterations,
                                 double confidence) {
  SpeedupEstimate e;
  e.confidence = confidence;
  e.iterations = iterations;
  e.ratio = e.lo = e.hi = kNaN;
  if (reference_ms.empty() || candidate_ms.empty()) return e;
  std::vector<double> ref = reference_ms, cand = candidate_ms;
  e.ratio = MedianInPlace(ref) / MedianInPlace(cand);
  if (iterations <= 0 || !(confidence > 0 && confidence < 1)) return e;

  std::mt19937_64 engine(seed);
  std::vector<double> ratios(static_cast<size_t>(iterations));
  for (double& r : ratios) {
    Resample(reference_ms, engine, ref);
    Resample(candidate_ms, engine, cand);
    r = MedianInPlace(ref) / MedianInPlace(cand);
    if (std::isnan(r)) return e;  // zero medians on both sides: no interval
  }
  std::sort(ratios.begin(), ratios.end());
  e.lo = Percentile(ratios, (1 - confidence) / 2);
  e.hi = Percentile(ratios, (1 + confidence) / 2);
  return e;
}

}  // namespace kforge::bench
