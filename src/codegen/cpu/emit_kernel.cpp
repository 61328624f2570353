// The kernel function: argument and scratch pointers, the task loop, per task the regions of
// the computed primitives, their loop nests in topological order, and the copies of tiles
// computed in scratch to the outputs. A two-level kernel computes its last primitives in a
// loop over the task's sub-tiles, each with its own regions and copies.
#include <algorithm>
#include <cstdio>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/emit.h"
#include "codegen/cpu/emit_reduce.h"
#include "support/error.h"

namespace orchid::codegen::cpu {

using namespace detail;
using ir::NodeId;
using ir::ValueId;

namespace {

// A region bound of the task (`sub`: of the sub-tile, from h<d> and its table row tbi).
std::string bound_expr(const TaskBound& b, bool sub) {
  if (!b.affine) return std::string(sub ? "tbi[" : "tb[") + std::to_string(b.column) + "]";
  std::string x = std::to_string(b.c) + "LL";
  for (size_t d = 0; d < b.step.size(); ++d)
    if (b.step[d] != 0) x += " + " + std::to_string(b.step[d]) + "LL * " + (sub ? "h" : "g") + std::to_string(d);
  if (b.lo == b.hi) return std::to_string(b.lo) + "LL";
  return "orc_max64(orc_min64(" + x + ", " + std::to_string(b.hi) + "LL), " + std::to_string(b.lo) + "LL)";
}

void emit_pointers(const ir::Graph& g, const KernelLowering& kl, Writer& w) {
  w.line("int64_t* err = args->error;");
  for (size_t i = 0; i < kl.inputs.size() + kl.outputs.size(); ++i) {
    bool in = i < kl.inputs.size();
    ValueId v = in ? kl.inputs[i] : kl.outputs[i - kl.inputs.size()];
    std::string t = storage_type(g.type(v).dtype);
    std::string c = in ? "const " : "";
    w.line(c + t + "* __restrict__ " + arg_name(static_cast<int>(i)) + " = (" + c + t + "*)args->ptrs[" +
           std::to_string(i) + "];");
  }
  for (const NodeLowering& nl : kl.nodes)
    for (const auto& [v, h] : nl.homes)
      if (!h.global) {
        std::string t = storage_type(g.type(v).dtype);
        w.line(t + "* __restrict__ " + scratch_name(v) + " = (" + t + "*)((char*)scratch + " +
               std::to_string(h.scratch_offset) + ");");
      }
}

// Copies the task's tile of an output computed in scratch to the output buffer.
void emit_copy_out(const ir::Graph& g, const KernelLowering& kl, ExprEmitter& ex, ValueId v, Writer& w, bool sub) {
  const ir::Dims& shape = g.type(v).shape;
  w.open(shape.empty() ? (sub ? "if (ti == 0) {" : "if (t == 0) {") : "{");
  emit_tile_bounds(g, kl, v, w, sub);
  std::string owner = tile_owner(g, kl, v, sub);
  w.open(owner.empty() ? "{" : "if (" + owner + ") {");
  std::vector<std::string> idx;
  for (size_t j = 0; j < shape.size(); ++j) {
    std::string x = "v" + std::to_string(j);
    if (j + 1 == shape.size()) w.simd_pragmas(kl.schedule, "", shape[j]);
    w.open("for (int64_t " + x + " = c" + std::to_string(j) + "_lo; " + x + " < c" + std::to_string(j) +
           "_hi; ++" + x + ") {");
    idx.push_back(x);
  }
  w.line(output_element(g, kl, v, idx) + " = " + ex.element(v, idx) + ";");
  for (size_t j = 0; j < shape.size(); ++j) w.close();
  w.close();
  w.close();
}

// The computed primitives of one level (the task's, or the inner loop's), then the copies of
// that level's outputs computed in scratch.
void emit_level(const ir::Graph& g, const KernelLowering& kl, ExprEmitter& ex, Writer& w, bool sub) {
  for (const NodeLowering& nl : kl.nodes)
    if (!nl.inlined && nl.inner == sub) emit_node(g, kl, nl, ex, w);
  for (const NodeLowering& nl : kl.nodes)
    if (nl.inner == sub)
      for (const auto& [v, h] : nl.homes)
        if (h.copy_out) emit_copy_out(g, kl, ex, v, w, sub);
}

// The inner loop of a two-level kernel, with the primitives computed per sub-tile.
void emit_inner_loop(const ir::Graph& g, const KernelLowering& kl, ExprEmitter& ex, const std::string& table,
                     Writer& w) {
  int loops = open_inner_loop(kl, table, w);
  emit_level(g, kl, ex, w, true);
  for (int i = 0; i < loops; ++i) w.close();
}

}  // namespace

namespace detail {

void emit_task_header(const KernelLowering& kl, const std::string& table, Writer& w) {
  w.line("int64_t rest = t;");
  for (size_t d = kl.grid.size(); d-- > 0;) {
    std::string gd = "g" + std::to_string(d);
    if (d == 0) {
      w.line("const int64_t " + gd + " = rest;");
    } else {
      w.line("const int64_t " + gd + " = rest % " + std::to_string(kl.grid[d]) + "LL; rest /= " +
             std::to_string(kl.grid[d]) + "LL;");
    }
  }
  if (kl.table_columns > 0)
    w.line("const int64_t* tb = " + table + " + t * " + std::to_string(kl.table_columns) + ";");
  for (const NodeLowering& nl : kl.nodes)
    if (!nl.inner)
      for (size_t d = 0; d < nl.lo.size(); ++d) {
        w.line("const int64_t " + region_lo(nl.node, d) + " = " + bound_expr(nl.lo[d], false) + ";");
        w.line("const int64_t " + region_hi(nl.node, d) + " = " + bound_expr(nl.hi[d], false) + ";");
      }
}

int open_inner_loop(const KernelLowering& kl, const std::string& table, Writer& w) {
  const InnerLoop& in = *kl.inner;
  int loops = 0;
  std::string ti = "0LL";
  for (size_t d = 0; d < in.grid.size(); ++d) {
    std::string h = "h" + std::to_string(d), gd = "g" + std::to_string(d);
    std::string r = std::to_string(in.ratio[d]) + "LL";
    if (in.ratio[d] == 1) {
      w.open("{");
      w.line("const int64_t " + h + " = " + gd + ";");
    } else {
      w.open("for (int64_t " + h + " = " + gd + " * " + r + "; " + h + " < orc_min64(" + std::to_string(in.grid[d]) +
             "LL, " + gd + " * " + r + " + " + r + "); ++" + h + ") {");
    }
    ++loops;
    ti = "(" + ti + ") * " + std::to_string(in.grid[d]) + "LL + " + h;
  }
  w.line("const int64_t ti = " + ti + ";");
  w.line("(void)ti;");
  if (in.table_columns > 0)
    w.line("const int64_t* tbi = " + table + " + ti * " + std::to_string(in.table_columns) + ";");
  for (const NodeLowering& nl : kl.nodes)
    if (nl.inner)
      for (size_t d = 0; d < nl.lo.size(); ++d) {
        w.line("const int64_t " + region_lo(nl.node, d) + " = " + bound_expr(nl.lo[d], true) + ";");
        w.line("const int64_t " + region_hi(nl.node, d) + " = " + bound_expr(nl.hi[d], true) + ";");
      }
  return loops;
}

void emit_tile_bounds(const ir::Graph& g, const KernelLowering& kl, ValueId v, Writer& w, bool sub) {
  size_t o = std::find(kl.outputs.begin(), kl.outputs.end(), v) - kl.outputs.begin();
  const OutputTiling& tl = sub ? kl.inner->tilings[o] : kl.tilings[o];
  const ir::Dims& shape = g.type(v).shape;
  for (size_t j = 0; j < shape.size(); ++j) {
    std::string lo = "0LL", hi = std::to_string(shape[j]) + "LL";
    if (tl.align[j] >= 0) {
      lo = "orc_min64(" + std::to_string(shape[j]) + "LL, " + (sub ? "h" : "g") + std::to_string(tl.align[j]) + " * " +
           std::to_string(tl.tile[j]) + "LL)";
      hi = "orc_min64(" + std::to_string(shape[j]) + "LL, c" + std::to_string(j) + "_lo + " +
           std::to_string(tl.tile[j]) + "LL)";
    }
    w.line("const int64_t c" + std::to_string(j) + "_lo = " + lo + ";");
    w.line("const int64_t c" + std::to_string(j) + "_hi = " + hi + ";");
  }
}

std::string tile_owner(const ir::Graph& g, const KernelLowering& kl, ValueId v, bool sub) {
  size_t o = std::find(kl.outputs.begin(), kl.outputs.end(), v) - kl.outputs.begin();
  const OutputTiling& tl = sub ? kl.inner->tilings[o] : kl.tilings[o];
  std::string owner;
  if (g.type(v).shape.empty()) return owner;
  for (size_t a = 0; a < kl.grid.size(); ++a)
    if (std::find(tl.align.begin(), tl.align.end(), static_cast<int>(a)) == tl.align.end())
      owner += (owner.empty() ? "" : " && ") + std::string(sub ? "h" : "g") + std::to_string(a) + " == 0";
  return owner;
}

std::string output_element(const ir::Graph& g, const KernelLowering& kl, ValueId v, const std::vector<std::string>& idx) {
  const ir::Dims& shape = g.type(v).shape;
  ir::Dims strides = ir::row_major_strides(shape);
  std::string off = "0";
  for (size_t j = 0; j < shape.size(); ++j) off += " + " + idx[j] + " * " + std::to_string(strides[j]);
  return arg_name(kl.arg_of(v)) + "[" + off + "]";
}

}  // namespace detail

GeneratedKernel generate_kernel(const ir::Graph& g, const tile::Kernel& k, const Schedule& s,
                                const std::string& symbol, const std::vector<ir::ValueId>& panels) {
  KernelLowering kl = lower_kernel(g, k, s, panels);
  GeneratedKernel gk;
  gk.symbol = symbol;
  gk.tasks = kl.tasks;
  gk.scratch_bytes = kl.scratch_bytes;
  gk.inputs = kl.inputs;
  gk.outputs = kl.outputs;
  gk.arg_bytes = kl.arg_bytes(g);
  gk.schedule = s;
  Writer w;
  std::string table = symbol + "_tasks", sub_table = symbol + "_subtiles";
  if (kl.table_columns > 0) w.table(table, kl.table);
  if (kl.inner && kl.inner->table_columns > 0) w.table(sub_table, kl.inner->table);
  w.open("extern \"C\" void " + symbol +
         "(const orchid_args* args, int64_t t0, int64_t t1, void* scratch) {");
  if (kl.tasks > 0) {
    ExprEmitter ex(g, kl);
    emit_pointers(g, kl, w);
    w.open("for (int64_t t = t0; t < t1; ++t) {");
    emit_task_header(kl, table, w);
    emit_level(g, kl, ex, w, false);
    if (kl.inner) emit_inner_loop(g, kl, ex, sub_table, w);
    w.close();
    if (s.stream) w.line("orc_stream_fence();");
    gk.checks = ex.checks();
  }
  w.close();
  gk.source = w.text();
  return gk;
}

std::vector<std::string> codegen_flags() {
  return {"-fwrapv", "-fopenmp-simd", "-fno-math-errno", "-mprefer-vector-width=512"};
}

}  // namespace orchid::codegen::cpu
