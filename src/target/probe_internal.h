// Pieces the probe's kernels share: timing, an aligned buffer, OpenMP runs with pinned threads.
#pragma once

#include <cstdint>
#include <functional>

namespace orchid::target::detail {

double now_seconds();

// Calls run(passes), which returns the seconds it took, doubling passes until one call lasts
// at least min_seconds (these calls warm caches and pages up), then `repetitions` more times.
// Returns the least seconds per pass.
double best_seconds_per_pass(const std::function<double(int64_t passes)>& run, double min_seconds,
                             int repetitions);

// Runs body(thread) on `threads` OpenMP threads, thread i pinned to the i-th CPU of the
// process's affinity mask (restored afterwards); returns the seconds from a barrier before
// the bodies to a barrier after them.
double time_parallel(int threads, const std::function<void(int thread)>& body);

// Page-aligned memory, freed on destruction.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(int64_t bytes);
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  int64_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  int64_t bytes_ = 0;
};

}  // namespace orchid::target::detail
