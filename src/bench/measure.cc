// The sampling loop on the caller's stream: warm-up, interleaved rounds, L2 flush, clock probe.
#include "kforge/bench/measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "bench/clock_probe.h"
#include "bench/sampling.h"
#include "kforge/bench/stats.h"
#include "kforge/cuda/check.h"
#include "kforge/cuda/owners.h"

namespace kforge::bench {
namespace {

using Clock = std::chrono::steady_clock;
using internal::ClockProbe;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Median of the finite values; 0 when there are none.
double FiniteMedian(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
               values.end());
  return values.empty() ? 0 : Summarize(std::move(values)).median;
}

// What the loop learns about a subject during the warm-up.
struct Warmup {
  double fastest_ms = std::numeric_limits<double>::infinity();
  std::vector<double> enqueue_seconds;  // host time of one run() call, per warm-up run
  double EnqueueSeconds() const { return FiniteMedian(enqueue_seconds); }
};

// The device-side resources of one measurement.
class Sampler {
 public:
  static StatusOr<Sampler> Create(Mode mode, cudaStream_t stream) {
    int device = 0, l2_bytes = 0, clock_khz = 0;
    KFORGE_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    KFORGE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    KFORGE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
    KFORGE_ASSIGN_OR_RETURN(cuda::Event start, cuda::CreateEvent());
    KFORGE_ASSIGN_OR_RETURN(cuda::Event stop, cuda::CreateEvent());
    KFORGE_ASSIGN_OR_RETURN(ClockProbe probe, ClockProbe::Load());
    cuda::DeviceMemory flush;
    const size_t flush_bytes = mode == Mode::kCold ? 2 * static_cast<size_t>(std::max(l2_bytes, 0)) : 0;
    if (flush_bytes > 0) {
      KFORGE_ASSIGN_OR_RETURN(flush, cuda::AllocateDevice(flush_bytes));
    }
    return Sampler(stream, std::move(start), std::move(stop), std::move(probe), std::move(flush), flush_bytes,
                   clock_khz / 1000.0);
  }

  // One timed region: (flush ->) prepare -> lead-in spin -> event -> `runs` runs -> event -> probe,
  // then waits for the stream and calls check. Returns the region's milliseconds; adds the host time
  // of one run() call to `enqueue_seconds` when given.
  StatusOr<double> TimedRegion(Subject& subject, int runs, uint64_t lead_in_ns,
                               std::vector<double>* enqueue_seconds) {
    if (flush_bytes_ > 0) {
      KFORGE_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(flush_.get(), 0, flush_bytes_, stream_));
    }
    if (subject.prepare) KFORGE_RETURN_IF_ERROR(subject.prepare(stream_));
    KFORGE_RETURN_IF_ERROR(probe_.EnqueueSpin(stream_, lead_in_ns));
    KFORGE_CUDA_RETURN_IF_ERROR(cudaEventRecord(start_.get(), stream_));
    const Clock::time_point enqueue_start = Clock::now();
    for (int i = 0; i < runs; ++i) KFORGE_RETURN_IF_ERROR(subject.run(stream_));
    if (enqueue_seconds != nullptr) enqueue_seconds->push_back(SecondsSince(enqueue_start) / runs);
    KFORGE_CUDA_RETURN_IF_ERROR(cudaEventRecord(stop_.get(), stream_));
    KFORGE_RETURN_IF_ERROR(probe_.Enqueue(stream_, internal::kProbeSpinNs));
    KFORGE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
    float ms = 0;
    KFORGE_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    if (subject.check) KFORGE_RETURN_IF_ERROR(subject.check(stream_));
    return static_cast<double>(ms);
  }

  // SM clock read by the probe of the last timed region.
  double LastClockMhz() const { return probe_.LastClockMhz(); }
  double max_clock_mhz() const { return max_clock_mhz_; }
  size_t flush_bytes() const { return flush_bytes_; }

 private:
  Sampler(cudaStream_t stream, cuda::Event start, cuda::Event stop, ClockProbe probe,
          cuda::DeviceMemory flush, size_t flush_bytes, double max_clock_mhz)
      : stream_(stream),
        start_(std::move(start)),
        stop_(std::move(stop)),
        probe_(std::move(probe)),
        flush_(std::move(flush)),
        flush_bytes_(flush_bytes),
        max_clock_mhz_(max_clock_mhz) {}

  cudaStream_t stream_;
  cuda::Event start_, stop_;
  ClockProbe probe_;
  cuda::DeviceMemory flush_;  // 2x L2, cold mode only
  size_t flush_bytes_;
  double max_clock_mhz_;
};

Status ValidateSubjects(const std::vector<Subject>& subjects) {
  if (subjects.empty()) return Status::InvalidArgument("nothing to measure: no subjects");
  for (size_t i = 0; i < subjects.size(); ++i) {
    if (!subjects[i].run) {
      return Status::InvalidArgument("subject " + std::to_string(i) + " (\"" + subjects[i].name +
                                     "\") has no run function");
    }
  }
  return Status::Ok();
}

