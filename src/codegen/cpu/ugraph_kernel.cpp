// A block graph as a CPU kernel (ugraph_kernel.h).
#include "codegen/cpu/ugraph_kernel.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "codegen/cpu/emit_reduce.h"
#include "ir/movement.h"
#include "support/error.h"

namespace orchid::codegen::cpu {

using detail::Writer;
using superopt::BlockGraph;
using superopt::DimMap;
using superopt::kReplica;
using superopt::TensorId;
using superopt::UGraph;
using superopt::UOp;
using superopt::UOpType;

namespace {

std::string lit(int64_t v) { return std::to_string(v) + "LL"; }
std::string sum_of(const std::vector<std::string>& terms) {
  std::string out;
  for (const std::string& t : terms) out += (out.empty() ? "" : " + ") + t;
  return out.empty() ? "0LL" : out;
}

// Where a block tensor's elements are: base[offset + sum_d index_d * strides[d]]. Results
// inside a thread graph have none (they stay in registers).
struct Home {
  std::string base;    // "a<arg>" or "sc"
  std::string offset;  // a C expression
  std::vector<int64_t> strides;
  bool accumulate = false;  // results are added to what is there (an out_accum's sum)
};

class BlockKernel {
 public:
  BlockKernel(const UGraph& g, const UOp& op)
      : g_(g), op_(op), b_(g.blocks[static_cast<size_t>(op.body)]), strided_(superopt::strided_views(g)) {}

  GeneratedKernel run(const std::string& symbol) {
    check_types();
    plan_homes();
    w_.open("extern \"C\" void " + symbol +
            "(const orchid_args* args, int64_t task_begin, int64_t task_end, void* scratch) {");
    pointers();
    w_.open("for (int64_t t = task_begin; t < task_end; ++t) {");
    grid_coordinates();
    accumulators();
    w_.open("for (int64_t l = 0; l < " + lit(b_.loop) + "; ++l) {");
    iteration_offsets();
    for (const UOp& o : b_.ops) step(o);
    w_.close();
    w_.close();
    w_.close();
    GeneratedKernel k;
    k.symbol = symbol;
    k.source = w_.text();
    k.tasks = 1;
    for (int64_t n : b_.grid) k.tasks *= n;
    k.scratch_bytes = scratch_floats_ * 4;
    for (TensorId t : op_.inputs) k.inputs.push_back(ir::ValueId(t));
    for (TensorId t : op_.outputs) k.outputs.push_back(ir::ValueId(t));
    for (TensorId t : op_.inputs) k.arg_bytes.push_back(ir::numel(shape(t)) * 4);
    for (TensorId t : op_.outputs) k.arg_bytes.push_back(ir::numel(shape(t)) * 4);
    return k;
  }

 private:
  const ir::Dims& shape(TensorId t) const { return g_.shape(t); }
  // Where a kernel input's elements lie in its buffer: row-major, or a transpose's strides.
  std::vector<int64_t> kernel_strides(TensorId t) const {
    auto v = strided_.find(t);
    return v != strided_.end() ? v->second : ir::row_major_strides(shape(t));
  }

  void check_types() const {
    for (const UOp& o : b_.ops)
      for (const std::vector<TensorId>* ts : {&o.inputs, &o.outputs})
        for (TensorId t : *ts)
          ORCHID_SUPPORTED(g_.tensor(t).dtype == ir::DType::F32)
              << "μGraph code generation computes f32 tensors only; " << g_.tensor(t).name << " is "
              << ir::dtype_name(g_.tensor(t).dtype);
  }

  // The kernel argument of a kernel tensor: its position among op's inputs, then outputs.
  int arg(TensorId t, bool output) const {
    const std::vector<TensorId>& list = output ? op_.outputs : op_.inputs;
    auto at = std::find(list.begin(), list.end(), t);
    ORCHID_CHECK(at != list.end()) << "tensor " << t << " is not an argument of the block";
    return static_cast<int>(at - list.begin()) + (output ? static_cast<int>(op_.inputs.size()) : 0);
  }

