// Loop nests of computed primitives, their pieces, and the text writer (internal to codegen/cpu).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/cpu/emit.h"
#include "codegen/cpu/lower.h"
#include "codegen/cpu/schedule.h"

namespace orchid::codegen::cpu::detail {

// Indented lines of C++.
class Writer {
 public:
  void line(const std::string& s) { out_ += std::string(2 * depth_, ' ') + s + "\n"; }
  void open(const std::string& s) { line(s); ++depth_; }
  void close() { --depth_; line("}"); }
  void close(const std::string& after) { --depth_; line("}" + after); }  // "};" after a lambda
  // Lines written by another writer, indented to this one's depth.
  void text_block(const std::string& text);
  // The pragmas in front of an innermost loop of at most `extent` iterations (0: unknown):
  // vector lanes and unrolling, the unrolled width halved (not below one vector) while it
  // exceeds the extent, so that a short row still runs in the vectorized body.
  void simd_pragmas(const Schedule& s, const std::string& clauses = "", int64_t extent = 0);
  // A constant table of int64_t (`qualifiers` in front of its type).
  void table(const std::string& name, const std::vector<int64_t>& values,
             const std::string& qualifiers = "static const");
  const std::string& text() const { return out_; }

 private:
  std::string out_;
  int depth_ = 0;
};

// Per task: its grid coordinates g<d> from its number t, its row `tb` of the task table, and
// the region bounds (region_lo, region_hi) of every primitive computed per task (all but
// those of the inner loop of a two-level kernel).
void emit_task_header(const KernelLowering& kl, const std::string& table, Writer& w);

// Opens the inner loop of a two-level kernel inside a task: the task's sub-tiles h<d> in
// row-major order, the number ti of each in the whole grid of sub-tiles and its row tbi of
// the sub-tile table, and the region bounds of the primitives computed per sub-tile. Returns
// the number of blocks to close.
int open_inner_loop(const KernelLowering& kl, const std::string& table, Writer& w);

// The tile of kernel output v the current task (`sub`: the current sub-tile of the inner
// loop) writes, as bounds c<j>_lo, c<j>_hi per dim; the condition on the grid coordinates
// (g<d>, or h<d>) under which it writes it (its tile does not follow every grid dim: only at
// coordinate 0 of the others; "" where always); and v's element at absolute indices `idx` in
// its argument.
void emit_tile_bounds(const ir::Graph& g, const KernelLowering& kl, ir::ValueId v, Writer& w, bool sub = false);
std::string tile_owner(const ir::Graph& g, const KernelLowering& kl, ir::ValueId v, bool sub = false);
std::string output_element(const ir::Graph& g, const KernelLowering& kl, ir::ValueId v,
                           const std::vector<std::string>& idx);

// The loop nest computing a primitive over its region in the current task.
void emit_node(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, ExprEmitter& ex,
               Writer& w);

// ---- Pieces of loop nests (emit_node.cpp), shared with emit_lanes.cpp. ----

std::string var(const char* prefix, size_t d);  // "v0", "r1", ...
void open_loop(const std::string& v, const std::string& lo, const std::string& hi, Writer& w);
// Loops over dims [from, to) of the primitive's region in this task.
void open_domain(const NodeLowering& nl, size_t from, size_t to, Writer& w);
// Loops over the reduction domain (the pragma in front of the innermost one).
void open_reduce(const ir::Primitive& p, Writer& w, const std::string& innermost_pragma = "");
void open_reduce_outer(const ir::Primitive& p, size_t count, Writer& w);  // the first `count` dims
void close_n(size_t n, Writer& w);
// v<d> and r<d>; the innermost loop is over the last reduction dim, or else the last dim.
ExprEmitter::Scope scope_of(const ir::Primitive& p);
// The statement storing `value` (in v's compute type) to v's element at s's domain variables.
std::string store(const ir::Graph& g, ExprEmitter& ex, ir::ValueId v, const ExprEmitter::Scope& s,
                  const std::string& value);
// Sum, prod, max, min: acc combined with x in t's compute type (`lane`: float max / min in
// the cheaper form for lanes of a reduction, where which NaN results is unspecified).
std::string combine(ir::ReduceOp r, ir::DType t, const std::string& acc, const std::string& x, bool lane = false);
// The identity of a combiner (the result over an empty domain), in t's compute type.
std::string identity(ir::ReduceOp r, ir::DType t);
bool simple(ir::ReduceOp r);  // sum, prod, max or min

// One output element of a reduction computed term by term (any combiner): the accumulators'
// declarations, their update per term (inside the reduction loops), and the stores.
struct ElementCode {
  std::vector<std::string> decls, update, stores;
};
ElementCode element_code(const ir::Graph& g, const ir::Primitive& p, ExprEmitter& ex, const ExprEmitter::Scope& s);

// Prefetches (schedule.prefetch bytes ahead) for the chunk of `len` iterations from `start`
// of the loop over variable x: the lines that the chunk that far ahead loads of each kernel
// input read contiguously along x (x the last index, the other indices free of x and of
// loads), one prefetch per cache line. Only the last primitive of the kernel to read an input
// prefetches it: a task's last pass over its rows then brings in the next task's, which its
// first pass finds in cache (a first pass streaming through its rows would issue its
// prefetches in a burst, and too late). Inputs of less than 64 times the distance (weights
// that every task reads) stay in cache and are not prefetched.
void emit_prefetches(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, ExprEmitter& ex,
                     const ExprEmitter::Scope& s, const ir::Expr& x, const std::string& start, int64_t len,
                     Writer& w);

// Whether a primitive's outputs are streamed (Schedule::stream): all written in place to the
// kernel's outputs.
bool streamed(const KernelLowering& kl, const NodeLowering& nl, const ir::Primitive& p);

// One output of a streamed row: its dtype, its element where the row's variable is `cb` (the
// chunk's first), and the value it stores at the row's variable (in its compute type).
struct StreamedOutput {
  ir::DType dtype;
  std::string at_chunk, value;
};
// The loop over a row [lo, hi) of variable v whose outputs are streamed: chunks of the row
// computed into buffers on the stack (vectorized as usual), each then streamed to its place
// (prelude: orc_stream); `prefetch` (if set) writes what comes before each chunk's loop.
void emit_streamed_chunks(const Schedule& sched, const std::string& v, const std::string& lo, const std::string& hi,
                          const std::vector<StreamedOutput>& outs, Writer& w,
                          const std::function<void()>& prefetch = nullptr);

// ---- Pieces of an elementwise loop (emit_pieces.cpp). ----

// A range [lo, hi) of the innermost variable of a primitive without reduction, and the box of
// its variables there (the other dims over their whole extents).
struct LoopPiece {
  int64_t lo = 0, hi = 0;
  tile::VarBox box;
};
// The innermost loop of p cut where a select, predicate or mod moving with its variable
// changes (each piece as long as they all stay decided); one piece over the whole extent where
// that would take more than a few; none for a primitive of rank 0 or no elements.
std::vector<LoopPiece> loop_pieces(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p);

// ---- Reductions over lanes (emit_lanes.cpp). ----

// Whether a per-element reduction is computed over lanes: sum, prod, max, min or welford
// with reduction_lanes > 0 over its run of terms.
bool over_lanes(const ir::Primitive& p, const NodeLowering& nl, const Schedule& s);
void emit_lanes(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, ExprEmitter& ex,
                Writer& w);
// An elementwise primitive and the reduction along its rows (NodeLowering::fused_reduction)
// in one loop nest: per row, its values computed and stored in chunks of lanes, each folded
// into the reduction's partials as it is computed; then the reduction's element of the row.
void emit_fused(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, ExprEmitter& ex,
                Writer& w);

// ---- Matmuls by the packed GEMM micro-kernel (emit_gemm.cpp; NodeLowering::gemm). ----

void emit_gemm(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, ExprEmitter& ex, Writer& w);

}  // namespace orchid::codegen::cpu::detail
