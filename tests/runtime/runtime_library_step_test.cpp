// Library steps against the reference interpreter: oneDNN matmul / conv with post-ops on
// seeded random shapes, attributes and post-op chains (constant and run-time weights); graphs
// as fission builds them from ONNX; the reference step on opaque routines; the reasons given
// for graphs a step cannot run; concurrent runs. Also prints (never asserts) the GFLOP/s of a
// 512³ matmul and a 3×3 64→64 56×56 conv through the step.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "runtime/library_step.h"
#include "runtime/onednn_pattern.h"
#include "runtime/onednn_step.h"
#include "support/error.h"
#include "support/random.h"
#include "testlib/errors.h"
#include "testlib/onnx_builder.h"
#include "testlib/random_linear.h"
#include "testlib/text.h"

namespace orchid::runtime {
namespace {

using testlib::conv_rhs;
using testlib::ConvCase;
using testlib::matmul_rhs;
using testlib::MatMulCase;
using testlib::random_conv;
using testlib::random_matmul;

using ir::Dims;
using ir::Tensor;
using ir::TensorType;

// ---- Running a step on tensors ----

std::vector<Tensor> run_step(const LibraryStep& step, const ir::Graph& g, std::vector<Tensor> inputs) {
  std::vector<Tensor> outputs;
  for (ir::ValueId v : g.outputs()) outputs.emplace_back(g.type(v));
  std::vector<void*> args;
  for (Tensor& t : inputs) args.push_back(t.data());
  for (Tensor& t : outputs) args.push_back(t.data());
  step.run(args.data());
  return outputs;
}

std::vector<const void*> constants_for(const std::vector<Tensor>& inputs, const std::vector<bool>& constant) {
  std::vector<const void*> out(inputs.size(), nullptr);
  for (size_t k = 0; k < inputs.size() && k < constant.size(); ++k)
    if (constant[k]) out[k] = inputs[k].data();
  return out;
}

// The oneDNN step against the f64 interpreter; f32 accumulation over `reduction` terms of
// O(1) values is allowed an error growing with its square root.
void check_onednn(const ir::Graph& g, uint64_t seed, int64_t reduction, const std::vector<bool>& constant,
                  std::string_view impl = "onednn") {
  std::vector<Tensor> inputs = interp::random_inputs(g, seed);
  std::vector<Tensor> want = interp::run(g, inputs);
  auto step = make_library_step(impl, g, constants_for(inputs, constant));
  std::vector<Tensor> got = run_step(*step, g, inputs);
  ASSERT_EQ(got.size(), want.size());
  double atol = 2e-5 * std::sqrt(static_cast<double>(std::max<int64_t>(reduction, 1)));
  for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(interp::compare_tensors(got[k], want[k], 1e-4, atol), "");
}

// Random chains may repeat an eltwise algorithm with other parameters, which oneDNN 2.6
// cannot run (see RepeatedEltwiseAlgorithms), broadcast a post-op operand in a way only
// oneDNN's naive reference implementation supports (per row of a matmul, per batch), or
// give a matmul writing a strided result a binary post-op (StridedMatMulWithABinaryPostOp);
// any other refusal is a failure.
bool refused_as_expected(const ir::Graph& g) {
  std::string why = library_step_unsupported("onednn", g);
  EXPECT_TRUE(why.empty() || why.find("repeat an eltwise algorithm") != std::string::npos ||
              why.find("naive reference implementation") != std::string::npos ||
              why.find("a matmul writing a strided result with a binary post-op") != std::string::npos)
      << why;
  return !why.empty();
}

// ---- Graphs in text form: a linear primitive, then a chain of elementwise post-ops ----

std::string dims_list(const Dims& d) { return ir::dims_str(d); }

std::string index_vars(size_t n, size_t from = 0) {
  std::string s;
  for (size_t j = from; j < n; ++j) s += (j > from ? ", i" : "i") + std::to_string(j);
  return s;
}

class ChainText {
 public:
  void input(const std::string& name, const Dims& shape) {
    inputs_ += "  input %" + name + " : f32" + dims_list(shape) + "\n";
  }
  // A graph constant of seeded random values in [-1, 1).
  void constant(const std::string& name, const Dims& shape, Rng& rng) {
    std::string values;
    for (int64_t k = 0; k < ir::numel(shape); ++k)
      values += (k ? ", " : "") + std::to_string(rng.uniform(-1, 1));
    inputs_ += "  const %" + name + " : f32" + dims_list(shape) + " = [" + values + "]\n";
  }
  void linear(const std::string& rhs, const Dims& out) {
    out_ = out;
    current_ = "y0";
    nodes_ += "  %y0 : f32" + dims_list(out) + " = " + rhs + "\n";
  }
  // A post-op whose body is `body` with every "X" replaced by the previous result's load.
  void post(const std::string& reads, std::string body) {
    std::string x = "%" + current_ + "[" + index_vars(out_.size()) + "]";
    body = testlib::replaced_all(body, "X", x);
    std::string next = "y" + std::to_string(++links_);
    nodes_ += "  %" + next + " : f32" + dims_list(out_) + " = elementwise(%" + current_ + reads + ") { " + body + " }\n";
    current_ = next;
  }
  void raw(const std::string& line) { nodes_ += "  " + line + "\n"; }
  // `%name : type = rhs` after the chain, which the graph then outputs.
  void then(const std::string& name, const Dims& shape, const std::string& rhs) {
    nodes_ += "  %" + name + " : f32" + dims_list(shape) + " = " + rhs + "\n";
    current_ = name;
  }
  const Dims& out() const { return out_; }
  const std::string& current() const { return current_; }
  std::string text() const { return "graph @step {\n" + inputs_ + nodes_ + "  output %" + current_ + "\n}\n"; }
  ir::Graph graph() const { return ir::parse_graph(text()); }

