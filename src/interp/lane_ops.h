// Internal to the interpreter: registers of a lane program, and the lane loops of every
// expression operator (docs/ir.md, "Scalar and index expressions").
#pragma once

#include <cstdint>
#include <vector>

#include "interp/int_ops.h"
#include "interp/interp.h"
#include "interp/program.h"

namespace orchid::interp::detail {

// The registers of a running program; register r uses f[r] (floats) or i[r] (integral).
struct RegFile {
  std::vector<std::vector<double>> f;
  std::vector<std::vector<int64_t>> i;
  double* fp(int32_t r) { return f[static_cast<size_t>(r)].data(); }
  int64_t* ip(int32_t r) { return i[static_cast<size_t>(r)].data(); }
};

// Executes an Op instruction on lanes [0, n) (n = 1 for a uniform one). Float results are
// rounded to their dtype in Own precision.
void exec_op(const Instr& in, RegFile& regs, int64_t n, Precision p);

// Scalar semantics shared with the reductions and opaque routines.
inline double nan_max(double a, double b) {
  return a != a ? a : b != b ? b : (a < b ? b : a);
}
inline double nan_min(double a, double b) {
  return a != a ? a : b != b ? b : (b < a ? b : a);
}

}  // namespace orchid::interp::detail
