// Internal to the interpreter: primitive bodies compiled to straight-line lane programs.
//
// A program evaluates all bodies of a primitive for a BLOCK of iteration points at once: every
// instruction computes one register, a buffer of lanes (doubles for floats, int64 for
// integers and bool). The variables of one kind (domain or reduction) vary across the lanes;
// those of the other kind are fixed for the block. A register that depends only on fixed
// variables and constants is *uniform*: it is computed in lane 0 only, and broadcast where a
// varying instruction reads it.
//
// `select` and predicated loads evaluate their operands under a *mask* register (the lanes
// where the operand is chosen); a load reads and bounds-checks only its masked lanes, so a
// load in a branch that is not taken never fails. Other instructions compute every lane —
// harmlessly, since the lane operations are total (integer division by 0 is defined).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/expr.h"

namespace orchid::interp::detail {

enum class InstrKind : uint8_t {
  Const,      // dst <- value (run once, before the first block)
  Op,         // dst <- op(args) for a Unary/Binary/Compare/Select/Cast operator
  Load,       // dst <- input[slot][index regs] where mask (else fill)
  Broadcast,  // dst[0..n) <- args[0][0]
};

struct Instr {
  InstrKind kind = InstrKind::Op;
  ir::ExprOp op = ir::ExprOp::Const;   // Op
  ir::DType dtype = ir::DType::I64;    // result dtype
  ir::DType arg_dtype = ir::DType::I64;  // dtype of args[0] (Op)
  int32_t dst = -1;
  int32_t args[3] = {-1, -1, -1};
  ir::Scalar value;                    // Const: the value; Load: the fill
  int32_t slot = -1;                   // Load: input slot
  std::vector<int32_t> index;          // Load: one register per dimension
  int32_t mask = -1;                   // Load: bool register of the lanes to read; -1: all
  // Load: the indices are i0, i1, ... of a domain equal to the input's shape and the block
  // runs over the domain, so lane j reads element start + j (no index registers, always in
  // bounds) — the common elementwise load.
  bool contiguous = false;
};

struct RegInfo {
  bool is_float = false;
  bool uniform = false;
};

// A loop variable's register, filled by the driver before each block.
struct VarReg {
  ir::VarKind kind = ir::VarKind::Domain;
  int32_t index = 0;
  int32_t reg = -1;
};

struct Program {
  std::vector<RegInfo> regs;
  std::vector<Instr> init;     // constants, run once
  std::vector<Instr> code;     // run for every block
  std::vector<VarReg> vars;    // the variables the bodies use
  std::vector<int32_t> bodies; // one varying register per body
};

// What the compiler needs to know about the primitive and its blocking.
struct CompileInfo {
  bool domain_varies = true;          // domain variables change across the lanes of a block
  bool reduce_varies = false;         // reduction variables do (the other kind is uniform)
  ir::Dims domain;                    // the iteration domain
  std::vector<ir::Dims> input_shapes; // by load slot
};

Program compile_bodies(const std::vector<ir::Expr>& bodies, const CompileInfo& info);

}  // namespace orchid::interp::detail
