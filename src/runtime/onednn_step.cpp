// The oneDNN step: a matched LinearPattern (onednn_pattern.h) becomes one oneDNN primitive
// with post-ops, created once; run() binds the caller's buffers and executes it.
#include "runtime/onednn_step.h"

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

// A matmul operand of stored shape [b.., r, c] read in a rank-`rank` domain: leading 1s
// added; `trans` reads it as [b.., c, r] by swapping the last two strides.
memory::desc matmul_operand_desc(const ir::Dims& shape, size_t rank, bool trans) {
  ir::Dims dims(rank - shape.size(), 1);
  dims.insert(dims.end(), shape.begin(), shape.end());
  ir::Dims strides = ir::row_major_strides(dims);
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
  }
  ORCHID_CHECK(false) << "unknown eltwise post-op";
  return dnnl::algorithm::undef;
}

dnnl::primitive_attr make_attr(const LinearPattern& p) {
  dnnl::post_ops ops;
  for (const PostOp& op : p.post_ops) {
    if (const auto* b = std::get_if<BinaryPostOp>(&op)) {
      ops.append_binary(binary_algorithm(b->alg), plain_desc(b->dims));
    } else {
      const auto& e = std::get<EltwisePostOp>(op);
      ops.append_eltwise(1.0f, eltwise_algorithm(e.alg), e.alpha, e.beta);
    }
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// The layouts the step's buffers have: src and dst dense row-major, weights as stored.
struct Layouts {
  memory::desc src, weights, dst;
};

Layouts matmul_layouts(const LinearPattern& p) {
  const auto& attrs = std::get<ir::MatMulAttrs>(p.attrs);
  size_t rank = p.out.size();
  return {matmul_operand_desc(p.a.shape, rank, attrs.trans_a),
          matmul_operand_desc(p.b.shape, rank, attrs.trans_b), plain_desc(p.out)};
}

// Grouped weights [K, C/g, k..] are oneDNN's [g, K/g, C/g, k..] (goihw), the same bytes.
Layouts conv_layouts(const LinearPattern& p) {
  const auto& attrs = std::get<ir::ConvAttrs>(p.attrs);
  ir::Dims w = p.b.shape;
  if (attrs.groups > 1) {
    w[0] /= attrs.groups;
    w.insert(w.begin(), attrs.groups);
  }
  return {plain_desc(p.a.shape), plain_desc(w), plain_desc(p.out)};
}

// oneDNN counts dilation from 0 (no gaps); the IR from 1.
memory::dims onednn_dilations(const ir::Dims& d) {
  memory::dims out;
  for (int64_t x : d) out.push_back(x - 1);
  return out;
}

dnnl::primitive_desc conv_pd(const LinearPattern& p, const Layouts& l, const memory::desc& weights,
                             const dnnl::engine& engine) {
  const auto& a = std::get<ir::ConvAttrs>(p.attrs);
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                    l.src, weights, l.dst, to_dims(a.strides), onednn_dilations(a.dilations),
                                    to_dims(a.pads_begin), to_dims(a.pads_end));
  return dnnl::convolution_forward::primitive_desc(d, make_attr(p), engine);
}

// The primitive descriptor; with `any_weights` the primitive picks the weights' layout.
// UnsupportedError when oneDNN has no implementation, or only its naive reference one.
dnnl::primitive_desc make_pd(const LinearPattern& p, const Layouts& l, bool any_weights,
                             const dnnl::engine& engine) {
  memory::desc weights = any_weights ? memory::desc(l.weights.dims(), kF32, memory::format_tag::any) : l.weights;
  dnnl::primitive_desc pd;
  try {
    if (p.op == ir::PrimOp::MatMul)
      pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(l.src, weights, l.dst), make_attr(p), engine);
    else
      pd = conv_pd(p, l, weights, engine);
  } catch (const dnnl::error& e) {
    ORCHID_SUPPORTED(false) << "onednn: no implementation of this " << ir::prim_op_name(p.op) << " ("
                            << e.what() << ")";
  }
  std::string impl = pd.impl_info_str();
  ORCHID_SUPPORTED(impl.rfind("ref", 0) != 0)
      << "onednn: only the naive reference implementation (" << impl << ") fits this "
      << ir::prim_op_name(p.op);
  return pd;
}

LinearPattern match_or_throw(const ir::Graph& g) {
  onednn::PatternMatch m = onednn::match_linear_pattern(g);
  ORCHID_SUPPORTED(m.pattern.has_value()) << m.reason;
  return *m.pattern;
}

Layouts layouts(const LinearPattern& p) {
  return p.op == ir::PrimOp::MatMul ? matmul_layouts(p) : conv_layouts(p);
}

// Scratchpads for concurrent runs: each run leases its own buffer, and buffers are kept for
// later runs (a large scratchpad allocated per run would fault its pages in every time).
class ScratchPool {
 public:
  explicit ScratchPool(size_t bytes) : bytes_(bytes) {}

