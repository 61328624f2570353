// The oneDNN step: a matched LinearPattern (onednn_pattern.h) becomes one oneDNN primitive
// with bias and post-ops, created once, plus the reorders into and out of the layouts it
// chose; run() binds the caller's buffers and executes them.
#include "runtime/onednn_step.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

#include "runtime/onednn_pattern.h"
#include "support/error.h"

namespace orchid::runtime {

namespace {

using dnnl::memory;
using onednn::BinaryAlg;
using onednn::BinaryPostOp;
using onednn::EltwiseAlg;
using onednn::EltwisePostOp;
using onednn::LinearPattern;
using onednn::Operand;
using onednn::PostOp;

constexpr auto kF32 = memory::data_type::f32;

memory::dims to_dims(const ir::Dims& d) { return memory::dims(d.begin(), d.end()); }

memory::desc plain_desc(const ir::Dims& shape) {
  return memory::desc(to_dims(shape), kF32, to_dims(ir::row_major_strides(shape)));
}

// An operand as the step reads it: its shape at its strides (dense row-major without any).
memory::desc read_desc(const ir::Dims& shape, const ir::Dims& strides) {
  return strides.empty() ? plain_desc(shape) : memory::desc(to_dims(shape), kF32, to_dims(strides));
}

// A matmul operand read in shape [b.., r, c] at `read_strides` in a rank-`rank` domain:
// leading 1s added; `trans` reads it as [b.., c, r] by swapping the last two strides.
memory::desc matmul_operand_desc(const ir::Dims& shape, const ir::Dims& read_strides, size_t rank, bool trans) {
  ir::Dims dims(rank - shape.size(), 1);
  dims.insert(dims.end(), shape.begin(), shape.end());
  ir::Dims strides = ir::row_major_strides(dims);
  if (!read_strides.empty()) std::copy(read_strides.begin(), read_strides.end(), strides.end() - static_cast<std::ptrdiff_t>(read_strides.size()));
  if (trans) {
    std::swap(dims[rank - 2], dims[rank - 1]);
    std::swap(strides[rank - 2], strides[rank - 1]);
  }
  return memory::desc(to_dims(dims), kF32, to_dims(strides));
}

dnnl::algorithm binary_algorithm(BinaryAlg a) {
  switch (a) {
    case BinaryAlg::Add: return dnnl::algorithm::binary_add;
    case BinaryAlg::Sub: return dnnl::algorithm::binary_sub;
    case BinaryAlg::Mul: return dnnl::algorithm::binary_mul;
    case BinaryAlg::Div: return dnnl::algorithm::binary_div;
    case BinaryAlg::Max: return dnnl::algorithm::binary_max;
    case BinaryAlg::Min: return dnnl::algorithm::binary_min;
  }
  ORCHID_CHECK(false) << "unknown binary post-op";
  return dnnl::algorithm::undef;
}

dnnl::algorithm eltwise_algorithm(EltwiseAlg a) {
  switch (a) {
    case EltwiseAlg::Relu: return dnnl::algorithm::eltwise_relu;
    case EltwiseAlg::Clip: return dnnl::algorithm::eltwise_clip_v2;
    case EltwiseAlg::Linear: return dnnl::algorithm::eltwise_linear;
    case EltwiseAlg::Logistic: return dnnl::algorithm::eltwise_logistic;
    case EltwiseAlg::Tanh: return dnnl::algorithm::eltwise_tanh;
    case EltwiseAlg::Exp: return dnnl::algorithm::eltwise_exp;
    case EltwiseAlg::Log: return dnnl::algorithm::eltwise_log;
    case EltwiseAlg::Abs: return dnnl::algorithm::eltwise_abs;
    case EltwiseAlg::Sqrt: return dnnl::algorithm::eltwise_sqrt;
    case EltwiseAlg::Swish: return dnnl::algorithm::eltwise_swish;
    case EltwiseAlg::Hardswish: return dnnl::algorithm::eltwise_hardswish;
    case EltwiseAlg::GeluErf: return dnnl::algorithm::eltwise_gelu_erf;
  }
  ORCHID_CHECK(false) << "unknown eltwise post-op";
  return dnnl::algorithm::undef;
}

// How the step runs a pattern. `blocked` (convs): src and dst in the layouts the primitive
// prefers (format any: oneDNN's fast convolutions want channel-blocked activations, and run
// the dense row-major ones through im2col and gemm at about half the speed), reordered in and
// out on every run. `strided` (convs): src and dst at the strides the pattern reads and
// writes them (a permutation to channels-last, which oneDNN's JIT convolutions run as fast as
// the blocked layout); else dense row-major, reordered in and out where they are strided.
// `sum`: a SumPostOp as oneDNN's sum post-op, else as a binary add.
struct Variant {
  bool blocked = false;
  bool sum = true;
  bool strided = false;
  ConvAlgorithm algorithm = ConvAlgorithm::Direct;
};

// `residual`: the residual's layout as stored, which a binary add (the variant without the sum
// post-op) reads it in.
dnnl::primitive_attr make_attr(const LinearPattern& p, Variant v, const memory::desc& residual) {
  dnnl::post_ops ops;
  for (const PostOp& op : p.post_ops) {
    if (const auto* b = std::get_if<BinaryPostOp>(&op)) {
      ops.append_binary(binary_algorithm(b->alg), plain_desc(b->dims));
    } else if (const auto* e = std::get_if<EltwisePostOp>(&op)) {
      ops.append_eltwise(1.0f, eltwise_algorithm(e->alg), e->alpha, e->beta);
    } else if (v.sum) {
      ops.append_sum(1.0f);
    } else {
      ops.append_binary(dnnl::algorithm::binary_add, residual);
    }
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// The layouts of the step's buffers: src, dst and the residual in their buffers' layouts
// (dense row-major, nChw8c, nChw16c or nhwc, layout.h), weights as stored; the bias (zero dims without one)
// as oneDNN reads it: [C] for a conv, [1.., N] for a matmul.
struct Layouts {
  memory::desc src, weights, dst, bias, residual;
};

// The desc of a [N, C, H, W] f32 buffer in activation layout l (nChw8c, nChw16c or nhwc).
memory::desc activation_desc(const ir::Dims& shape, BufferLayout l) {
  auto tag = l == BufferLayout::Nhwc      ? memory::format_tag::nhwc
             : l == BufferLayout::NChw16c ? memory::format_tag::nChw16c
                                          : memory::format_tag::nChw8c;
  return memory::desc(to_dims(shape), kF32, tag);
}

memory::desc bias_desc(const LinearPattern& p) {
  if (!p.bias) return {};
  int64_t channels = p.out[onednn::channel_dim(p)];
  if (p.op == ir::PrimOp::Conv) return plain_desc({channels});
  ir::Dims dims(p.out.size(), 1);
  dims.back() = channels;
  return plain_desc(dims);
}

const onednn::SumPostOp* sum_post_op(const LinearPattern& p) {
  for (const PostOp& op : p.post_ops)
    if (const auto* sum = std::get_if<onednn::SumPostOp>(&op)) return sum;
  return nullptr;
}

// The layout of each argument of the step's graph (inputs, then its one output), and which of
// them the step reads as a conv's src or residual or writes as its dst: the roles in which an
// argument may be in an activation layout (nChw8c, nChw16c, nhwc).
struct ArgLayouts {
  const ir::Graph& g;
  const std::vector<BufferLayout>& layouts;

  BufferLayout output() const { return layouts.back(); }
  BufferLayout of(const Operand& o) const {
    return o.input >= 0 ? layouts[static_cast<size_t>(o.input)] : BufferLayout::Plain;
  }
  // The desc of operand o in a role that may read it blocked: the operand must be the input
  // itself, not a view of it, for its bytes to be in the input's layout.
  memory::desc desc(const Operand& o, const char* role) const {
    if (of(o) == BufferLayout::Plain) return read_desc(o.shape, o.strides);
    const ir::Dims& stored = g.type(g.inputs()[static_cast<size_t>(o.input)]).shape;
    ORCHID_USER_CHECK(stored == o.shape && o.strides.empty()) << "onednn step: the " << role << " (input " << o.input << ") is "
                                         << buffer_layout_name(of(o)) << " but read through a view";
    return activation_desc(o.shape, of(o));
  }
};

// Rejects any argument in a layout other than plain, but an activation layout in the roles `blocked_ok`
// allows (a conv's src, dst and residual).
void check_plain_roles(const LinearPattern& p, const ArgLayouts& a, std::vector<bool> blocked_ok) {
  auto require_plain = [&](const Operand& o, const char* role) {
    ORCHID_USER_CHECK(a.of(o) == BufferLayout::Plain)
        << "onednn step: the " << role << " (input " << o.input << ") must be plain, not " << buffer_layout_name(a.of(o));
  };
  require_plain(p.b, p.op == ir::PrimOp::Conv ? "weights" : "matmul B");
  if (p.bias) require_plain(*p.bias, "bias");
  for (const PostOp& op : p.post_ops)
    if (const auto* b = std::get_if<BinaryPostOp>(&op)) require_plain(b->operand, "binary post-op operand");
  for (size_t k = 0; k < blocked_ok.size(); ++k)
    ORCHID_USER_CHECK(a.layouts[k] == BufferLayout::Plain || (blocked_ok[k] && is_activation_layout(a.layouts[k])))
        << "onednn step: argument " << k << " is " << buffer_layout_name(a.layouts[k])
        << (p.op == ir::PrimOp::MatMul ? "; a matmul reads and writes plain buffers only" : "");
}

Layouts matmul_layouts(const LinearPattern& p, const ArgLayouts& a) {
  check_plain_roles(p, a, std::vector<bool>(a.layouts.size(), false));
  const auto& attrs = std::get<ir::MatMulAttrs>(p.attrs);
  size_t rank = p.out.size();
  return {matmul_operand_desc(p.a.shape, p.a.strides, rank, attrs.trans_a),
          matmul_operand_desc(p.b.shape, p.b.strides, rank, attrs.trans_b), read_desc(p.out, p.out_strides),
          bias_desc(p), plain_desc(p.out)};
}

// Grouped weights [K, C/g, k..] are oneDNN's [g, K/g, C/g, k..] (goihw), the same bytes.
Layouts conv_layouts(const LinearPattern& p, const ArgLayouts& a) {
  std::vector<bool> blocked_ok(a.layouts.size(), false);
  if (p.a.input >= 0) blocked_ok[static_cast<size_t>(p.a.input)] = true;
  blocked_ok.back() = true;
  const onednn::SumPostOp* sum = sum_post_op(p);
  if (sum && sum->operand.input >= 0) blocked_ok[static_cast<size_t>(sum->operand.input)] = true;
  check_plain_roles(p, a, blocked_ok);
  const auto& attrs = std::get<ir::ConvAttrs>(p.attrs);
  ir::Dims w = p.b.shape;
  if (attrs.groups > 1) {
    w[0] /= attrs.groups;
    w.insert(w.begin(), attrs.groups);
  }
  memory::desc dst = read_desc(p.out, p.out_strides);
  if (a.output() != BufferLayout::Plain) {
    ORCHID_USER_CHECK(a.g.type(a.g.outputs()[0]).shape == p.out && p.out_strides.empty())
        << "onednn step: the output is " << buffer_layout_name(a.output()) << " but written through a view";
    dst = activation_desc(p.out, a.output());
  }
  return {a.desc(p.a, "src"), plain_desc(w), dst, bias_desc(p), sum ? a.desc(sum->operand, "residual") : memory::desc()};
}

Layouts layouts(const LinearPattern& p, const ir::Graph& g, const std::vector<BufferLayout>& arg_layouts) {
  ArgLayouts a{g, arg_layouts};
  return p.op == ir::PrimOp::MatMul ? matmul_layouts(p, a) : conv_layouts(p, a);
}

std::vector<BufferLayout> all_plain(const ir::Graph& g) {
  return std::vector<BufferLayout>(g.inputs().size() + g.outputs().size(), BufferLayout::Plain);
}

// oneDNN counts dilation from 0 (no gaps); the IR from 1.
memory::dims onednn_dilations(const ir::Dims& d) {
  memory::dims out;
  for (int64_t x : d) out.push_back(x - 1);
  return out;
}

memory::desc any_layout(const memory::desc& d) { return memory::desc(d.dims(), kF32, memory::format_tag::any); }

dnnl::primitive_desc conv_pd(const LinearPattern& p, const Layouts& l, const memory::desc& weights, Variant v,
                             const dnnl::engine& engine) {
  const auto& a = std::get<ir::ConvAttrs>(p.attrs);
  memory::desc src = v.blocked ? any_layout(l.src) : v.strided ? l.src : plain_desc(p.a.shape);
  memory::desc dst = v.blocked ? any_layout(l.dst) : v.strided ? l.dst : plain_desc(p.out);
  auto direct = v.algorithm == ConvAlgorithm::Winograd ? dnnl::algorithm::convolution_winograd
                                                       : dnnl::algorithm::convolution_direct;
  auto inference = dnnl::prop_kind::forward_inference;
  if (!p.bias) {
    dnnl::convolution_forward::desc d(inference, direct, src, weights, dst, to_dims(a.strides),
                                      onednn_dilations(a.dilations), to_dims(a.pads_begin), to_dims(a.pads_end));
    return dnnl::convolution_forward::primitive_desc(d, make_attr(p, v, l.residual), engine);
  }
  dnnl::convolution_forward::desc d(inference, direct, src, weights, l.bias, dst, to_dims(a.strides),
                                    onednn_dilations(a.dilations), to_dims(a.pads_begin), to_dims(a.pads_end));
  return dnnl::convolution_forward::primitive_desc(d, make_attr(p, v, l.residual), engine);
}

dnnl::primitive_desc matmul_pd(const LinearPattern& p, const Layouts& l, const memory::desc& weights, Variant v,
                               const dnnl::engine& engine) {
  dnnl::matmul::desc d = p.bias ? dnnl::matmul::desc(l.src, weights, l.bias, l.dst)
                                : dnnl::matmul::desc(l.src, weights, l.dst);
  return dnnl::matmul::primitive_desc(d, make_attr(p, v, l.residual), engine);
}

// The primitive descriptor of variant v, or empty with `why` set when oneDNN has no
// implementation of it, or only its naive reference one. With `any_weights` the primitive
// picks the weights' layout.
std::optional<dnnl::primitive_desc> try_pd(const LinearPattern& p, const Layouts& l, bool any_weights, Variant v,
                                           const dnnl::engine& engine, std::string& why) {
  memory::desc weights = any_weights ? any_layout(l.weights) : l.weights;
  dnnl::primitive_desc pd;
  try {
    pd = p.op == ir::PrimOp::MatMul ? matmul_pd(p, l, weights, v, engine) : conv_pd(p, l, weights, v, engine);
  } catch (const dnnl::error& e) {
    why = "onednn: no implementation of this " + std::string(ir::prim_op_name(p.op)) + " (" + e.what() + ")";
    return std::nullopt;
  }
  std::string impl = pd.impl_info_str();
  if (impl.rfind("ref", 0) == 0) {
    why = "onednn: only the naive reference implementation (" + impl + ") fits this " +
          std::string(ir::prim_op_name(p.op));
    return std::nullopt;
  }
  return pd;
}

// A binary operand oneDNN reads the same whatever the output's layout: a scalar or one value
// per channel. (A plain operand of another broadcast next to a blocked output is not a
// combination to trust oneDNN 2.6's JIT kernels with.)
bool layout_free(const ir::Dims& dims, const LinearPattern& p) {
  size_t channel = onednn::channel_dim(p);
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] != 1 && d != channel) return false;
  return true;
}

// Whether some output position of a conv reads only padding (every kernel tap outside the
// input) along some dim. oneDNN 2.6's brgconv, which the blocked layouts select, crashes on
// such convs when a sum post-op is followed by an eltwise one (a fuzz over shapes found no
// other crash); they keep the plain layouts.
bool has_padding_only_outputs(const LinearPattern& p) {
  const auto& a = std::get<ir::ConvAttrs>(p.attrs);
  for (size_t d = 0; d < a.strides.size(); ++d) {
    int64_t in = p.a.shape[d + 2], taps = p.b.shape[d + 2];
    for (int64_t o = 0; o < p.out[d + 2]; ++o) {
      int64_t first = o * a.strides[d] - a.pads_begin[d];
      bool reads_input = false;
      for (int64_t k = 0; k < taps && !reads_input; ++k) {
        int64_t at = first + k * a.dilations[d];
        reads_input = at >= 0 && at < in;
      }
      if (!reads_input) return true;
    }
  }
  return false;
}

// The variants worth trying, best first: strided operands for a conv whose binary operands
// are scalars, blocked layouts for one whose binary operands allow them, the sum post-op
// before a binary add. (oneDNN 2.6's gemm convolution, which strided operands with packed
// weights select, applies a per-channel or wider binary operand wrongly to a channels-last
// dst: OnednnStep.StridedOutputWithABinaryOperand; and its brgconv, which computes
// channels-last on AVX-512, adds a residual wrongly where some output reads only padding:
// OnednnStep.PermutedOperandsMatchTheInterpreter, seed 69.)
std::vector<Variant> variants(const LinearPattern& p, ConvAlgorithm algorithm) {
  bool padding_only = p.op == ir::PrimOp::Conv && has_padding_only_outputs(p);
  bool blocked = p.op == ir::PrimOp::Conv && !padding_only, sum = false, scalar_binaries = true;
  for (const PostOp& op : p.post_ops) {
    if (const auto* b = std::get_if<BinaryPostOp>(&op)) {
      blocked = blocked && layout_free(b->dims, p);
      scalar_binaries = scalar_binaries && ir::numel(b->dims) == 1;
    }
    sum = sum || std::holds_alternative<onednn::SumPostOp>(op);
  }
  std::vector<Variant> out;
  if (algorithm == ConvAlgorithm::Winograd) {
    // Winograd computes in its own blocked layout: the activations reordered in and out, with
    // the blocked layouts' conditions on binary operands.
    if (blocked) out.push_back({true, true, false, algorithm});
    if (blocked && sum) out.push_back({true, false, false, algorithm});
    return out;
  }
  bool strided = !p.a.strides.empty() || !p.out_strides.empty();
  if (p.op == ir::PrimOp::Conv && strided && scalar_binaries && !padding_only) out.push_back({false, true, true});
  if (blocked) out.push_back({true, true});
  out.push_back({false, true});
  // The sum as a binary add on a matmul's strided dst is what faults (lower()).
  if (sum && (p.op == ir::PrimOp::Conv || p.out_strides.empty())) out.push_back({false, false});
  return out;
}

struct Lowering {
  Variant variant;
  dnnl::primitive_desc pd;
};

// The first variant oneDNN has a proper implementation of; UnsupportedError saying why the
// last (the plainest) has none when none has.
Lowering lower(const LinearPattern& p, const Layouts& l, bool any_weights, const dnnl::engine& engine,
               ConvAlgorithm algorithm) {
  // oneDNN 2.6's brgemm matmul crashes (a fault in its JIT code) writing a strided dst with a
  // binary post-op (OnednnStep.StridedMatMulWithABinaryPostOp).
  bool binary = std::any_of(p.post_ops.begin(), p.post_ops.end(),
                            [](const PostOp& op) { return std::holds_alternative<BinaryPostOp>(op); });
  ORCHID_SUPPORTED(p.op != ir::PrimOp::MatMul || p.out_strides.empty() || !binary)
      << "onednn: a matmul writing a strided result with a binary post-op (oneDNN 2.6's brgemm matmul faults on it)";
  ORCHID_SUPPORTED(algorithm == ConvAlgorithm::Direct || p.op == ir::PrimOp::Conv)
      << "onednn: Winograd is for convolutions, not a " << ir::prim_op_name(p.op);
  ORCHID_SUPPORTED(algorithm == ConvAlgorithm::Direct || any_weights)
      << "onednn: Winograd needs constant weights (transformed once, when the step is made)";
  std::vector<Variant> tried = variants(p, algorithm);
  ORCHID_SUPPORTED(!tried.empty()) << "onednn: Winograd computes blocked, which this conv's binary operands (other than "
                                      "scalars or per channel) or outputs reading only padding rule out";
  std::string why;
  for (Variant v : tried)
    if (auto pd = try_pd(p, l, any_weights, v, engine, why)) return {v, *pd};
  ORCHID_SUPPORTED(false) << why;
  return {};
}

// A binary operand's dims over a matmul's output [b.., M, N] read as [R, N] (R = b..·M rows),
// or empty when they do not fold: it must be the same for every row, or the output's shape (a
// per-row operand [R, 1] would fold, but oneDNN 2.6 has only its reference implementation
// for it).
ir::Dims fold_rows(const ir::Dims& dims, const ir::Dims& out) {
  if (dims == out) return {ir::numel(out) / out.back(), out.back()};
  for (size_t d = 0; d + 1 < out.size(); ++d)
    if (dims[d] != 1) return {};
  return {1, dims.back()};
}

// A matmul whose B has no batch (its batch dims all 1) and whose A is read untransposed is one
// GEMM of all of A's rows: [b.., M, K] x [K, N] as [b..·M, K] x [K, N], the same bytes. oneDNN
// runs the batch of small-M products that fission writes for a linear layer on a sequence
// ([197,1,128] x [1,128,384]) several times slower than the one GEMM.
void fold_matmul_rows(LinearPattern& p) {
  if (p.op != ir::PrimOp::MatMul || p.out.size() < 3 || std::get<ir::MatMulAttrs>(p.attrs).trans_a) return;
  if (!p.a.strides.empty() || !p.b.strides.empty() || !p.out_strides.empty()) return;
  for (size_t d = 0; d + 2 < p.b.shape.size(); ++d)
    if (p.b.shape[d] != 1) return;
  std::vector<PostOp> ops = p.post_ops;
  for (PostOp& op : ops)
    if (auto* b = std::get_if<BinaryPostOp>(&op)) {
      b->dims = fold_rows(b->dims, p.out);
      if (b->dims.empty()) return;
    }
  int64_t rows = ir::numel(p.out) / p.out.back();
  p.a.shape = {rows, p.a.shape.back()};
  p.b.shape = {p.b.shape.end()[-2], p.b.shape.back()};
  p.out = {rows, p.out.back()};
  p.post_ops = std::move(ops);
}

// The pattern of g as the step runs it; UnsupportedError with the reason when g does not fit.
LinearPattern step_pattern(const ir::Graph& g) {
  onednn::PatternMatch m = onednn::match_linear_pattern(g);
  ORCHID_SUPPORTED(m.pattern.has_value()) << m.reason;
  fold_matmul_rows(*m.pattern);
  return *m.pattern;
}

constexpr size_t kAlign = 64;

size_t align_up(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Per-run buffers for concurrent runs: each run leases its own, and buffers are kept for
// later runs (a large buffer allocated per run would fault its pages in every time).
class ScratchPool {
 public:
  explicit ScratchPool(size_t bytes) : bytes_(bytes) {}

  class Lease {
   public:
    Lease(const ScratchPool& pool, std::vector<std::byte> buf) : pool_(pool), buf_(std::move(buf)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { pool_.release(std::move(buf_)); }
    std::byte* data() { return aligned(buf_); }

   private:
    const ScratchPool& pool_;
    std::vector<std::byte> buf_;
  };

  Lease acquire() const {
    std::lock_guard lock(mu_);
    if (free_.empty()) return Lease(*this, std::vector<std::byte>(bytes_ + kAlign));
    std::vector<std::byte> buf = std::move(free_.back());
    free_.pop_back();
    return Lease(*this, std::move(buf));
  }

 private:
  static std::byte* aligned(std::vector<std::byte>& b) {
    auto addr = reinterpret_cast<uintptr_t>(b.data());
    return b.data() + ((kAlign - addr % kAlign) % kAlign);
  }
  void release(std::vector<std::byte> buf) const {
    std::lock_guard lock(mu_);
    free_.push_back(std::move(buf));
  }

  size_t bytes_;
  mutable std::mutex mu_;
  mutable std::vector<std::vector<std::byte>> free_;
};

// Where run() finds an operand: args[arg], or fixed data the step owns.
struct DataRef {
  int32_t arg = -1;
  const void* fixed = nullptr;
  void* get(void* const* args) const { return const_cast<void*>(fixed ? fixed : args[arg]); }
};

// A primitive run with a user scratchpad (the start of a run's leased buffer): oneDNN's own
// (library-mode) scratchpad is not safe for a primitive that runs on several threads at once.
struct Runnable {
  dnnl::primitive primitive;
  memory::desc scratch;

  void run(dnnl::stream& s, std::unordered_map<int, memory> args, std::byte* scratchpad, const dnnl::engine& e) const {
    if (scratch.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, memory(scratch, e, scratchpad));
    primitive.execute(s, args);
  }
};

Runnable make_reorder(const memory::desc& from, const memory::desc& to, const dnnl::engine& e) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::reorder::primitive_desc pd(e, from, e, to, attr);
  return {dnnl::reorder(pd), pd.scratchpad_desc()};
}

class OnednnStep final : public LibraryStep {
 public:
  OnednnStep(const ir::Graph& g, const LinearPattern& p, const std::vector<const void*>& constant_inputs,
             const std::vector<BufferLayout>& arg_layouts, ConvAlgorithm algorithm);
  void run(void* const* args) const override;

 private:
  struct BinaryArg {
    int arg;  // DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1
    memory::desc desc;
    DataRef data;
  };

  DataRef reference(const ir::Graph& g, const Operand& o);
  void pack_weights(const dnnl::primitive_desc& pd, const void* weights);
  void add_reorders(const dnnl::primitive_desc& pd);
  void check_no_overlap(void* const* args) const;
  memory residual_into_dst(void* const* args, std::byte* buf, dnnl::stream& s) const;

  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  std::map<int32_t, std::vector<std::byte>> constants_;  // graph constants read, by value id
  Layouts layouts_;
  DataRef src_, weights_;
  std::optional<DataRef> bias_;
  std::optional<DataRef> sum_;  // the residual a sum post-op adds: copied into dst first
  std::optional<memory> packed_weights_;
  std::vector<BinaryArg> binary_args_;
  int32_t output_arg_ = 0;
  Runnable primitive_;
  // Blocked layouts: the primitive's src and dst, the reorders into and out of them, and
  // where in a run's buffer (after the scratchpads) they live.
  memory::desc src_desc_, dst_desc_;
  std::optional<Runnable> src_in_, residual_in_, dst_out_;
  size_t src_offset_ = 0, dst_offset_ = 0;
  std::unique_ptr<ScratchPool> buffers_;
};

OnednnStep::OnednnStep(const ir::Graph& g, const LinearPattern& p, const std::vector<const void*>& constant_inputs,
                       const std::vector<BufferLayout>& arg_layouts, ConvAlgorithm algorithm)
    : layouts_(layouts(p, g, arg_layouts)), output_arg_(static_cast<int32_t>(g.inputs().size())) {
  ORCHID_CHECK(constant_inputs.empty() || constant_inputs.size() == g.inputs().size())
      << "constant_inputs has " << constant_inputs.size() << " entries for " << g.inputs().size() << " inputs";
  src_ = reference(g, p.a);
  weights_ = reference(g, p.b);
  if (p.bias) bias_ = reference(g, *p.bias);
  const void* constant_weights = weights_.fixed;
  if (!constant_weights && !constant_inputs.empty()) constant_weights = constant_inputs[static_cast<size_t>(p.b.input)];
  Lowering low = lower(p, layouts_, constant_weights != nullptr, engine_, algorithm);
  if (constant_weights) pack_weights(low.pd, constant_weights);
  for (size_t k = 0; k < p.post_ops.size(); ++k) {
    int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(k)) | DNNL_ARG_SRC_1;
    if (const auto* b = std::get_if<BinaryPostOp>(&p.post_ops[k])) {
      binary_args_.push_back({arg, plain_desc(b->dims), reference(g, b->operand)});
    } else if (const auto* s = std::get_if<onednn::SumPostOp>(&p.post_ops[k])) {
      if (low.variant.sum)
        sum_ = reference(g, s->operand);
      else
        binary_args_.push_back({arg, layouts_.residual, reference(g, s->operand)});
    }
  }
  primitive_ = {dnnl::primitive(low.pd), low.pd.scratchpad_desc()};
  add_reorders(low.pd);
}

DataRef OnednnStep::reference(const ir::Graph& g, const Operand& o) {
  if (o.input >= 0) return {o.input, nullptr};
  auto [it, added] = constants_.try_emplace(o.constant.v, g.constant(o.constant).bytes());
  return {-1, it->second.data()};  // map nodes stay put: the pointer remains valid
}

// Reorders constant weights once into the layout the primitive chose (when it differs from
// the stored one); run() then binds the packed copy.
void OnednnStep::pack_weights(const dnnl::primitive_desc& pd, const void* weights) {
  memory::desc chosen = pd.weights_desc();
  if (chosen == layouts_.weights) return;  // run() reads them where they are
  memory user(layouts_.weights, engine_, const_cast<void*>(weights));
  packed_weights_ = memory(chosen, engine_);
  dnnl::stream s(engine_);
  dnnl::reorder(user, *packed_weights_).execute(s, user, *packed_weights_);
  s.wait();
}

// The reorders between the caller's layouts and the primitive's where they differ, and the
// per-run buffer: the largest scratchpad (the primitives of a run execute one after another),
// then the primitive's src and dst when they are blocked.
void OnednnStep::add_reorders(const dnnl::primitive_desc& pd) {
  src_desc_ = pd.src_desc();
  dst_desc_ = pd.dst_desc();
  if (src_desc_ != layouts_.src) src_in_ = make_reorder(layouts_.src, src_desc_, engine_);
  if (dst_desc_ != layouts_.dst) dst_out_ = make_reorder(dst_desc_, layouts_.dst, engine_);
  if (sum_ && layouts_.residual != dst_desc_) residual_in_ = make_reorder(layouts_.residual, dst_desc_, engine_);
  size_t scratch = primitive_.scratch.get_size();
  for (const auto* r : {&src_in_, &residual_in_, &dst_out_})
    if (*r) scratch = std::max(scratch, (*r)->scratch.get_size());
  src_offset_ = align_up(scratch);
  dst_offset_ = src_offset_ + (src_in_ ? align_up(src_desc_.get_size()) : 0);
  buffers_ = std::make_unique<ScratchPool>(dst_offset_ + (dst_out_ ? dst_desc_.get_size() : 0));
}

// oneDNN may write parts of the result before it has read all of its operands.
void OnednnStep::check_no_overlap(void* const* args) const {
  auto* out = static_cast<const std::byte*>(args[output_arg_]);
  size_t out_bytes = layouts_.dst.get_size();
  auto disjoint = [&](const void* data, size_t bytes) {
    auto* in = static_cast<const std::byte*>(data);
    return in + bytes <= out || out + out_bytes <= in;
  };
  bool ok = disjoint(src_.get(args), layouts_.src.get_size()) &&
            (packed_weights_ || disjoint(weights_.get(args), layouts_.weights.get_size())) &&
            (!bias_ || disjoint(bias_->get(args), layouts_.bias.get_size())) &&
            (!sum_ || disjoint(sum_->get(args), out_bytes));
  for (const BinaryArg& b : binary_args_) ok = ok && disjoint(b.data.get(args), b.desc.get_size());
  ORCHID_CHECK(ok) << "onednn step: the output buffer overlaps an input";
}

// The memory the primitive writes (the output, or a copy in the primitive's layout), holding
// the residual when a sum post-op adds one.
memory OnednnStep::residual_into_dst(void* const* args, std::byte* buf, dnnl::stream& s) const {
  memory dst = dst_out_ ? memory(dst_desc_, engine_, buf + dst_offset_) : memory(dst_desc_, engine_, args[output_arg_]);
  if (!sum_) return dst;
  if (residual_in_)
    residual_in_->run(s, {{DNNL_ARG_FROM, memory(layouts_.residual, engine_, sum_->get(args))}, {DNNL_ARG_TO, dst}},
                      buf, engine_);
  else
    std::memcpy(dst.get_data_handle(), sum_->get(args), dst_desc_.get_size());
  return dst;
}

void OnednnStep::run(void* const* args) const {
  check_no_overlap(args);
  ScratchPool::Lease lease = buffers_->acquire();
  std::byte* buf = lease.data();
  dnnl::stream s(engine_);
  memory src(layouts_.src, engine_, src_.get(args));
  if (src_in_) {
    memory blocked(src_desc_, engine_, buf + src_offset_);
    src_in_->run(s, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, blocked}}, buf, engine_);
    src = blocked;
  }
  memory dst = residual_into_dst(args, buf, s);
  std::unordered_map<int, memory> m;
  m.emplace(DNNL_ARG_SRC, src);
  m.emplace(DNNL_ARG_WEIGHTS,
            packed_weights_ ? *packed_weights_ : memory(layouts_.weights, engine_, weights_.get(args)));
  if (bias_) m.emplace(DNNL_ARG_BIAS, memory(layouts_.bias, engine_, bias_->get(args)));
  m.emplace(DNNL_ARG_DST, dst);
  for (const BinaryArg& b : binary_args_) m.emplace(b.arg, memory(b.desc, engine_, b.data.get(args)));
  primitive_.run(s, std::move(m), buf, engine_);
  if (dst_out_)
    dst_out_->run(s, {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, memory(layouts_.dst, engine_, args[output_arg_])}}, buf,
                  engine_);
  s.wait();
}

}  // namespace