  // ---- Where each block tensor lives.

  void plan_homes() {
    std::map<TensorId, int> readers;
    std::map<TensorId, const UOp*> accum_of;  // a tensor an out_accum collects
    for (const UOp& o : b_.ops) {
      for (TensorId t : o.inputs) ++readers[t];
      if (o.type == UOpType::OutAccum) accum_of[o.inputs[0]] = &o;
    }
    for (const UOp& o : b_.ops) {
      if (o.type == UOpType::OutAccum) {
        TensorId out = o.outputs[0];
        accum_[out] = Home{"a" + std::to_string(arg(out, true)), "oo" + std::to_string(out),
                           ir::row_major_strides(shape(out)), o.map.loop == kReplica && b_.loop > 1};
        continue;
      }
      if (o.type == UOpType::InIter) {
        TensorId in = o.inputs[0], t = o.outputs[0];
        homes_[t] = Home{"a" + std::to_string(arg(in, false)), "off" + std::to_string(t), kernel_strides(in), false};
        continue;
      }
      if (o.type == UOpType::Reshape) {
        const Home& from = homes_.at(o.inputs[0]);
        std::optional<ir::Dims> st = ir::reshaped_strides(shape(o.inputs[0]), from.strides, shape(o.outputs[0]));
        if (st) {
          Home h = from;
          h.strides = *st;
          homes_[o.outputs[0]] = h;
          views_.insert(o.outputs[0]);
          continue;
        }
      }
      for (TensorId t : o.outputs) {
        auto acc = accum_of.find(t);
        // A reshape's copy is written in row-major order, so into scratch.
        if (acc != accum_of.end() && readers[t] == 1 && o.type != UOpType::Reshape) {
          in_place_[acc->second->outputs[0]] = t;  // its home: the out_accum's, below
          continue;
        }
        homes_[t] = Home{"sc", lit(scratch_floats_), ir::row_major_strides(shape(t)), false};
        scratch_floats_ += (ir::numel(shape(t)) + 15) / 16 * 16;  // 64-byte aligned
      }
    }
    for (const auto& [out, t] : in_place_) homes_[t] = accum_.at(out);
  }

  // ---- The kernel's frame.

  void pointers() {
    for (size_t i = 0; i < op_.inputs.size(); ++i)
      w_.line("const float* __restrict__ a" + std::to_string(i) + " = (const float*)args->ptrs[" + std::to_string(i) +
              "];");
    for (size_t k = 0; k < op_.outputs.size(); ++k) {
      std::string i = std::to_string(op_.inputs.size() + k);
      w_.line("float* __restrict__ a" + i + " = (float*)args->ptrs[" + i + "];");
    }
    w_.line("float* __restrict__ sc = (float*)scratch;");
    w_.line("(void)sc;");
  }

  void grid_coordinates() {
    int64_t inner = 1;
    for (size_t d = b_.grid.size(); d-- > 0;) {
      std::string x = inner == 1 ? "t" : "(t / " + lit(inner) + ")";
      if (d > 0) x = "(" + x + " % " + lit(b_.grid[d]) + ")";
      w_.line("const int64_t g" + std::to_string(d) + " = " + x + ";");
      w_.line("(void)g" + std::to_string(d) + ";");
      inner *= b_.grid[d];
    }
  }

  // The position of the block among those splitting data dim j under map, and their number.
  std::pair<std::string, int64_t> block_index(const DimMap& map, size_t j) const {
    std::string x;
    int64_t blocks = 1;
    for (size_t gd = 0; gd < map.grid.size(); ++gd) {
      if (map.grid[gd] != static_cast<int32_t>(j)) continue;
      std::string gi = "g" + std::to_string(gd);
      x = x.empty() ? gi : "(" + x + " * " + lit(b_.grid[gd]) + " + " + gi + ")";
      blocks *= b_.grid[gd];
    }
    return {x, blocks};
  }