 private:
  std::string inputs_, nodes_, current_;
  Dims out_;
  int links_ = 0;
};

// A random tensor operand for a binary post-op: the output shape with some dims 1 and some
// leading dims dropped (numpy broadcasting); its load indices.
std::pair<Dims, std::string> broadcast_operand(const Dims& out, Rng& rng) {
  size_t drop = rng.range(0, static_cast<int64_t>(out.size()));
  Dims shape;
  std::string idx;
  for (size_t j = drop; j < out.size(); ++j) {
    bool one = rng.coin(0.4);
    shape.push_back(one ? 1 : out[j]);
    idx += std::string(j > drop ? ", " : "") + (one ? "0" : "i" + std::to_string(j));
  }
  return {shape, idx};
}

// ONNX HardSwish as fission writes it.
constexpr const char* kHardSwish = "mul(X, max(0:f32, min(1:f32, add(mul(X, 0.16666667:f32), 0.5:f32))))";

// Appends 0..3 random post-ops; `channel` is the output dim a bias runs along.
void random_post_ops(ChainText& c, size_t channel, Rng& rng) {
  const Dims& out = c.out();
  int count = static_cast<int>(rng.range(0, 4));
  for (int k = 0; k < count; ++k) {
    std::string t = "t" + std::to_string(k);
    switch (rng.range(0, 13)) {
      case 0: {  // bias along the channel dim, right-aligned as fission writes it: [C, 1, ..]
        Dims shape(out.size() - channel, 1);
        shape[0] = out[channel];
        c.input(t, shape);
        std::string idx = "i" + std::to_string(channel);
        for (size_t j = channel + 1; j < out.size(); ++j) idx += ", 0";
        c.post(", %" + t, "add(X, %" + t + "[" + idx + "])");
        break;
      }
      case 1:  // residual
        c.input(t, out);
        c.post(", %" + t, "add(%" + t + "[" + index_vars(out.size()) + "], X)");
        break;
      case 2: {  // a broadcast binary operation
        auto [shape, idx] = broadcast_operand(out, rng);
        const char* ops[] = {"mul", "sub", "max", "min"};
        c.input(t, shape);
        c.post(", %" + t, std::string(ops[rng.range(0, 4)]) + "(X, %" + t + "[" + idx + "])");
        break;
      }
      case 3: c.post("", "max(X, 0:f32)"); break;
      case 4: c.post("", "min(max(X, -0.5:f32), 0.75:f32)"); break;
      case 5: c.post("", "sigmoid(X)"); break;
      case 6: c.post("", "tanh(X)"); break;
      case 7: c.post("", "mul(X, 0.75:f32)"); break;
      case 8: c.post("", "sub(0.5:f32, X)"); break;
      case 9: c.post("", "select(lt(X, 0:f32), mul(X, 0.125:f32), X)"); break;
      case 10: c.post("", "mul(X, sigmoid(X))"); break;
      case 11: c.post("", std::string(kHardSwish)); break;
      default: c.post("", "div(X, 4:f32)"); break;
    }
  }
}

// ---- Random matmuls ----

TEST(OnednnStep, RandomMatMulsWithPostOpsMatchTheInterpreter) {
  int ran = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Rng rng(seed * 7919);
    MatMulCase mc = random_matmul(rng);
    ChainText c;
    c.input("a", mc.a);
    c.input("b", mc.b);
    TensorType out = ir::matmul_result_type({ir::DType::F32, mc.a}, {ir::DType::F32, mc.b}, {mc.ta, mc.tb});
    c.linear(matmul_rhs(mc.ta, mc.tb), out.shape);
    random_post_ops(c, out.shape.size() - 1, rng);
    bool constant_b = rng.coin();
    SCOPED_TRACE("seed " + std::to_string(seed) + (constant_b ? " (constant B)" : "") + "\n" + c.text());
    if (refused_as_expected(c.graph())) continue;
    ++ran;
    check_onednn(c.graph(), seed, mc.k, {false, constant_b});
  }
  EXPECT_GE(ran, 50);
}

// ---- Random convolutions ----

TEST(OnednnStep, RandomConvolutionsWithPostOpsMatchTheInterpreter) {
  int ran = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Rng rng(seed * 104729);
    ConvCase cc = random_conv(rng);
    TensorType out = ir::conv_result_type({ir::DType::F32, cc.x}, {ir::DType::F32, cc.w}, cc.attrs);
    ChainText c;
    c.input("a", cc.x);
    c.input("b", cc.w);
    c.linear(conv_rhs(cc.attrs), out.shape);
    random_post_ops(c, 1, rng);
    bool constant_w = rng.coin();
    SCOPED_TRACE("seed " + std::to_string(seed) + (constant_w ? " (constant W)" : "") + "\n" + c.text());
    if (refused_as_expected(c.graph())) continue;
    ++ran;
    check_onednn(c.graph(), seed, cc.reduction, {false, constant_w});
  }
  EXPECT_GE(ran, 50);
}

// ---- Bias and residual: the primitive's bias argument and oneDNN's sum post-op ----

// The post-ops of g's pattern, "bias" first when it has one.
std::vector<std::string> post_op_names(const ir::Graph& g) {
  onednn::PatternMatch m = onednn::match_linear_pattern(g);
  EXPECT_TRUE(m.pattern) << m.reason;
  std::vector<std::string> out;
  if (m.pattern && m.pattern->bias) out.push_back("bias");
  if (m.pattern)
    for (const onednn::PostOp& op : m.pattern->post_ops) out.push_back(onednn::describe(op));
  return out;
}

// A channel bias as the first post-op: an input or a constant, stored as [C] and read through
// a view in the broadcast shape, or stored in that shape; then maybe a residual (full-shape
// add, either operand order), then random post-ops. The bias must become the primitive's
// bias and the residual its sum post-op.
void bias_and_residual(ChainText& c, size_t channel, bool constant_bias, Rng& rng) {
  const Dims& out = c.out();
  Dims shape(out.size() - channel, 1);
  shape[0] = out[channel];
  if (rng.coin(0.3) && shape.size() < out.size()) shape.insert(shape.begin(), 1);  // a leading 1 more
  bool view = rng.coin();
  Dims stored = view ? Dims{out[channel]} : shape;
  if (constant_bias)
    c.constant("bias", stored, rng);
  else
    c.input("bias", stored);
  std::string bias = "%bias";
  if (view) {
    c.raw("%bias_v : f32" + dims_list(shape) + " = view(%bias)");
    bias = "%bias_v";
  }
  std::string idx = shape.size() > out.size() - channel ? "0, i" : "i";
  idx += std::to_string(channel);
  for (size_t j = channel + 1; j < out.size(); ++j) idx += ", 0";
  c.post(", " + bias, rng.coin() ? "add(X, " + bias + "[" + idx + "])" : "add(" + bias + "[" + idx + "], X)");
  if (rng.coin(0.6)) {
    c.input("res", out);
    std::string r = "%res[" + index_vars(out.size()) + "]";
    c.post(", %res", rng.coin() ? "add(X, " + r + ")" : "add(" + r + ", X)");
  }
  random_post_ops(c, channel, rng);
}

void expect_bias_and_sum(const ir::Graph& g, bool residual) {
  std::vector<std::string> names = post_op_names(g);
  ASSERT_GE(names.size(), residual ? 2u : 1u);
  EXPECT_EQ(names[0], "bias");
  if (residual) {
    EXPECT_EQ(names[1], "sum");
  }
}

