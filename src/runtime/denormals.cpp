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
thread_local unsigned saved_mode = 0;
thread_local int depth = 0;

void enter() {
  if (depth++ == 0) {
    saved_mode = _mm_getcsr();
    _mm_setcsr(saved_mode | kFtzDaz);
  }
}

void leave() {
  if (depth > 0 && --depth == 0) _mm_setcsr(saved_mode);
}
#else
void enter() {}
void leave() {}
#endif

}  // namespace

FlushDenormals::FlushDenormals(int threads) : threads_(std::max(1, threads)) {
  enter();
  if (threads_ == 1) return;
#pragma omp parallel num_threads(threads_)
  if (omp_get_thread_num() != 0) enter();
}

FlushDenormals::~FlushDenormals() {
  if (threads_ > 1) {
#pragma omp parallel num_threads(threads_)
    if (omp_get_thread_num() != 0) leave();
  }
  leave();
}

bool denormals_flushed() {
#ifdef ORCHID_HAVE_MXCSR
  return (_mm_getcsr() & kFtzDaz) == kFtzDaz;
#else
  return false;
#endif
}

}  // namespace orchid::runtime
