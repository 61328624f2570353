// Subnormal floats read and written as zero while a plan compiled with --flush-denormals runs
// (Plan::flush_denormals): x86 MXCSR's FTZ and DAZ bits.
#pragma once

namespace orchid::runtime {

// While alive: FTZ and DAZ set on the calling thread and on the other threads of an OpenMP
// team of `threads` (the pool the runtime's steps run on: its kernels' teams and oneDNN's;
// threads OpenMP starts meanwhile copy the caller's flushed mode); when it ends, the caller's
// mode from before is put back on the caller and on the other threads of such a team. Scopes
// nest. Does nothing where the host has no MXCSR.
class FlushDenormals {
 public:
  explicit FlushDenormals(int threads);
  ~FlushDenormals();
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  int threads_;
  unsigned saved_;  // the caller's MXCSR before the scope
};

// Whether the calling thread reads and writes subnormal floats as zero now.
bool denormals_flushed();

}  // namespace orchid::runtime