TEST(OnednnStep, RandomBiasAndResidualMatchTheInterpreter) {
  int ran = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Rng rng(seed * 15485863);
    bool conv = seed % 2 == 1, constant_bias = rng.coin(), constant_w = rng.coin(0.7);
    ChainText c;
    int64_t reduction = 0;
    if (conv) {
      ConvCase cc = random_conv(rng);
      c.input("a", cc.x);
      c.input("b", cc.w);
      TensorType out = ir::conv_result_type({ir::DType::F32, cc.x}, {ir::DType::F32, cc.w}, cc.attrs);
      c.linear(conv_rhs(cc.attrs), out.shape);
      reduction = cc.reduction;
    } else {
      MatMulCase mc = random_matmul(rng);
      c.input("a", mc.a);
      c.input("b", mc.b);
      TensorType out = ir::matmul_result_type({ir::DType::F32, mc.a}, {ir::DType::F32, mc.b}, {mc.ta, mc.tb});
      c.linear(matmul_rhs(mc.ta, mc.tb), out.shape);
      reduction = mc.k;
    }
    bias_and_residual(c, conv ? 1 : c.out().size() - 1, constant_bias, rng);
    ir::Graph g = c.graph();
    SCOPED_TRACE("seed " + std::to_string(seed) + (constant_w ? " (constant weights)" : "") + "\n" + c.text());
    if (refused_as_expected(g)) continue;
    expect_bias_and_sum(g, c.text().find("%res") != std::string::npos);
    ++ran;
    std::vector<bool> constant(g.inputs().size(), false);
    constant[1] = constant_w;
    check_onednn(g, seed, reduction, constant);
  }
  EXPECT_GE(ran, 50);
}

// ---- Permuted operands: read and written through strides ----

// Dims d permuted: out[k] = d[q[k]].
Dims permute(const Dims& d, const std::vector<size_t>& q) {
  Dims out;
  for (size_t k : q) out.push_back(d[k]);
  return out;
}

// A layout primitive reading %from (of rank q.size()) so that its dim k is the result's dim
// at q's inverse: %name[i..] = %from[i(q⁻¹[0]), ..], the result's dims `from`'s permuted by q.
std::string permute_rhs(const std::string& from, const std::vector<size_t>& q) {
  std::vector<size_t> inverse(q.size());
  for (size_t k = 0; k < q.size(); ++k) inverse[q[k]] = k;
  std::string idx;
  for (size_t k = 0; k < q.size(); ++k) idx += (k ? ", i" : "i") + std::to_string(inverse[k]);
  return "layout(%" + from + ") { %" + from + "[" + idx + "] }";
}

// [0, 2, .., r-1, 1]: NCHW's dims in channels-last order.
std::vector<size_t> channels_last(size_t r) {
  std::vector<size_t> q{0};
  for (size_t k = 2; k < r; ++k) q.push_back(k);
  q.push_back(1);
  return q;
}

std::vector<size_t> inverse_of(const std::vector<size_t>& q) {
  std::vector<size_t> inv(q.size());
  for (size_t k = 0; k < q.size(); ++k) inv[q[k]] = k;
  return inv;
}

// Convolutions whose src is stored channels-last (maybe with its spatial dims flattened, as a
// transformer's tokens) and read through a permutation, whose result is written channels-last
// the same ways, with random bias, residual and post-ops; matmuls reading A and writing the
// result with the head and sequence dims swapped ([b, s, h, d] as [b, h, s, d]). The step
// reads and writes them in place through strides and matches the interpreter.
TEST(OnednnStep, PermutedOperandsMatchTheInterpreter) {
  int ran = 0, strided_src = 0, strided_out = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Rng rng(seed * 7727);
    bool conv = seed % 4 != 0, flatten = rng.coin();
    ChainText c;
    int64_t reduction = 0;
    if (conv) {
      ConvCase cc = random_conv(rng);
      size_t r = cc.x.size();
      std::vector<size_t> q = channels_last(r);
      Dims stored = permute(cc.x, q);
      Dims flat{cc.x[0], ir::numel(cc.x) / cc.x[0] / cc.x[1], cc.x[1]};
      c.input("s", flatten ? flat : stored);
      if (flatten) {
        c.raw("%t : f32" + dims_list({flat[0], flat[2], flat[1]}) + " = " + permute_rhs("s", {0, 2, 1}));
        c.raw("%a : f32" + dims_list(cc.x) + " = view(%t)");
      } else {
        c.raw("%a : f32" + dims_list(cc.x) + " = " + permute_rhs("s", inverse_of(q)));
      }
      c.input("b", cc.w);
      TensorType out = ir::conv_result_type({ir::DType::F32, cc.x}, {ir::DType::F32, cc.w}, cc.attrs);
      c.linear(conv_rhs(cc.attrs), out.shape);
      reduction = cc.reduction;
      if (rng.coin()) bias_and_residual(c, 1, rng.coin(), rng);
      else random_post_ops(c, 1, rng);
      Dims o = c.out();
      if (rng.coin()) {
        Dims fo{o[0], o[1], ir::numel(o) / o[0] / o[1]};
        c.then("v", fo, "view(%" + c.current() + ")");
        c.then("z", {fo[0], fo[2], fo[1]}, permute_rhs("v", {0, 2, 1}));
      } else {
        c.then("z", permute(o, q), permute_rhs(c.current(), q));
      }
    } else {
      int64_t b = rng.range(1, 3), h = rng.range(1, 4), m = rng.range(1, 20), k = rng.range(1, 30), n = rng.range(1, 20);
      reduction = k;
      c.input("s", {b, m, h, k});
      c.raw("%a : f32" + dims_list({b, h, m, k}) + " = " + permute_rhs("s", {0, 2, 1, 3}));
      c.input("b", {b, h, k, n});
      c.linear(matmul_rhs(false, false), {b, h, m, n});
      random_post_ops(c, 3, rng);
      c.then("z", {b, m, h, n}, permute_rhs(c.current(), {0, 2, 1, 3}));
    }
    ir::Graph g = c.graph();
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + c.text());
    onednn::PatternMatch match = onednn::match_linear_pattern(g);
    if (!match.pattern && match.reason.find("repeat an eltwise algorithm") != std::string::npos) continue;
    ASSERT_TRUE(match.pattern) << match.reason;
    strided_src += !match.pattern->a.strides.empty();
    strided_out += !match.pattern->out_strides.empty();
    if (refused_as_expected(g)) continue;
    ++ran;
    check_onednn(g, seed, reduction, {false, rng.coin()});
  }
  EXPECT_GE(ran, 35);
  EXPECT_GE(strided_src, 30);  // the others permute dims of 1 only
  EXPECT_GE(strided_out, 30);
}

