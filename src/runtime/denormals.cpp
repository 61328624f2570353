#include "runtime/denormals.h"

#include <omp.h>

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define ORCHID_HAVE_MXCSR 1
#endif

namespace orchid::runtime {

namespace {

#ifdef ORCHID_HAVE_MXCSR
constexpr unsigned kFtzDaz = 0x8040;  // MXCSR bit 15 (flush to zero) and bit 6 (denormals are zero)
unsigned mode() { return _mm_getcsr(); }
void set_mode(unsigned m) { _mm_setcsr(m); }
#else
constexpr unsigned kFtzDaz = 0;
unsigned mode() { return 0; }
void set_mode(unsigned) {}
#endif

}  // namespace

FlushDenormals::FlushDenormals(int threads) : threads_(std::max(1, threads)), saved_(mode()) {
  if (threads_ > 1) {
#pragma omp parallel num_threads(threads_)
    if (omp_get_thread_num() != 0) set_mode(mode() | kFtzDaz);
  }
  set_mode(saved_ | kFtzDaz);
}

// The other threads take the caller's mode from before the scope: OpenMP may have started some
// of them during it (libgomp ends a pool's surplus threads when a smaller team runs, and starts
// new ones for a larger team), copying the caller's flushed mode.
FlushDenormals::~FlushDenormals() {
  if (threads_ > 1) {
#pragma omp parallel num_threads(threads_)
    if (omp_get_thread_num() != 0) set_mode(saved_);
  }
  set_mode(saved_);
}

bool denormals_flushed() { return kFtzDaz != 0 && (mode() & kFtzDaz) == kFtzDaz; }

}  // namespace orchid::runtime