  // Per out_accum: the block's part's offset in the output (ob<t>), zeroed where the
  // iterations are summed into it.
  void accumulators() {
    for (const UOp& o : b_.ops) {
      if (o.type != UOpType::OutAccum) continue;
      const ir::Dims& part = shape(o.inputs[0]);
      TensorId out = o.outputs[0];
      std::vector<int64_t> st = ir::row_major_strides(shape(out));
      std::vector<std::string> terms;
      for (size_t j = 0; j < part.size(); ++j) {
        auto [bi, blocks] = block_index(o.map, j);
        int64_t span = part[j] * (o.map.loop == static_cast<int32_t>(j) ? b_.loop : 1);
        if (!bi.empty()) terms.push_back(bi + " * " + lit(span * st[j]));
      }
      w_.line("const int64_t ob" + std::to_string(out) + " = " + sum_of(terms) + ";");
      const Home& h = accum_.at(out);
      if (!h.accumulate) continue;
      Home zero = h;
      zero.offset = "ob" + std::to_string(out);
      zero.accumulate = false;
      std::vector<std::string> idx = open_loops(part, true);
      w_.line(element(zero, idx) + " = 0.0f;");
      close_loops();
    }
  }

  // ---- Loops and elements.

  // Loops over `dims` (a dim of one element gets none: its index is "0"); the innermost loop
  // opened is vectorized where `simd`. Returns the indices; close_loops() closes them.
  std::vector<std::string> open_loops(const ir::Dims& dims, bool simd, const std::string& clauses = "") {
    std::vector<std::string> idx;
    size_t last = dims.size();
    for (size_t d = dims.size(); d-- > 0;)
      if (dims[d] > 1) {
        last = d;
        break;
      }
    open_.push_back(0);
    for (size_t d = 0; d < dims.size(); ++d) idx.push_back(open_loop(dims[d], simd && d == last, clauses));
    return idx;
  }
  std::string open_loop(int64_t n, bool simd, const std::string& clauses = "") {
    if (n == 1) return "0";
    std::string v = "i" + std::to_string(vars_++);
    if (simd) w_.line("#pragma omp simd" + clauses);
    w_.open("for (int64_t " + v + " = 0; " + v + " < " + lit(n) + "; ++" + v + ") {");
    ++open_.back();
    return v;
  }
  void close_loops() {
    for (int i = 0; i < open_.back(); ++i) w_.close();
    open_.pop_back();
  }

  static std::string element(const Home& h, const std::vector<std::string>& idx) {
    std::vector<std::string> terms;
    if (h.offset != "0LL") terms.push_back(h.offset);
    for (size_t d = 0; d < idx.size(); ++d)
      if (idx[d] != "0" && h.strides[d] != 0)
        terms.push_back(h.strides[d] == 1 ? idx[d] : idx[d] + " * " + lit(h.strides[d]));
    return h.base + "[" + sum_of(terms) + "]";
  }
  std::string element(TensorId t, const std::vector<std::string>& idx) const { return element(homes_.at(t), idx); }
  std::string store(const Home& h, const std::vector<std::string>& idx, const std::string& value, bool add) const {
    return element(h, idx) + (add || h.accumulate ? " += " : " = ") + value + ";";
  }
  std::string store(TensorId t, const std::vector<std::string>& idx, const std::string& value, bool add = false) const {
    return store(homes_.at(t), idx, value, add);
  }

  // The indices of operand u read where a result of shape `of` is at idx (numpy broadcasting).
  std::vector<std::string> broadcast_idx(TensorId u, const ir::Dims& of, const std::vector<std::string>& idx) const {
    std::vector<std::string> out = idx;
    for (size_t d = 0; d < out.size(); ++d)
      if (shape(u)[d] == 1 && of[d] != 1) out[d] = "0";
    return out;
  }

  // ---- Operators.