// Only the first post-op can be the bias, and only the first after it the sum; adds elsewhere
// stay binary post-ops. Channel-blocked layouts are used only where every binary operand is a
// scalar or per channel: the relu-then-residual chain here runs with plain ones.
TEST(OnednnStep, BiasAndSumOnlyFirst) {
  ChainText c;
  c.input("a", {2, 5, 9, 9});
  c.input("b", {7, 5, 3, 3});
  c.input("bias", {7, 1, 1});
  c.input("r1", {2, 7, 9, 9});
  c.input("r2", {2, 7, 9, 9});
  c.linear(conv_rhs({{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1}), {2, 7, 9, 9});
  c.post(", %bias", "add(X, %bias[i1, 0, 0])");
  c.post(", %r1", "add(X, %r1[i0, i1, i2, i3])");
  c.post(", %r2", "add(X, %r2[i0, i1, i2, i3])");
  c.post(", %bias", "add(X, %bias[i1, 0, 0])");
  EXPECT_EQ(post_op_names(c.graph()),
            (std::vector<std::string>{"bias", "sum", "binary add [2,7,9,9]", "binary add [1,7,1,1]"}));
  check_onednn(c.graph(), 31, 45, {false, true});

  ChainText late;
  late.input("a", {2, 5, 9, 9});
  late.input("b", {7, 5, 3, 3});
  late.input("r", {2, 7, 9, 9});
  late.input("bias", {7, 1, 1});
  late.linear(conv_rhs({{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1}), {2, 7, 9, 9});
  late.post("", "max(X, 0:f32)");
  late.post(", %r", "add(X, %r[i0, i1, i2, i3])");
  late.post(", %bias", "add(X, %bias[i1, 0, 0])");
  EXPECT_EQ(post_op_names(late.graph()),
            (std::vector<std::string>{"relu", "binary add [2,7,9,9]", "binary add [1,7,1,1]"}));
  EXPECT_EQ(onednn_implementation(late.graph(), true).find("reordered"), std::string::npos);
  check_onednn(late.graph(), 32, 45, {false, true});

  ChainText sub;  // a subtracted bias is no bias
  sub.input("a", {2, 5, 9, 9});
  sub.input("b", {7, 5, 3, 3});
  sub.input("bias", {7, 1, 1});
  sub.linear(conv_rhs({{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1}), {2, 7, 9, 9});
  sub.post(", %bias", "sub(X, %bias[i1, 0, 0])");
  EXPECT_EQ(post_op_names(sub.graph()), (std::vector<std::string>{"binary sub [1,7,1,1]"}));
  check_onednn(sub.graph(), 33, 45, {false, true});
}

// HardSwish (x·clip(x/6 + 1/2, 0, 1)) is oneDNN's hardswish post-op, in either nesting of the
// clip; other constants are not.
TEST(OnednnStep, HardSwishIsAPostOp) {
  for (const char* body : {kHardSwish, "mul(min(max(add(mul(X, 0.16666667:f32), 0.5:f32), 0:f32), 1:f32), X)",
                           "mul(X, max(0:f32, min(1:f32, add(mul(X, 0.2:f32), 0.5:f32))))"}) {
    SCOPED_TRACE(body);
    bool standard = std::string(body).find("0.2:f32") == std::string::npos;
    ChainText c;
    c.input("a", {2, 16, 9, 9});
    c.input("b", {16, 16, 3, 3});
    c.input("bias", {16, 1, 1});
    c.linear(conv_rhs({{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1}), {2, 16, 9, 9});
    c.post(", %bias", "add(X, %bias[i1, 0, 0])");
    c.post("", body);
    onednn::PatternMatch m = onednn::match_linear_pattern(c.graph());
    if (standard) {
      EXPECT_EQ(post_op_names(c.graph()), (std::vector<std::string>{"bias", "hardswish"}));
      check_onednn(c.graph(), 34, 144, {false, true});
    } else {
      EXPECT_FALSE(m.pattern) << "a hard swish of other constants is not oneDNN's";
    }
  }
}

// A 3-D conv reading a channels-last src and writing a channels-last dst through
// permutations, with a binary post-op of each broadcast: packed weights select oneDNN 2.6's
// gemm convolution, which applies a non-scalar operand wrongly to such a dst, so those
// operands keep the dense row-major variant (onednn_step.cpp, variants).
TEST(OnednnStep, StridedOutputWithABinaryOperand) {
  for (auto [type, idx] : {std::pair{"f32[4,1,7,1]", "i1, 0, i3, 0"}, std::pair{"f32[2,4,6,7,8]", "i0, i1, i2, i3, i4"},
                           std::pair{"f32[4,1,1,1]", "i1, 0, 0, 0"}, std::pair{"f32[1,1,1,1]", "0, 0, 0, 0"}}) {
    std::string t = std::string(R"(graph @step {
  input %s : f32[2,6,6,4,8]
  input %b : f32[4,4,3,1,1]
  input %t0 : )") + type + R"(
  %a : f32[2,8,6,6,4] = layout(%s) { %s[i0, i2, i3, i4, i1] }
  %y0 : f32[2,4,6,7,8] = conv(%a, %b) {strides=[1,1,1], dilations=[1,2,1], pads_begin=[1,0,2], pads_end=[1,1,2], groups=2}
  %y1 : f32[2,4,6,7,8] = elementwise(%y0, %t0) { max(%y0[i0, i1, i2, i3, i4], %t0[)" + idx + R"(]) }
  %z : f32[2,6,7,8,4] = layout(%y1) { %y1[i0, i4, i1, i2, i3] }
  output %z
})";
    SCOPED_TRACE(t);
    ir::Graph g = ir::parse_graph(t);
    for (bool constant_w : {false, true}) check_onednn(g, 7, 12, {false, constant_w});
  }
}

// A matmul writing its result through a permutation with a binary post-op (a residual as a
// sum then a bias, or a scale alone): oneDNN 2.6's brgemm matmul faulted on that strided dst.
// The step refuses it; without the permutation it runs.
TEST(OnednnStep, StridedMatMulWithABinaryPostOp) {
  for (bool permuted : {true, false})
    for (const char* tail : {"%y1 : f32[1,3,6,4] = elementwise(%y0, %r) { add(%r[i0, i1, i2, i3], %y0[i0, i1, i2, i3]) }\n"
                             "  %y2 : f32[1,3,6,4] = elementwise(%y1, %c) { add(%y1[i0, i1, i2, i3], %c[i3]) }",
                             "%y2 : f32[1,3,6,4] = elementwise(%y0, %c) { mul(%y0[i0, i1, i2, i3], %c[i3]) }"}) {
      std::string t = std::string(R"(graph @step {
  input %a : f32[1,3,6,3]
  input %b : f32[1,3,3,4]
  input %r : f32[1,3,6,4]
  input %c : f32[4]
  %y0 : f32[1,3,6,4] = matmul(%a, %b) {trans_a=false, trans_b=false}
  )") + tail + "\n" +
                      (permuted ? "  %z : f32[1,6,3,4] = layout(%y2) { %y2[i0, i2, i1, i3] }\n  output %z\n}"
                                : "  output %y2\n}");
      SCOPED_TRACE(t);
      ir::Graph g = ir::parse_graph(t);
      std::string why = library_step_unsupported("onednn", g);
      if (permuted) {
        EXPECT_NE(why.find("a matmul writing a strided result with a binary post-op"), std::string::npos) << why;
        continue;
      }
      EXPECT_EQ(why, "");
      for (bool constant_b : {false, true}) check_onednn(g, 24, 3, {false, constant_b});
    }
}

// Winograd's algorithm ("onednn_winograd") for 3×3 convolutions by constant weights with a
// bias, a residual and a relu matches the interpreter where the host's oneDNN has it
// (AVX-512); weights that are not constant, a strided convolution and a matmul are refused.
TEST(OnednnStep, WinogradConvolutionsMatchTheInterpreter) {
  struct Shape { int64_t n, c, k, hw, pad; };
  for (Shape sh : {Shape{1, 16, 16, 10, 1}, Shape{2, 32, 48, 13, 1}, Shape{1, 64, 16, 7, 0}}) {
    int64_t out = sh.hw + 2 * sh.pad - 2;
    Dims y{sh.n, sh.k, out, out};
    ChainText c;
    c.input("a", {sh.n, sh.c, sh.hw, sh.hw});
    c.input("b", {sh.k, sh.c, 3, 3});
    c.input("bias", {sh.k, 1, 1});
    c.input("r", y);
    c.linear(conv_rhs({{1, 1}, {1, 1}, {sh.pad, sh.pad}, {sh.pad, sh.pad}, 1}), y);
    c.post(", %bias", "add(X, %bias[i1, 0, 0])");
    c.post(", %r", "add(X, %r[i0, i1, i2, i3])");
    c.post("", "max(X, 0:f32)");
    SCOPED_TRACE(c.text());
    std::string why = library_step_unsupported("onednn_winograd", c.graph());
    if (!__builtin_cpu_supports("avx512f") && !why.empty()) continue;  // oneDNN 2.6 has it for AVX-512 only
    ASSERT_EQ(why, "");
    EXPECT_NE(onednn_implementation(c.graph(), true, ConvAlgorithm::Winograd).find("wino"), std::string::npos);
    check_onednn(c.graph(), 40 + sh.c, 9 * sh.c, {false, true}, "onednn_winograd");
    std::vector<const void*> none(4, nullptr);
    EXPECT_NE(testlib::error_of([&] { make_library_step("onednn_winograd", c.graph(), none); })
                  .find("Winograd needs constant weights"),
              std::string::npos);
  }
  ChainText wide;  // a binary operand neither scalar nor per channel: blocked layouts are ruled out
  wide.input("a", {1, 16, 9, 9});
  wide.input("b", {16, 16, 3, 3});
  wide.input("m", {1, 16, 9, 9});
  wide.linear(conv_rhs({{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1}), {1, 16, 9, 9});
  wide.post(", %m", "mul(X, %m[i0, i1, i2, i3])");
  EXPECT_NE(library_step_unsupported("onednn_winograd", wide.graph()).find("Winograd computes blocked"), std::string::npos);
  ChainText strided;
  strided.input("a", {1, 16, 9, 9});
  strided.input("b", {16, 16, 3, 3});
  strided.linear(conv_rhs({{2, 2}, {1, 1}, {1, 1}, {1, 1}, 1}), {1, 16, 5, 5});
  EXPECT_NE(library_step_unsupported("onednn_winograd", strided.graph()), "");
  ChainText mm;
  mm.input("a", {8, 8});
  mm.input("b", {8, 8});
  mm.linear(matmul_rhs(false, false), {8, 8});
  EXPECT_NE(library_step_unsupported("onednn_winograd", mm.graph()).find("Winograd is for convolutions"), std::string::npos);
}

// A matmul whose B has no batch runs as one GEMM over all of A's rows (the step folds the
// batch into M); binary operands of the output's shape or the same for every row fold with it.
TEST(OnednnStep, MatMulWithoutBatchInB) {
  ChainText seq;  // a linear layer on a sequence, as fission writes it
  seq.input("a", {37, 1, 24});
  seq.input("b", {1, 24, 40});
  seq.input("bias", {40});
  seq.input("res", {37, 1, 40});
  seq.input("gate", {37, 1, 40});
  seq.input("scale", {1, 40});
  seq.linear(matmul_rhs(false, false), {37, 1, 40});
  seq.post(", %bias", "add(X, %bias[i2])");
  seq.post(", %res", "add(X, %res[i0, i1, i2])");
  seq.post(", %gate", "mul(X, %gate[i0, i1, i2])");
  seq.post(", %scale", "div(X, %scale[0, i2])");
  seq.post("", "max(X, 0:f32)");
  EXPECT_EQ(post_op_names(seq.graph()),
            (std::vector<std::string>{"bias", "sum", "binary mul [37,1,40]", "binary div [1,1,40]", "relu"}));
  check_onednn(seq.graph(), 35, 24, {false, true});

  ChainText trans;  // A read transposed: its rows are not contiguous, no fold
  trans.input("a", {3, 16, 5});
  trans.input("b", {6, 16});
  trans.input("bias", {6});
  trans.linear(matmul_rhs(true, true), {3, 5, 6});
  trans.post(", %bias", "add(%bias[i2], X)");
  EXPECT_EQ(library_step_unsupported("onednn", trans.graph()), "");
  check_onednn(trans.graph(), 36, 16, {false, true});
}

// Fission writes a linear layer on [B, S, K] as a matmul of [B·S, K] viewed back as
// [B, S, N]: the post-ops after the view are the primitive's, their operands' broadcasts
// carried back through it (a bias, a residual, per row); one broadcast only over part of the
// merged dims (positions repeated per batch) has none, and the step says so.
TEST(OnednnStep, PostOpsAfterAViewOfTheResult) {
  auto layer = [](const std::string& extra_input, const std::string& extra_link) {
    return ir::parse_graph(R"(graph @step {
  input %a : f32[12,8]
  input %b : f32[8,5]
  input %bias : f32[5]
  input %res : f32[3,4,5]
  )" + extra_input + R"(
  %y0 : f32[12,5] = matmul(%a, %b) {trans_a=false, trans_b=false}
  %v : f32[3,4,5] = view(%y0)
  %y1 : f32[3,4,5] = elementwise(%v, %bias) { add(%v[i0, i1, i2], %bias[i2]) }
  %y2 : f32[3,4,5] = elementwise(%y1, %res) { add(%res[i0, i1, i2], %y1[i0, i1, i2]) }
  %y3 : f32[3,4,5] = elementwise(%y2) { max(%y2[i0, i1, i2], 0:f32) }
  )" + extra_link + R"(
  %z : f32[1,60] = view(%y4)
  output %z
})");
  };
  ir::Graph rows = layer("input %scale : f32[3,4,1]",
                         "%y4 : f32[3,4,5] = elementwise(%y3, %scale) { mul(%y3[i0, i1, i2], %scale[i0, i1, 0]) }");
  EXPECT_EQ(post_op_names(rows), (std::vector<std::string>{"bias", "sum", "relu", "binary mul [12,1]"}));
  ir::Graph cols = layer("input %scale : f32[5]",
                         "%y4 : f32[3,4,5] = elementwise(%y3, %scale) { mul(%y3[i0, i1, i2], %scale[i2]) }");
  EXPECT_EQ(post_op_names(cols), (std::vector<std::string>{"bias", "sum", "relu", "binary mul [1,5]"}));
  check_onednn(cols, 37, 8, {false, true});
  // A conv's result viewed as tokens, then its residual: oneDNN's sum post-op, the residual
  // read in the conv's output shape.
  ir::Graph conv = ir::parse_graph(R"(graph @step {
  input %x : f32[1,3,6,6]
  input %w : f32[8,3,3,3]
  input %r : f32[1,8,36]
  %c : f32[1,8,6,6] = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  %v : f32[1,8,36] = view(%c)
  %y : f32[1,8,36] = elementwise(%v, %r) { add(%v[i0, i1, i2], %r[i0, i1, i2]) }
  output %y
})");
  EXPECT_EQ(post_op_names(conv), (std::vector<std::string>{"sum"}));
  for (bool constant_w : {false, true}) check_onednn(conv, 38, 27, {false, constant_w});
  ir::Graph positions = layer("input %pos : f32[4,5]",
                              "%y4 : f32[3,4,5] = elementwise(%y3, %pos) { add(%y3[i0, i1, i2], %pos[i1, i2]) }");
  EXPECT_NE(library_step_unsupported("onednn", positions).find("reads an operand whose broadcast over [3,4,5] is none "
                                                                "over the linear result [12,5]"),
            std::string::npos)
      << library_step_unsupported("onednn", positions);
}

// oneDNN 2.6's brgconv (which channel-blocked layouts select) crashes when some output reads
// only padding and a sum post-op is followed by an eltwise one: such convs keep plain layouts.
TEST(OnednnStep, ConvWithPaddingOnlyOutputsAndSumThenEltwise) {
  ChainText c;
  c.input("a", {2, 3, 2, 7});
  c.input("b", {3, 3, 1, 3});
  c.input("bias", {3, 1, 1});
  c.input("res", {2, 3, 2, 3});
  c.linear("conv(%a, %b) {strides=[3,3], dilations=[2,1], pads_begin=[2,2], pads_end=[2,1], groups=1}", {2, 3, 2, 3});
  c.post(", %bias", "add(X, %bias[i1, 0, 0])");
  c.post(", %res", "add(X, %res[i0, i1, i2, i3])");
  c.post("", "max(X, 0:f32)");
  EXPECT_EQ(post_op_names(c.graph()), (std::vector<std::string>{"bias", "sum", "relu"}));
  EXPECT_EQ(onednn_implementation(c.graph(), true).find("reordered"), std::string::npos);
  check_onednn(c.graph(), 34, 3, {false, true});
}

// ---- Graphs as fission builds them from ONNX (bias through a view, constants) ----

Tensor random_f32(const Dims& shape, uint64_t seed) {
  ir::Graph g;
  g.add_input("t", {ir::DType::F32, shape});
  return interp::random_inputs(g, seed)[0];
}

using Attrs = std::vector<std::pair<std::string, frontend::Attribute>>;

TEST(OnednnStep, FissionedConvWithBiasAndReluIsOnePrimitive) {
  testlib::OnnxModel m;
  m.inputs = {{"x", {ir::DType::F32, {2, 6, 11, 9}}}};
  m.initializers = {{"w", random_f32({8, 3, 3, 3}, 1)}, {"b", random_f32({8}, 2)}};
  Attrs conv = {{"group", int64_t{2}}, {"pads", Dims{1, 0, 2, 1}}, {"strides", Dims{2, 1}}};
  m.nodes = {{"Conv", {"x", "w", "b"}, {"c"}, conv, ""}, {"Relu", {"c"}, {"y"}, {}, ""}};
  m.outputs = {"y"};
  ir::Graph g = testlib::import_model(m);
  EXPECT_EQ(post_op_names(g), (std::vector<std::string>{"bias", "relu"}));
  EXPECT_EQ(library_step_unsupported("onednn", g), "");
  check_onednn(g, 3, 27, {});
}

TEST(OnednnStep, FissionedGemmAndVectorMatMul) {
  testlib::OnnxModel gemm;
  gemm.inputs = {{"a", {ir::DType::F32, {5, 12}}}};
  gemm.initializers = {{"w", random_f32({7, 12}, 4)}, {"c", random_f32({7}, 5)}};
  gemm.nodes = {{"Gemm", {"a", "w", "c"}, {"g"}, {{"transB", int64_t{1}}}, ""}, {"Sigmoid", {"g"}, {"y"}, {}, ""}};
  gemm.outputs = {"y"};
  ir::Graph g = testlib::import_model(gemm);
  EXPECT_EQ(post_op_names(g), (std::vector<std::string>{"bias", "logistic"}));
  check_onednn(g, 6, 12, {});
  // numpy.matmul of a vector: views around the matmul, the result a view of it.
  ir::Graph v = testlib::import_model(testlib::single_node("MatMul", {{ir::DType::F32, {9}}, {ir::DType::F32, {3, 9, 4}}}));
  EXPECT_EQ(library_step_unsupported("onednn", v), "");
  check_onednn(v, 7, 9, {false, true});
}

// GELU as exporters write it, scalars inlined as the clean-up leaves them: x·(1 + erf(x/√2))·c
// in five nodes reading %x of `shape` (indices `idx`), x read twice; the result %y.
std::string gelu_text(const std::string& shape, const std::string& idx, const std::string& c) {
  auto at = [&](const std::string& v) { return "%" + v + "[" + idx + "]"; };
  std::string t = " : f32" + shape + " = elementwise(";
  return "  %d" + t + "%x) { div(" + at("x") + ", 1.4142135:f32) }\n" +  //
         "  %e" + t + "%d) { erf(" + at("d") + ") }\n" +                  //
         "  %p" + t + "%e) { add(" + at("e") + ", 1:f32) }\n" +           //
         "  %m" + t + "%x, %p) { mul(" + at("x") + ", " + at("p") + ") }\n" +
         "  %y" + t + "%m) { mul(" + c + ":f32, " + at("m") + ") }\n";
}

// A linear layer on a sequence, then GELU: the bias through fission's view of the result, the
// five GELU nodes one post-op (oneDNN's gelu_erf). With another constant than 1/2 it is no
// GELU, and the step says which node it cannot take.
TEST(OnednnStep, GeluAsExportersWriteItIsOnePostOp) {
  for (std::string half : {"0.5", "0.6"}) {
    ir::Graph g = ir::parse_graph(R"(graph @step {
  input %a : f32[23,16]
  input %b : f32[16,40]
  input %bias : f32[40]
  %y0 : f32[23,40] = matmul(%a, %b) {trans_a=false, trans_b=false}
  %v : f32[1,23,40] = view(%y0)
  %x : f32[1,23,40] = elementwise(%bias, %v) { add(%bias[i2], %v[i0, i1, i2]) }
)" + gelu_text("[1,23,40]", "i0, i1, i2", half) + "  output %y\n}\n");
    if (half != "0.5") {
      EXPECT_NE(library_step_unsupported("onednn", g).find("%e = elementwise) is not a supported post-op"), std::string::npos)
          << library_step_unsupported("onednn", g);
      continue;
    }
    EXPECT_EQ(post_op_names(g), (std::vector<std::string>{"bias", "gelu_erf"}));
    check_onednn(g, 13, 16, {false, true});
  }
}

// A depthwise convolution between permutations (a transformer's tokens as NCHW and back, as
// Segformer's feed-forward has it), then GELU: post-ops of the result alone go on after a
// permutation, as the conv writes channels-last; one reading another tensor does not. Swish
// written as two nodes is one post-op too.
TEST(OnednnStep, EltwisePostOpsAfterAPermutation) {
  const std::string head = R"(graph @step {
  input %t : f32[1,49,8]
  input %w : f32[8,1,3,3]
  input %bias : f32[8,1,1]
  input %r : f32[1,49,8]
  %tt : f32[1,8,49] = layout(%t) { %t[i0, i2, i1] }
  %img : f32[1,8,7,7] = view(%tt)
  %c : f32[1,8,7,7] = conv(%img, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=8}
  %cb : f32[1,8,7,7] = elementwise(%c, %bias) { add(%c[i0, i1, i2, i3], %bias[i1, 0, 0]) }
  %ct : f32[1,8,49] = view(%cb)
  %x : f32[1,49,8] = layout(%ct) { %ct[i0, i2, i1] }
)";
  const std::string ew = " : f32[1,49,8] = elementwise(";
  const std::string tails[] = {
      gelu_text("[1,49,8]", "i0, i1, i2", "0.5"),
      "  %s" + ew + "%x) { sigmoid(%x[i0, i1, i2]) }\n  %y" + ew + "%s, %x) { mul(%s[i0, i1, i2], %x[i0, i1, i2]) }\n",
      "  %y" + ew + "%x, %r) { add(%x[i0, i1, i2], %r[i0, i1, i2]) }\n"};
  for (int variant = 0; variant < 3; ++variant) {
    ir::Graph g = ir::parse_graph(head + tails[variant] + "  output %y\n}\n");
    SCOPED_TRACE("variant " + std::to_string(variant));
    if (variant == 2) {
      EXPECT_NE(library_step_unsupported("onednn", g).find("reads an operand after a permutation of the result"),
                std::string::npos)
          << library_step_unsupported("onednn", g);
      continue;
    }
    EXPECT_EQ(post_op_names(g), (std::vector<std::string>{"bias", variant == 0 ? "gelu_erf" : "swish(1, 0)"}));
    check_onednn(g, 17 + static_cast<uint64_t>(variant), 9, {false, true, true});
  }
}

