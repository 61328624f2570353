// A matmul step graph as one cuBLASLt call (lt_matmul.h).
#include "runtime/cuda/lt_matmul.h"

#include <sstream>
#include <variant>

#include "runtime/onednn_pattern.h"

namespace orchid::runtime::cuda {

namespace {

using onednn::LinearPattern;
using onednn::Operand;

// A matrix whose element (r, c) lies at r·sr + c·sc, column-major: as stored (unit row
// stride, ld = sc) or as the transpose of a stored matrix (unit column stride, ld = sr). A
// dim of extent 1 takes any stride. None where neither has unit stride or ld is too small.
std::optional<LtMatrix> column_major(int64_t rows, int64_t cols, int64_t sr, int64_t sc) {
  if (sr == 1 || rows == 1) {
    int64_t ld = cols == 1 ? rows : sc;
    if (ld >= rows && ld >= 1) return LtMatrix{-1, false, rows, cols, ld, 0};
  }
  if (sc == 1 || cols == 1) {
    int64_t ld = rows == 1 ? cols : sr;
    if (ld >= cols && ld >= 1) return LtMatrix{-1, true, cols, rows, ld, 0};
  }
  return std::nullopt;
}

// The one stride between consecutive batches of an operand of `shape` (its last two dims the
// matrix) at `strides`, over the output's batch dims `batch` (numpy-broadcast, right-aligned);
// none where its batch dims do not collapse into one.
std::optional<int64_t> batch_stride(const ir::Dims& batch, const ir::Dims& shape, const ir::Dims& strides) {
  auto lead = static_cast<int64_t>(batch.size()) - (static_cast<int64_t>(shape.size()) - 2);
  int64_t stride = 0, span = 1;
  bool first = true;
  for (auto j = static_cast<int64_t>(batch.size()) - 1; j >= 0; --j) {
    if (batch[static_cast<size_t>(j)] == 1) continue;
    int64_t dim = j - lead;
    int64_t s = dim < 0 || shape[static_cast<size_t>(dim)] == 1 ? 0 : strides[static_cast<size_t>(dim)];
    if (first) stride = s;
    if (s != stride * span) return std::nullopt;
    first = false;
    span *= batch[static_cast<size_t>(j)];
  }
  return stride;
}

// A matmul operand's strides: along its dim that is not K (`outer`: M of A', N of B'), along
// K, and between batches (none where its batch dims do not collapse into one stride).
struct OperandStrides {
  int64_t outer = 0, k = 0;
  std::optional<int64_t> batch;
};

// `k_first`: the operand is stored (K, outer) rather than (outer, K).
OperandStrides strides_for(const Operand& o, const ir::Dims& batch, bool k_first) {
  ir::Dims st = onednn::strides_of(o);
  size_t q = o.shape.size();
  OperandStrides s;
  s.k = k_first ? st[q - 2] : st[q - 1];
  s.outer = k_first ? st[q - 1] : st[q - 2];
  s.batch = batch_stride(batch, o.shape, st);
  return s;
}

// The column-major matrix `outer` × `k` of an operand with strides s, at `arg`.
std::optional<LtMatrix> operand_matrix(int32_t arg, int64_t outer, int64_t k, const OperandStrides& s) {
  std::optional<LtMatrix> m = column_major(outer, k, s.outer, s.k);
  if (!m) return std::nullopt;
  m->arg = arg;
  m->batch_stride = *s.batch;
  return m;
}

// The transpose of a matrix description: the same bytes seen with rows and columns swapped.
LtMatrix transposed(LtMatrix m) {
  m.trans = !m.trans;
  return m;
}

// The operand of a residual post-op: a sum, or a binary add of a tensor of the output's full
// shape (after a scale, which keeps the pattern from making it a sum); none for other ops.
const Operand* residual_of(const onednn::PostOp& op, const LinearPattern& p) {
  if (const auto* sum = std::get_if<onednn::SumPostOp>(&op)) return &sum->operand;
  const auto* add = std::get_if<onednn::BinaryPostOp>(&op);
  if (add && add->alg == onednn::BinaryAlg::Add && add->dims == p.out) return &add->operand;
  return nullptr;
}

// In this order, each optional: a scale (without a bias: cuBLASLt does not scale the bias),
// a residual, a relu.
std::string check_post_ops(const LinearPattern& p, LtMatmul& mm) {
  size_t i = 0;
  if (i < p.post_ops.size() && mm.bias < 0) {
    const auto* e = std::get_if<onednn::EltwisePostOp>(&p.post_ops[i]);
    if (e && e->alg == onednn::EltwiseAlg::Linear && e->beta == 0) {
      mm.alpha = e->alpha;
      ++i;
    }
  }
  if (i < p.post_ops.size()) {
    if (const Operand* r = residual_of(p.post_ops[i], p)) {
      if (r->input < 0 || !r->strides.empty()) return "a residual that is not a dense step input";
      mm.c = mm.d;
      mm.c->arg = r->input;
      ++i;
    }
  }
  if (i < p.post_ops.size()) {
    const auto* e = std::get_if<onednn::EltwisePostOp>(&p.post_ops[i]);
    if (e && e->alg == onednn::EltwiseAlg::Relu && e->alpha == 0) {
      mm.relu = true;
      ++i;
    }
  }
  if (i < p.post_ops.size())
    return "post-op " + onednn::describe(p.post_ops[i]) + " (only a scale without a bias, a residual, then a relu)";
  return "";
}

std::string match(const LinearPattern& p, const ir::Graph& g, LtMatmul& mm) {
  if (p.op != ir::PrimOp::MatMul) return "a convolution (only matmuls)";
  if (!p.out_strides.empty()) return "the product is written through a permutation";
  if (p.a.input < 0 || p.b.input < 0) return "an operand that is a constant of the step graph";
  if (g.type(g.outputs()[0]).numel() == 0) return "an empty product";
  const auto& attrs = std::get<ir::MatMulAttrs>(p.attrs);
  size_t r = p.out.size();
  int64_t rows = p.out[r - 2], cols = p.out[r - 1];
  size_t qa = p.a.shape.size();
  int64_t k = attrs.trans_a ? p.a.shape[qa - 2] : p.a.shape[qa - 1];
  if (k == 0) return "a product over 0 terms";
  ir::Dims batch(p.out.begin(), p.out.end() - 2);
  OperandStrides sa = strides_for(p.a, batch, attrs.trans_a), sb = strides_for(p.b, batch, !attrs.trans_b);
  if (!sa.batch || !sb.batch) return "an operand whose strides are not those of a (batched) matrix";
  int64_t batches = ir::numel(batch);
  // Weights the same for every batch, and A's rows evenly spaced across batches (one row per
  // batch, or batches of rows back to back): one product of all the rows, not a batch of thin
  // ones that each read the weights again.
  if (batches > 1 && *sb.batch == 0 && *sa.batch > 0 && (rows == 1 || *sa.batch == rows * sa.outer)) {
    if (rows == 1) sa.outer = *sa.batch;
    rows *= batches;
    batches = 1;
    sa.batch = 0;
  }
  // cuBLASLt's A: B'ᵀ, N × K; its B: A'ᵀ, K × M, the M × K matrix of A' transposed.
  std::optional<LtMatrix> a = operand_matrix(p.b.input, cols, k, sb), b = operand_matrix(p.a.input, rows, k, sa);
  if (!a || !b) return "an operand whose strides are not those of a (batched) matrix";
  auto out = static_cast<int32_t>(g.inputs().size());
  mm.dtype = p.dtype;
  mm.m = cols;
  mm.n = rows;
  mm.k = k;
  mm.batch = batches;
  mm.a = *a;
  mm.b = transposed(*b);
  mm.d = LtMatrix{out, false, cols, rows, cols, rows * cols};
  if (p.bias) {
    if (p.bias->input < 0) return "a bias that is a constant of the step graph";
    mm.bias = p.bias->input;
  }
  return check_post_ops(p, mm);
}

}  // namespace

LtMatch match_lt_matmul(const ir::Graph& g) {
  LtMatmul mm;
  std::string why = onednn::match_for("cublaslt", g, [&](const LinearPattern& p) { return match(p, g, mm); });
  if (!why.empty()) return {std::nullopt, why};
  return {mm, ""};
}

std::string describe(const LtMatmul& mm) {
  std::ostringstream os;
  os << "cublaslt " << ir::dtype_name(mm.dtype);
  if (mm.batch > 1) os << " batch " << mm.batch;
  os << " m " << mm.m << " n " << mm.n << " k " << mm.k;
  if (mm.a.trans) os << ", A^T";
  if (mm.b.trans) os << ", B^T";
  if (mm.alpha != 1) os << ", alpha " << mm.alpha;
  if (mm.bias >= 0) os << ", bias";
  if (mm.c) os << ", residual";
  if (mm.relu) os << ", relu";
  return os.str();
}

}  // namespace orchid::runtime::cuda