  void step(const UOp& o) {
    switch (o.type) {
      case UOpType::InIter: in_iter(o); return;
      case UOpType::OutAccum: out_accum(o); return;
      case UOpType::Reshape: reshape(o); return;
      case UOpType::Matmul: matmul(o.outputs[0], o.inputs[0], o.inputs[1], false); return;
      case UOpType::ConcatMatmul:
        matmul(o.outputs[0], o.inputs[0], o.inputs[2], false);
        matmul(o.outputs[0], o.inputs[1], o.inputs[3], true);
        return;
      case UOpType::Sum: sum(o); return;
      case UOpType::Repeat: repeat(o); return;
      case UOpType::Add:
      case UOpType::Mul:
      case UOpType::Div:
      case UOpType::Exp: elementwise({o}, o.outputs); return;
      case UOpType::Thread: elementwise(g_.threads[static_cast<size_t>(o.body)].ops, o.outputs); return;
      case UOpType::Transpose:
      case UOpType::Scale:
      case UOpType::Block: break;
    }
    ORCHID_CHECK(false) << "a block graph holds no " << superopt::uop_name(o.type);
  }

  void in_iter(const UOp& o) {
    const ir::Dims& whole = shape(o.inputs[0]);
    const ir::Dims& part = shape(o.outputs[0]);
    std::vector<int64_t> st = kernel_strides(o.inputs[0]);
    std::vector<std::string> terms;
    for (size_t j = 0; j < whole.size(); ++j) {
      auto [bi, blocks] = block_index(o.map, j);
      if (!bi.empty()) terms.push_back(bi + " * " + lit(whole[j] / blocks * st[j]));
      if (o.map.loop == static_cast<int32_t>(j)) terms.push_back("l * " + lit(part[j] * st[j]));
    }
    w_.line("const int64_t off" + std::to_string(o.outputs[0]) + " = " + sum_of(terms) + ";");
  }

  // Per out_accum, before the iteration's operators (a result computed in place is written
  // through it): the offset of the iteration's part in the output (oo<t>).
  void iteration_offsets() {
    for (const UOp& o : b_.ops) {
      if (o.type != UOpType::OutAccum) continue;
      TensorId out = o.outputs[0], src = o.inputs[0];
      std::string at = "ob" + std::to_string(out);
      if (o.map.loop != kReplica) {
        auto d = static_cast<size_t>(o.map.loop);
        at += " + l * " + lit(shape(src)[d] * ir::row_major_strides(shape(out))[d]);
      }
      w_.line("const int64_t oo" + std::to_string(out) + " = " + at + ";");
    }
  }

  // The result copied to the output, unless it was computed there.
  void out_accum(const UOp& o) {
    TensorId out = o.outputs[0], src = o.inputs[0];
    if (in_place_.count(out)) return;
    std::vector<std::string> idx = open_loops(shape(src), true);
    w_.line(store(accum_.at(out), idx, element(src, idx), false));
    close_loops();
  }

  void reshape(const UOp& o) {
    TensorId t = o.outputs[0], src = o.inputs[0];
    if (views_.count(t)) return;
    // A copy in row-major order: the result's linear index is the source's.
    std::vector<std::string> idx = open_loops(shape(src), true);
    Home lin = homes_.at(t);
    lin.strides = ir::row_major_strides(shape(src));
    w_.line(store(lin, idx, element(src, idx), false));
    close_loops();
  }