ChainText small_matmul() {
  ChainText c;
  c.input("a", {6, 10});
  c.input("b", {10, 5});
  c.linear(matmul_rhs(false, false), {6, 5});
  return c;
}

TEST(OnednnStep, UnaryPostOps) {
  ChainText c = small_matmul();
  for (const char* body : {"abs(X)", "add(X, 1:f32)", "log(X)", "sqrt(X)", "exp(X)", "max(X, 1.25:f32)", "tanh(X)"})
    c.post("", body);
  ir::Graph g = c.graph();
  EXPECT_EQ(post_op_names(g),
            (std::vector<std::string>{"abs", "linear(1, 1)", "log", "sqrt", "exp", "clip(1.25, inf)", "tanh"}));
  check_onednn(g, 8, 10, {});
}

// oneDNN 2.6 runs a repeated eltwise algorithm with the first one's parameters: adjacent
// linear post-ops are merged into one, other repetitions refused.
TEST(OnednnStep, RepeatedEltwiseAlgorithms) {
  ChainText merged = small_matmul();
  merged.post("", "mul(X, 0.75:f32)");
  merged.post("", "sub(0.5:f32, X)");
  EXPECT_EQ(post_op_names(merged.graph()), (std::vector<std::string>{"linear(-0.75, 0.5)"}));
  check_onednn(merged.graph(), 9, 10, {});
  ChainText leaky = small_matmul();
  leaky.post("", "select(lt(X, 0:f32), mul(X, 0.125:f32), X)");
  leaky.post("", "max(X, 0:f32)");
  EXPECT_NE(library_step_unsupported("onednn", leaky.graph()).find("repeat an eltwise algorithm"), std::string::npos);
  ChainText same = small_matmul();
  same.post("", "max(X, 0:f32)");
  same.post("", "tanh(X)");
  same.post("", "max(X, 0:f32)");
  EXPECT_EQ(library_step_unsupported("onednn", same.graph()), "");
  check_onednn(same.graph(), 10, 10, {});
}