  class Lease {
   public:
    Lease(const ScratchPool& pool, std::vector<std::byte> buf) : pool_(pool), buf_(std::move(buf)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { pool_.release(std::move(buf_)); }
    void* data() { return aligned(buf_); }

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
  static constexpr size_t kAlign = 64;
  static void* aligned(std::vector<std::byte>& b) {
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

class OnednnStep final : public LibraryStep {
 public:
  OnednnStep(const ir::Graph& g, const LinearPattern& p, const std::vector<const void*>& constant_inputs);
  void run(void* const* args) const override;

 private:
  struct BinaryArg {
    int arg;  // DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1
    memory::desc desc;
    DataRef data;
  };

  DataRef reference(const ir::Graph& g, const Operand& o);
  void pack_weights(const dnnl::primitive_desc& pd, const void* weights);
  void check_no_overlap(void* const* args) const;

  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  std::map<int32_t, std::vector<std::byte>> constants_;  // graph constants read, by value id
  Layouts layouts_;
  DataRef src_, weights_;
  std::optional<memory> packed_weights_;
  std::vector<BinaryArg> binary_args_;
  int32_t output_arg_ = 0;
  dnnl::primitive primitive_;
  memory::desc scratch_desc_;
  std::unique_ptr<ScratchPool> scratch_;
};

OnednnStep::OnednnStep(const ir::Graph& g, const LinearPattern& p, const std::vector<const void*>& constant_inputs)
    : layouts_(layouts(p)), output_arg_(static_cast<int32_t>(g.inputs().size())) {
  ORCHID_CHECK(constant_inputs.empty() || constant_inputs.size() == g.inputs().size())
      << "constant_inputs has " << constant_inputs.size() << " entries for " << g.inputs().size() << " inputs";
  src_ = reference(g, p.a);
  weights_ = reference(g, p.b);
  const void* constant_weights = weights_.fixed;
  if (!constant_weights && !constant_inputs.empty()) constant_weights = constant_inputs[static_cast<size_t>(p.b.input)];
  dnnl::primitive_desc pd = make_pd(p, layouts_, constant_weights != nullptr, engine_);
  if (constant_weights) pack_weights(pd, constant_weights);
  for (size_t k = 0; k < p.post_ops.size(); ++k)
    if (const auto* b = std::get_if<BinaryPostOp>(&p.post_ops[k]))
      binary_args_.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(k)) | DNNL_ARG_SRC_1,
                              plain_desc(b->dims), reference(g, b->operand)});
  scratch_desc_ = pd.scratchpad_desc();
  scratch_ = std::make_unique<ScratchPool>(scratch_desc_.get_size());
  primitive_ = dnnl::primitive(pd);
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

// oneDNN may write parts of the result before it has read all of its operands.
void OnednnStep::check_no_overlap(void* const* args) const {
  auto* out = static_cast<const std::byte*>(args[output_arg_]);
  size_t out_bytes = layouts_.dst.get_size();
  auto disjoint = [&](const void* data, size_t bytes) {
    auto* in = static_cast<const std::byte*>(data);
    return in + bytes <= out || out + out_bytes <= in;
  };
  bool ok = disjoint(src_.get(args), layouts_.src.get_size()) &&
            (packed_weights_ || disjoint(weights_.get(args), layouts_.weights.get_size()));
  for (const BinaryArg& b : binary_args_) ok = ok && disjoint(b.data.get(args), b.desc.get_size());
  ORCHID_CHECK(ok) << "onednn step: the output buffer overlaps an input";
}

void OnednnStep::run(void* const* args) const {
  check_no_overlap(args);
  std::unordered_map<int, memory> m;
  m.emplace(DNNL_ARG_SRC, memory(layouts_.src, engine_, src_.get(args)));
  m.emplace(DNNL_ARG_WEIGHTS,
            packed_weights_ ? *packed_weights_ : memory(layouts_.weights, engine_, weights_.get(args)));
  m.emplace(DNNL_ARG_DST, memory(layouts_.dst, engine_, args[output_arg_]));
  for (const BinaryArg& b : binary_args_) m.emplace(b.arg, memory(b.desc, engine_, b.data.get(args)));
  ScratchPool::Lease scratch = scratch_->acquire();
  if (scratch_desc_.get_size() > 0) m.emplace(DNNL_ARG_SCRATCHPAD, memory(scratch_desc_, engine_, scratch.data()));
  dnnl::stream s(engine_);
  primitive_.execute(s, m);
  s.wait();
}

}  // namespace

std::unique_ptr<LibraryStep> make_onednn_step(const ir::Graph& g, const std::vector<const void*>& constant_inputs) {
  return std::make_unique<OnednnStep>(g, match_or_throw(g), constant_inputs);
}

std::string onednn_step_unsupported(const ir::Graph& g) {
  onednn::PatternMatch m = onednn::match_linear_pattern(g);
  if (!m.pattern) return m.reason;
  try {
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    make_pd(*m.pattern, layouts(*m.pattern), false, engine);
  } catch (const UnsupportedError& e) {
    return e.what();
  }
  return "";
}

std::string onednn_implementation(const ir::Graph& g, bool constant_weights) {
  LinearPattern p = match_or_throw(g);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return make_pd(p, layouts(p), constant_weights, engine).impl_info_str();
}

}  // namespace orchid::runtime