  // c (+)= a · b over the innermost two dims, the others batched (broadcast where 1).
  void matmul(TensorId c, TensorId a, TensorId b, bool add) {
    const ir::Dims& cs = shape(c);
    size_t r = cs.size();
    int64_t m = cs[r - 2], n = cs[r - 1];
    std::vector<std::string> idx = open_loops(ir::Dims(cs.begin(), cs.end() - 2), false);
    Operands x{c, a, b, idx, broadcast_idx(a, cs, idx), broadcast_idx(b, cs, idx), shape(a)[r - 1],
               add || homes_.at(c).accumulate};
    if (n > 1 && homes_.at(b).strides[r - 1] == 1 && m <= kTileRows) {
      // A few rows (attention at decode: the query heads of a kv head): b streamed once, row
      // by row, into c's rows where they live.
      rows(x, m, n);
    } else if (n > 1 && homes_.at(b).strides[r - 1] == 1) {
      // Rows of b are contiguous: tiles of c in registers (blocks(): full ones in a loop, then
      // the edge), the terms in chunks whose rows of b stay in L2 while every tile reads them.
      int64_t chunk = std::max<int64_t>(kMinChunk, kChunkFloats / n);
      blocks(x.k, std::min(chunk, x.k), [&](const std::string& p0, int64_t terms) {
        blocks(m, kTileRows, [&](const std::string& i0, int64_t rows) {
          blocks(n, kTileCols, [&](const std::string& j0, int64_t cols) { tile(x, i0, rows, j0, cols, p0, terms); });
        });
      });
    } else {
      dots(x, m, n);
    }
    close_loops();
  }

  // A matmul's tensors, the batch indices of each, its terms, and whether c accumulates.
  struct Operands {
    TensorId c, a, b;
    std::vector<std::string> ic, ia, ib;
    int64_t k = 0;
    bool accumulate = false;
  };
  // Register tiles of c: kTileRows x kTileCols floats (6 x 16: 12 AVX2 or 6 AVX-512 registers,
  // the micro-kernel's blocking, gemm.inc).
  static constexpr int64_t kTileRows = 6, kTileCols = 16;
  // A chunk of a matmul's terms: rows of b of at most this many floats (256 KiB), and at
  // least this many terms.
  static constexpr int64_t kChunkFloats = 64 * 1024, kMinChunk = 64;

  static std::string plus(const std::string& a, const std::string& b) {
    if (a == "0") return b;
    if (b == "0") return a;
    return "(" + a + " + " + b + ")";
  }
  static std::vector<std::string> at(std::vector<std::string> x, const std::string& p, const std::string& q) {
    x.push_back(p);
    x.push_back(q);
    return x;
  }

  // `#pragma <pragma>`, then `for (int64_t v = 0; v < n; ++v) {` opened.
  void counted_loop(const std::string& v, int64_t n, const std::string& pragma) {
    w_.line("#pragma " + pragma);
    w_.open("for (int64_t " + v + " = 0; " + v + " < " + lit(n) + "; ++" + v + ") {");
  }

  // Calls f(start, size) for the blocks of `size` along an extent: the full blocks in a loop
  // (start a variable), then the edge block.
  void blocks(int64_t extent, int64_t size, const std::function<void(const std::string&, int64_t)>& f) {
    int64_t full = extent / size;
    if (full == 1) f("0", size);
    if (full > 1) {
      std::string v = "b" + std::to_string(vars_++);
      w_.open("for (int64_t " + v + " = 0; " + v + " < " + lit(full * size) + "; " + v + " += " + lit(size) + ") {");
      f(v, size);
      w_.close();
    }
    if (extent % size != 0) f(std::to_string(full * size), extent % size);
  }