// ---- The reference step ----

TEST(ReferenceStep, RunsOpaqueRoutinesLikeTheInterpreter) {
  ir::Graph g = ir::parse_graph(R"(graph @opaque {
  input %x : f32[4,10]
  %t, %ti : f32[4,3], i64[4,3] = opaque topk(%x) {axis=1, k=3, largest=1, sorted=1}
  %c : f32[4,10] = opaque cumsum(%x) {axis=1, exclusive=0, reverse=1}
  output %t, %ti, %c
})");
  EXPECT_EQ(library_step_unsupported("reference", g), "");
  std::vector<Tensor> inputs = interp::random_inputs(g, 11);
  std::vector<Tensor> want = interp::run(g, inputs, {interp::Precision::Own, false});
  auto step = make_library_step("reference", g, {nullptr});
  std::vector<Tensor> got = run_step(*step, g, inputs);
  ASSERT_EQ(got.size(), 3u);
  for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], want[k]) << "output " << k;
  std::vector<int> mismatches(2, 0);
  auto worker = [&](int t) {
    for (int k = 0; k < 10; ++k)
      if (run_step(*step, g, inputs) != want) ++mismatches[static_cast<size_t>(t)];
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(mismatches, (std::vector<int>{0, 0}));
}

// ---- What a step cannot run, and why ----