// Subject index at `position` of round `round`: given order in even rounds, reversed in odd ones.
size_t Interleaved(size_t position, int round, size_t count) {
  return round % 2 == 0 ? position : count - 1 - position;
}

}  // namespace

Status ValidateMeasureOptions(const MeasureOptions& o) {
  if (o.min_samples < 1 || o.max_samples < o.min_samples) {
    return Status::InvalidArgument("need 1 <= min_samples <= max_samples (got " +
                                   std::to_string(o.min_samples) + ", " + std::to_string(o.max_samples) +
                                   ")");
  }
  if (!(o.max_noise >= 0)) return Status::InvalidArgument("max_noise must be >= 0");
  if (!(o.min_seconds >= 0)) return Status::InvalidArgument("min_seconds must be >= 0");
  if (!(o.max_seconds > 0)) return Status::InvalidArgument("max_seconds must be > 0");
  if (o.warmup_runs < 0) return Status::InvalidArgument("warmup_runs must be >= 0");
  if (!(o.warmup_seconds >= 0)) return Status::InvalidArgument("warmup_seconds must be >= 0");
  if (!(o.throttle_threshold >= 0 && o.throttle_threshold <= 1)) {
    return Status::InvalidArgument("throttle_threshold must be in [0, 1]");
  }
  return Status::Ok();
}

StatusOr<Measurement> Measure(std::vector<Subject>& subjects, const MeasureOptions& options,
                              cudaStream_t stream) {
  const Clock::time_point begin = Clock::now();
  KFORGE_RETURN_IF_ERROR(ValidateMeasureOptions(options));
  KFORGE_RETURN_IF_ERROR(ValidateSubjects(subjects));
  KFORGE_ASSIGN_OR_RETURN(Sampler sampler, Sampler::Create(options.mode, stream));
  const size_t n = subjects.size();

  // Warm-up: untimed for the statistics; its times size the hot batches and the lead-in spins.
  std::vector<Warmup> warmups(n);
  const int warmup_runs = options.mode == Mode::kHot ? std::max(options.warmup_runs, 1) : options.warmup_runs;
  const double warmup_seconds = std::min(options.warmup_seconds, options.max_seconds / 2);
  for (int w = 0; w < warmup_runs || SecondsSince(begin) < warmup_seconds; ++w) {
    for (size_t position = 0; position < n; ++position) {
      const size_t i = Interleaved(position, w, n);
      const uint64_t lead_in = internal::LeadInNs(warmups[i].EnqueueSeconds(), 1);
      KFORGE_ASSIGN_OR_RETURN(double ms,
                              sampler.TimedRegion(subjects[i], 1, lead_in, &warmups[i].enqueue_seconds));
      warmups[i].fastest_ms = std::min(warmups[i].fastest_ms, ms);
    }
  }

  Measurement m;
  m.mode = options.mode;
  m.max_sm_clock_mhz = sampler.max_clock_mhz();
  m.l2_flush_bytes = sampler.flush_bytes();
  m.subjects.resize(n);
  std::vector<uint64_t> lead_in(n);
  for (size_t i = 0; i < n; ++i) {
    m.subjects[i].name = subjects[i].name;
    m.subjects[i].batch = options.mode == Mode::kHot ? internal::HotBatch(warmups[i].fastest_ms) : 1;
    lead_in[i] = internal::LeadInNs(warmups[i].EnqueueSeconds(), m.subjects[i].batch);
  }

  std::vector<double> clocks;
  for (;;) {
    for (size_t position = 0; position < n; ++position) {
      const size_t i = Interleaved(position, m.rounds, n);
      SubjectSamples& s = m.subjects[i];
      KFORGE_ASSIGN_OR_RETURN(double ms, sampler.TimedRegion(subjects[i], s.batch, lead_in[i], nullptr));
      const double mhz = sampler.LastClockMhz();
      clocks.push_back(mhz);
      if (internal::IsThrottled(mhz, m.max_sm_clock_mhz, options.throttle_threshold)) {
        ++s.throttled;
        continue;
      }
      s.ms.push_back(ms / s.batch);
      s.gpu_seconds += ms / 1000.0;
    }
    ++m.rounds;
    const internal::StopDecision decision =
        internal::DecideStop(options, m.subjects, m.rounds, SecondsSince(begin));
    if (decision != internal::StopDecision::kContinue) {
      m.converged = decision == internal::StopDecision::kConverged;
      break;
    }
  }
  m.sm_clock_mhz = FiniteMedian(std::move(clocks));
  m.wall_seconds = SecondsSince(begin);
  return m;
}

}  // namespace kforge::bench