  // c's rows i0.. (rows of them) and columns j0.. (cols) accumulated in registers over the
  // terms p0.. (terms of them): per term, each row's a element times b's row segment. The
  // first chunk of terms starts from zero unless c accumulates; later ones add to c.
  void tile(const Operands& x, const std::string& i0, int64_t rows, const std::string& j0, int64_t cols,
            const std::string& p0, int64_t terms) {
    std::string id = std::to_string(vars_++);
    std::string acc = "acc" + id, rv = "r" + id, jv = "j" + id, pv = "p" + id;
    std::string row = plus(i0, rv), col = plus(j0, jv);
    auto rows_loop = [&] { counted_loop(rv, rows, "GCC unroll " + std::to_string(rows)); };
    auto cols_loop = [&] { counted_loop(jv, cols, "omp simd"); };
    std::string cell = acc + "[" + rv + "][" + jv + "]";
    w_.open("{");
    w_.line("float " + acc + "[" + std::to_string(rows) + "][" + std::to_string(cols) + "];");
    rows_loop();
    cols_loop();
    // p0 is "0", or a loop variable from 0 or a later chunk's start (blocks()), which the
    // compiler folds.
    std::string c = element(x.c, at(x.ic, row, col));
    if (!x.accumulate) c = p0 == "0" ? "0.0f" : "(" + p0 + " == 0 ? 0.0f : " + c + ")";
    w_.line(cell + " = " + c + ";");
    w_.close();
    w_.close();
    w_.open("for (int64_t " + pv + " = 0; " + pv + " < " + lit(terms) + "; ++" + pv + ") {");
    std::string term = plus(p0, pv);
    rows_loop();
    w_.line("const float x" + id + " = " + element(x.a, at(x.ia, row, term)) + ";");
    cols_loop();
    w_.line(cell + " += x" + id + " * " + element(x.b, at(x.ib, term, col)) + ";");
    w_.close();
    w_.close();
    w_.close();
    rows_loop();
    cols_loop();
    w_.line(element(x.c, at(x.ic, row, col)) + " = " + cell + ";");
    w_.close();
    w_.close();
    w_.close();
  }

  // c's m rows accumulated term by term: each row's a element times b's row p, read once.
  void rows(const Operands& x, int64_t m, int64_t n) {
    std::string id = std::to_string(vars_++);
    std::string rv = "r" + id, jv = "j" + id, pv = "p" + id;
    if (!x.accumulate) {
      counted_loop(rv, m, "GCC unroll 6");
      counted_loop(jv, n, "omp simd");
      w_.line(element(x.c, at(x.ic, rv, jv)) + " = 0.0f;");
      w_.close();
      w_.close();
    }
    w_.open("for (int64_t " + pv + " = 0; " + pv + " < " + lit(x.k) + "; ++" + pv + ") {");
    counted_loop(rv, m, "GCC unroll 6");
    w_.line("const float x" + id + " = " + element(x.a, at(x.ia, rv, pv)) + ";");
    counted_loop(jv, n, "omp simd");
    w_.line(element(x.c, at(x.ic, rv, jv)) + " += x" + id + " * " + element(x.b, at(x.ib, pv, jv)) + ";");
    w_.close();
    w_.close();
    w_.close();
  }

  // Dot products along the contracted dim (b's rows strided, or one column). Where a's rows fit
  // in L1 (attention at decode, the keys read transposed) b's column is the outer loop: read
  // once, from L1 for every row; where both operands are contiguous along it, the rows' dots
  // run side by side (dot_rows).
  static constexpr int64_t kRowsInL1 = 4096;  // floats
  static constexpr int64_t kLanes = 16;       // partial sums per dot: one AVX-512 vector
  void dots(const Operands& x, int64_t m, int64_t n) {
    size_t r = shape(x.c).size();
    bool contiguous = homes_.at(x.a).strides[r - 1] == 1 && homes_.at(x.b).strides[r - 2] == 1;
    if (contiguous && m * x.k <= kRowsInL1 && m <= kTileRows * 2 && x.k >= kLanes) {
      dot_rows(x, m, n);
      return;
    }
    open_.push_back(0);
    std::string i, j;
    if (m * x.k <= kRowsInL1) {
      j = open_loop(n, false);
      i = open_loop(m, false);
    } else {
      i = open_loop(m, false);
      j = open_loop(n, false);
    }
    std::string s = "s" + std::to_string(vars_++);
    w_.line("float " + s + " = " + (x.accumulate ? element(x.c, at(x.ic, i, j)) : "0.0f") + ";");
    open_.push_back(0);
    std::string p = open_loop(x.k, true, " reduction(+:" + s + ")");
    w_.line(s + " += " + element(x.a, at(x.ia, i, p)) + " * " + element(x.b, at(x.ib, p, j)) + ";");
    close_loops();
    w_.line(element(x.c, at(x.ic, i, j)) + " = " + s + ";");
    close_loops();
  }