std::unique_ptr<LibraryStep> make_onednn_step(const ir::Graph& g, const std::vector<const void*>& constant_inputs,
                                              const std::vector<BufferLayout>& layouts, ConvAlgorithm algorithm) {
  return std::make_unique<OnednnStep>(g, step_pattern(g), constant_inputs, layouts, algorithm);
}

std::vector<BufferLayout> onednn_preferred_layouts(const ir::Graph& g, const std::vector<bool>& constant_inputs,
                                                   ConvAlgorithm algorithm) {
  LinearPattern p = step_pattern(g);
  std::vector<BufferLayout> out = all_plain(g);
  if (p.op != ir::PrimOp::Conv) return out;
  // As the step decides when made: weights that are a graph constant or a constant input are
  // packed into the layout the primitive picks.
  bool constant_weights = p.b.input < 0 || constant_inputs[static_cast<size_t>(p.b.input)];
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  Lowering low = lower(p, layouts(p, g, out), constant_weights, engine, algorithm);
  if (!low.variant.blocked) return out;
  // The activation layout the primitive computes this argument in, or plain.
  auto computes_in = [](const memory::desc& chosen, const ir::Dims& shape) {
    for (BufferLayout l : {BufferLayout::NChw8c, BufferLayout::NChw16c, BufferLayout::Nhwc})
      if (layout_fits(l, {ir::DType::F32, shape}) && chosen == activation_desc(shape, l)) return l;
    return BufferLayout::Plain;
  };
  auto stored_as_read = [&](const Operand& o) {
    return o.input >= 0 && g.type(g.inputs()[static_cast<size_t>(o.input)]).shape == o.shape && o.strides.empty();
  };
  std::vector<BufferLayout> want = out;
  if (stored_as_read(p.a)) want[static_cast<size_t>(p.a.input)] = computes_in(low.pd.src_desc(), p.a.shape);
  if (BufferLayout dst = computes_in(low.pd.dst_desc(), p.out); dst != BufferLayout::Plain) {
    if (g.type(g.outputs()[0]).shape == p.out && p.out_strides.empty()) want.back() = dst;
    const onednn::SumPostOp* sum = sum_post_op(p);
    if (sum && stored_as_read(sum->operand)) want[static_cast<size_t>(sum->operand.input)] = dst;
  }
  // An input also read in a role that must stay plain (weights, bias, a binary operand) stays
  // plain: layouts() accepts exactly these.
  try {
    layouts(p, g, want);
  } catch (const UserError&) {
    return out;
  }
  return want;
}

std::string onednn_step_unsupported(const ir::Graph& g, ConvAlgorithm algorithm) {
  try {
    LinearPattern p = step_pattern(g);
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    // Winograd's weights must be constant (transformed when the step is made): asked as if they were.
    lower(p, layouts(p, g, all_plain(g)), algorithm == ConvAlgorithm::Winograd, engine, algorithm);
  } catch (const UnsupportedError& e) {
    return e.what();
  }
  return "";
}

std::string onednn_implementation(const ir::Graph& g, bool constant_weights, ConvAlgorithm algorithm) {
  LinearPattern p = step_pattern(g);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  Layouts l = layouts(p, g, all_plain(g));
  Lowering low = lower(p, l, constant_weights, engine, algorithm);
  bool reorders = low.pd.src_desc() != l.src || low.pd.dst_desc() != l.dst;
  return std::string(low.pd.impl_info_str()) + (reorders ? " (src/dst reordered)" : "");
}

}  // namespace orchid::runtime