ir::Graph matmul_then(const std::string& dtype, const std::string& tail) {
  return ir::parse_graph("graph @g {\n  input %a : " + dtype + "[4,8]\n  input %b : " + dtype + "[8,5]\n" +
                         "  %y : " + dtype + "[4,5] = matmul(%a, %b) {trans_a=false, trans_b=false}\n" + tail);
}

TEST(OnednnStep, ExplainsWhatItCannotRun) {
  ir::Graph f16 = matmul_then("f16", "  output %y\n}\n");
  std::string why = library_step_unsupported("onednn", f16);
  EXPECT_NE(why.find("onednn: matmul with f16 inputs"), std::string::npos) << why;
  EXPECT_EQ(testlib::error_of([&] { make_library_step("onednn", f16, {}); }), why);

  ir::Graph not_post = matmul_then("f32", "  %z : f32[4,5] = elementwise(%y) { mul(exp(%y[i0, i1]), 2:f32) }\n  output %z\n}\n");
  why = library_step_unsupported("onednn", not_post);
  EXPECT_NE(why.find("node 1 (%z = elementwise) is not a supported post-op (body mul(exp($0[i0, i1]), 2:f32))"),
            std::string::npos) << why;

  ir::Graph reduce = matmul_then("f32", "  %s : f32[4,1] = reduce sum(%y) over [5] { %y[i0, r0] }\n  output %s\n}\n");
  EXPECT_NE(library_step_unsupported("onednn", reduce).find("is not a linear primitive, a post-op, a view or a permutation"),
            std::string::npos);

  ir::Graph shared = matmul_then("f32", "  %z : f32[4,5] = elementwise(%y) { max(%y[i0, i1], 0:f32) }\n  output %z, %y\n}\n");
  EXPECT_NE(library_step_unsupported("onednn", shared).find("outputs are not exactly"), std::string::npos);

  ir::Graph iota = matmul_then("f32", "  %z : f32[4,5] = elementwise(%y) { add(%y[i0, i1], cast<f32>(i1)) }\n  output %z\n}\n");
  EXPECT_NE(library_step_unsupported("onednn", iota).find("is not a supported post-op"), std::string::npos);

  EXPECT_NE(library_step_unsupported("cudnn", f16).find("unknown library step implementation 'cudnn'"), std::string::npos);
  EXPECT_EQ(library_step_unsupported("reference", f16), "");
}