  // Per column j of b: the m rows' dots with it, each in kLanes partial sums held in registers
  // (m independent chains of multiply-adds rather than one), then each summed and the terms
  // past the last full vector added.
  void dot_rows(const Operands& x, int64_t m, int64_t n) {
    std::string id = std::to_string(vars_++);
    std::string acc = "acc" + id, rv = "r" + id, lv = "l" + id, pv = "p" + id, sv = "s" + id;
    int64_t full = x.k / kLanes * kLanes;
    open_.push_back(0);
    std::string j = open_loop(n, false);
    auto rows_loop = [&] { counted_loop(rv, m, "GCC unroll " + std::to_string(m)); };
    auto lanes_loop = [&] { counted_loop(lv, kLanes, "omp simd"); };
    w_.line("float " + acc + "[" + std::to_string(m) + "][" + std::to_string(kLanes) + "] = {};");
    w_.open("for (int64_t " + pv + " = 0; " + pv + " < " + lit(full) + "; " + pv + " += " + lit(kLanes) + ") {");
    rows_loop();
    lanes_loop();
    std::string term = "(" + pv + " + " + lv + ")";
    w_.line(acc + "[" + rv + "][" + lv + "] += " + element(x.a, at(x.ia, rv, term)) + " * " +
            element(x.b, at(x.ib, term, j)) + ";");
    w_.close();
    w_.close();
    w_.close();
    // The partial sums halved twice in vectors (16 -> 8 -> 4), then added pairwise: a
    // reduction loop over the 16 would run element by element.
    for (int64_t half : {kLanes / 2, kLanes / 4}) {
      rows_loop();
      counted_loop(lv, half, "omp simd");
      w_.line(acc + "[" + rv + "][" + lv + "] += " + acc + "[" + rv + "][" + lv + " + " + lit(half) + "];");
      w_.close();
      w_.close();
    }
    rows_loop();
    auto lane = [&](int l) { return acc + "[" + rv + "][" + std::to_string(l) + "]"; };
    w_.line("float " + sv + " = (" + lane(0) + " + " + lane(2) + ") + (" + lane(1) + " + " + lane(3) + ");");
    if (x.accumulate) w_.line(sv + " += " + element(x.c, at(x.ic, rv, j)) + ";");
    if (full < x.k) {
      w_.open("for (int64_t " + pv + " = " + lit(full) + "; " + pv + " < " + lit(x.k) + "; ++" + pv + ") {");
      w_.line(sv + " += " + element(x.a, at(x.ia, rv, pv)) + " * " + element(x.b, at(x.ib, pv, j)) + ";");
      w_.close();
    }
    w_.line(element(x.c, at(x.ic, rv, j)) + " = " + sv + ";");
    w_.close();
    close_loops();
  }

  // Every k consecutive elements along dim d summed.
  void sum(const UOp& o) {
    TensorId t = o.outputs[0], x = o.inputs[0];
    const ir::Dims& ts = shape(t);
    size_t d = static_cast<size_t>(o.dim), r = ts.size();
    auto term = [&](std::vector<std::string> idx, const std::string& q) {
      idx[d] = idx[d] == "0" ? q : "(" + idx[d] + " * " + lit(o.k) + " + " + q + ")";
      return element(x, idx);
    };
    if (d + 1 == r) {
      std::vector<std::string> idx = open_loops(ts, false);
      std::string s = "s" + std::to_string(vars_++);
      w_.line("float " + s + " = 0.0f;");
      open_.push_back(0);
      std::string q = open_loop(o.k, true, " reduction(+:" + s + ")");
      w_.line(s + " += " + term(idx, q) + ";");
      close_loops();
      w_.line(store(t, idx, s));
      close_loops();
      return;
    }
    std::vector<std::string> idx = open_loops(ir::Dims(ts.begin(), ts.end() - 1), false);
    idx.push_back("");
    open_.push_back(0);
    if (!homes_.at(t).accumulate) {
      idx.back() = open_loop(ts[r - 1], true);
      w_.line(element(t, idx) + " = 0.0f;");
      if (idx.back() != "0") w_.close(), --open_.back();
    }
    std::string q = open_loop(o.k, false);
    idx.back() = open_loop(ts[r - 1], true);
    w_.line(element(t, idx) + " += " + term(idx, q) + ";");
    close_loops();
    close_loops();
  }

