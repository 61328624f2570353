#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <vector>

#include "support/error.h"
#include "target/probe_internal.h"

namespace orchid::target::detail {

namespace {

constexpr int64_t kPage = 4096;

// The CPUs of the calling thread's affinity mask, in order.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// Pins the calling thread to one CPU for its lifetime, then restores its previous mask.
class PinnedThread {
 public:
  explicit PinnedThread(int cpu) {
    CPU_ZERO(&saved_);
    if (cpu < 0 || sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned_ = sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~PinnedThread() {
    if (pinned_) sched_setaffinity(0, sizeof saved_, &saved_);
  }
  PinnedThread(const PinnedThread&) = delete;
  PinnedThread& operator=(const PinnedThread&) = delete;

 private:
  cpu_set_t saved_;
  bool pinned_ = false;
};

}  // namespace

double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

double best_seconds_per_pass(const std::function<double(int64_t)>& run, double min_seconds,
                             int repetitions) {
  ORCHID_CHECK(repetitions >= 1) << "repetitions " << repetitions;
  int64_t passes = 1;
  while (run(passes) < min_seconds && passes < (int64_t(1) << 40)) passes *= 2;
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repetitions; ++r) best = std::min(best, run(passes) / double(passes));
  return best;
}

double time_parallel(int threads, const std::function<void(int)>& body) {
  ORCHID_CHECK(threads >= 1) << "threads " << threads;
  std::vector<int> cpus = allowed_cpus();
  double t0 = 0, t1 = 0;
  int team = 0;
#pragma omp parallel num_threads(threads)
  {
    int id = omp_get_thread_num();
    PinnedThread pin(cpus.empty() ? -1 : cpus[size_t(id) % cpus.size()]);
#pragma omp single
    team = omp_get_num_threads();
#pragma omp single
    t0 = now_seconds();
    body(id);
#pragma omp barrier
#pragma omp single
    t1 = now_seconds();
  }
  ORCHID_USER_CHECK(team == threads) << "the probe asked OpenMP for " << threads << " threads and got "
                                     << team << " (is OMP_THREAD_LIMIT set?)";
  return t1 - t0;
}

// No transparent huge pages: with the kernel's usual defrag=madvise, faulting them in can
// stall for seconds compacting memory, and they do not change the bandwidth measured.
AlignedBuffer::AlignedBuffer(int64_t bytes) : bytes_(bytes) {
  ORCHID_CHECK(bytes > 0) << "buffer of " << bytes << " bytes";
  int64_t rounded = (bytes + kPage - 1) / kPage * kPage;
  data_ = std::aligned_alloc(kPage, size_t(rounded));
  ORCHID_USER_CHECK(data_ != nullptr) << "the probe cannot allocate " << rounded << " bytes";
}

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

}  // namespace orchid::target::detail