// ---- Concurrency ----

TEST(OnednnStep, ConcurrentRunsGiveIdenticalResults) {
  ChainText c;
  c.input("a", {2, 16, 20, 20});
  c.input("b", {16, 16, 3, 3});
  c.input("bias", {16, 1, 1});
  c.input("res", {2, 16, 20, 20});
  ir::ConvAttrs attrs{{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1};
  c.linear(conv_rhs(attrs), {2, 16, 20, 20});
  c.post(", %bias", "add(X, %bias[i1, 0, 0])");
  c.post(", %res", "add(X, %res[i0, i1, i2, i3])");
  c.post("", "max(X, 0:f32)");
  ir::Graph g = c.graph();
  EXPECT_EQ(post_op_names(g), (std::vector<std::string>{"bias", "sum", "relu"}));
  std::vector<Tensor> inputs = interp::random_inputs(g, 21);
  auto step = make_library_step("onednn", g, constants_for(inputs, {false, true, false, false}));
  Tensor once = run_step(*step, g, inputs)[0];
  std::vector<int> mismatches(2, 0);
  auto worker = [&](int t) {
    for (int k = 0; k < 25; ++k)
      if (run_step(*step, g, inputs)[0] != once) ++mismatches[static_cast<size_t>(t)];
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(mismatches, (std::vector<int>{0, 0}));
  EXPECT_EQ(interp::compare_tensors(once, interp::run(g, inputs)[0], 1e-4, 2e-5 * 12), "");
}

TEST(OnednnStep, RefusesAnOutputThatOverlapsAnInput) {
  ChainText c = small_matmul();
  c.input("r", {6, 5});
  c.post(", %r", "add(X, %r[i0, i1])");
  ir::Graph g = c.graph();
  std::vector<Tensor> inputs = interp::random_inputs(g, 12);
  auto step = make_library_step("onednn", g, {});
  std::vector<void*> in_place = {inputs[0].data(), inputs[1].data(), inputs[2].data(), inputs[2].data()};
  EXPECT_THROW(step->run(in_place.data()), InternalError);
}

// ---- Micro-benchmark: printed, never asserted (STYLE.md "Tests") ----

double median_seconds(const LibraryStep& step, std::vector<void*>& args, int repeats) {
  for (int k = 0; k < 3; ++k) step.run(args.data());
  std::vector<double> times;
  for (int k = 0; k < repeats; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    step.run(args.data());
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Input 1 (the weights) constant, the others (bias, residual) not.
void report_gflops(const std::string& what, const ir::Graph& g, double flops) {
  std::vector<Tensor> inputs = interp::random_inputs(g, 1);
  auto step = make_library_step("onednn", g, constants_for(inputs, {false, true}));
  std::vector<Tensor> outputs = {Tensor(g.type(g.outputs()[0]))};
  std::vector<void*> args;
  for (Tensor& t : inputs) args.push_back(t.data());
  args.push_back(outputs[0].data());
  double s = median_seconds(*step, args, 20);
  std::printf("[ bench    ] %s: %.3f ms, %.1f GFLOP/s (%s, constant weights)\n", what.c_str(), s * 1e3,
              flops / s * 1e-9, onednn_implementation(g, true).c_str());
}

TEST(OnednnStep, PrintsGflops) {
  ChainText mm;
  mm.input("a", {512, 512});
  mm.input("b", {512, 512});
  mm.linear(matmul_rhs(false, false), {512, 512});
  report_gflops("matmul 512x512x512", mm.graph(), 2.0 * 512 * 512 * 512);
  ChainText conv;
  conv.input("a", {1, 64, 56, 56});
  conv.input("b", {64, 64, 3, 3});
  conv.linear(conv_rhs({{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1}), {1, 64, 56, 56});
  double conv_flops = 2.0 * 64 * 64 * 9 * 56 * 56;
  report_gflops("conv 3x3 64->64 56x56", conv.graph(), conv_flops);
  conv.input("bias", {64, 1, 1});  // as in resnet18's layer1
  conv.post(", %bias", "add(X, %bias[i1, 0, 0])");
  ChainText residual = conv;
  conv.post("", "max(X, 0:f32)");
  report_gflops("conv 3x3 64->64 56x56 + bias + relu", conv.graph(), conv_flops);
  residual.input("res", {1, 64, 56, 56});
  residual.post(", %res", "add(X, %res[i0, i1, i2, i3])");
  residual.post("", "max(X, 0:f32)");
  report_gflops("conv 3x3 64->64 56x56 + bias + residual + relu", residual.graph(), conv_flops);
}

}  // namespace
}  // namespace orchid::runtime