  void repeat(const UOp& o) {
    TensorId t = o.outputs[0], x = o.inputs[0];
    std::vector<std::string> idx = open_loops(shape(t), true);
    std::vector<std::string> ix = idx;
    size_t d = static_cast<size_t>(o.dim);
    if (ix[d] != "0") ix[d] = "(" + ix[d] + " / " + lit(o.k) + ")";
    w_.line(store(t, idx, element(x, ix)));
    close_loops();
  }

  // Elementwise operators `ops` (in order; each result an operand of later ones or stored):
  // each result in `stored` computed in one loop nest, the operators it depends on inline.
  void elementwise(const std::vector<UOp>& ops, const std::vector<TensorId>& stored) {
    std::map<TensorId, const UOp*> producer;
    for (const UOp& o : ops) producer[o.outputs[0]] = &o;
    for (TensorId s : stored) {
      std::vector<std::string> idx = open_loops(shape(s), true);
      w_.line(store(s, idx, value(producer, s, idx)));
      close_loops();
    }
  }

  std::string value(const std::map<TensorId, const UOp*>& producer, TensorId t, const std::vector<std::string>& idx) {
    auto p = producer.find(t);
    if (p == producer.end()) return element(t, idx);
    const UOp& o = *p->second;
    auto operand = [&](size_t i) {
      return value(producer, o.inputs[i], broadcast_idx(o.inputs[i], shape(t), idx));
    };
    switch (o.type) {
      case UOpType::Add: return "(" + operand(0) + " + " + operand(1) + ")";
      case UOpType::Mul: return "(" + operand(0) + " * " + operand(1) + ")";
      case UOpType::Div: return "(" + operand(0) + " / " + operand(1) + ")";
      case UOpType::Exp: return "orc_expf(" + operand(0) + ")";
      case UOpType::Matmul:
      case UOpType::Sum:
      case UOpType::Repeat:
      case UOpType::Reshape:
      case UOpType::Transpose:
      case UOpType::Scale:
      case UOpType::ConcatMatmul:
      case UOpType::InIter:
      case UOpType::OutAccum:
      case UOpType::Block:
      case UOpType::Thread: break;
    }
    ORCHID_CHECK(false) << superopt::uop_name(o.type) << " is not elementwise";
    return {};
  }

  const UGraph& g_;
  const UOp& op_;
  const BlockGraph& b_;
  Writer w_;
  std::map<TensorId, Home> homes_;
  std::map<TensorId, Home> accum_;         // per out_accum output: the block's part, this iteration
  std::map<TensorId, TensorId> in_place_;  // out_accum output -> the result computed into it
  std::set<TensorId> views_;               // reshapes read where their operand lies
  std::map<TensorId, std::vector<int64_t>> strided_;  // kernel inputs that are transposed views
  std::vector<int> open_;  // loops opened per open_loops() call
  int64_t scratch_floats_ = 0;
  int vars_ = 0;
};

}  // namespace

GeneratedKernel generate_block_kernel(const UGraph& g, const UOp& op, const std::string& symbol) {
  ORCHID_CHECK(op.type == UOpType::Block) << "not a block operator";
  return BlockKernel(g, op).run(symbol);
}

}  // namespace orchid::codegen::cpu
