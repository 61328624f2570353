// Internal to the interpreter: runs a lane program (program.h) block after block.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "interp/buffer.h"
#include "interp/lane_ops.h"
#include "interp/program.h"

namespace orchid::interp::detail {

// One input of the primitive, as its loads see it.
struct LoadSource {
  const Buffer* buf = nullptr;
  ir::Dims strides;   // row-major, in elements
  std::string name;   // the value's name, for messages
};

class Machine {
 public:
  // `lanes` is the largest block; `label` names the primitive in error messages.
  Machine(const Program& prog, std::vector<LoadSource> sources, int64_t lanes, Precision p,
          std::string label);

  // The lanes of a variable register (lane 0 only for a uniform one), set before run().
  int64_t* var_lanes(int32_t reg) { return regs_.ip(reg); }
  // Evaluates every instruction for lanes [0, n), the block of domain points starting at
  // flat index `start` when the block runs over the domain; bodies are then in registers.
  void run(int64_t start, int64_t n);
  const double* f(int32_t reg) { return regs_.fp(reg); }
  const int64_t* i(int32_t reg) { return regs_.ip(reg); }

 private:
  void exec_const(const Instr& in);
  void exec_broadcast(const Instr& in, int64_t n);
  void exec_load(const Instr& in, int64_t n);
  void exec_contiguous_load(const Instr& in, int64_t start, int64_t n);
  bool offsets(const Instr& in, const int64_t* mask, int64_t n);
  [[noreturn]] void out_of_bounds(const Instr& in, const int64_t* mask, int64_t n);
  bool uniform(int32_t reg) const { return prog_.regs[static_cast<size_t>(reg)].uniform; }

  const Program& prog_;
  std::vector<LoadSource> sources_;
  Precision precision_;
  std::string label_;
  RegFile regs_;
  std::vector<int64_t> offset_;  // flat element offsets of a load's lanes
};

}  // namespace orchid::interp::detail
