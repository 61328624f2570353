// Differential tests of the NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss fission
// rules: each node, imported through the real loader, is run by the interpreter and compared
// with ONNX's reference formula (numpy's, written as loops) on seeded random shapes, targets,
// ignore_index (inside and outside the classes), weights, reductions, opsets and dtypes; plus
// the rules' error messages.
#include <algorithm>

#include "coverage_reduce_util.h"

namespace orchid {
namespace {

using namespace coverage;

struct LossCase {
  bool sce = false;
  Dims x;  // [N, C, d..]
  bool weighted = false;
  bool ignore = false;
  int64_t ignore_index = 0;
  std::string reduction = "mean";
};

// log-softmax of x over axis 1.
Tensor ref_log_softmax(const Tensor& x) {
  Tensor y(TensorType{DType::F64, x.shape()});
  Lines l(x.shape(), 1);
  for (int64_t line = 0; line < l.count(); ++line) {
    double m = -kInf, s = 0;
    for (int64_t c = 0; c < l.len; ++c) m = std::max(m, x.get_f64(l.at(line, c)));
    for (int64_t c = 0; c < l.len; ++c) s += std::exp(x.get_f64(l.at(line, c)) - m);
    for (int64_t c = 0; c < l.len; ++c) y.set_f64(l.at(line, c), x.get_f64(l.at(line, c)) - m - std::log(s));
  }
  return y;
}

// The loss (and for SCE log_prob) as ONNX's reference computes them.
std::vector<Tensor> ref_loss(const LossCase& c, const Tensor& x, const Tensor& target, const Tensor* weight) {
  Tensor logp = c.sce ? ref_log_softmax(x) : x;
  Lines l(x.shape(), 1);  // line = sample (n, d..) in target order
  Tensor loss(TensorType{x.dtype(), target.shape()});
  double total = 0, weights = 0;
  for (int64_t s = 0; s < l.count(); ++s) {
    int64_t cls = target.get_i64(s);
    if (c.ignore && cls == c.ignore_index) continue;
    double w = weight ? weight->get_f64(cls) : 1;
    double v = -logp.get_f64(l.at(s, cls)) * w;
    loss.set_f64(s, v);
    total += v, weights += w;
  }
  Tensor out = loss;
  if (c.reduction != "none") {
    out = Tensor(TensorType{x.dtype(), {}});
    bool by_weight = c.weighted || c.ignore;
    out.set_f64(0, c.reduction == "sum" ? total : total / (by_weight ? weights : static_cast<double>(target.numel())));
  }
  if (!c.sce) return {out};
  Tensor lp(x.type());
  for (int64_t i = 0; i < lp.numel(); ++i) lp.set_f64(i, logp.get_f64(i));
  return {out, lp};
}

void check_loss(const LossCase& c, DType t, DType target_t, int64_t opset, bool log_prob, Rng& rng) {
  TensorType xt{t, c.x};
  Dims ts = {c.x[0]};
  ts.insert(ts.end(), c.x.begin() + 2, c.x.end());
  std::vector<TensorType> types = {xt, {target_t, ts}};
  if (c.weighted) types.push_back({t, {c.x[1]}});
  Attrs attrs = {{"reduction", c.reduction}};
  if (c.ignore) attrs.emplace_back("ignore_index", c.ignore_index);
  int outputs = c.sce && log_prob ? 2 : 1;
  OnnxModel m = single_node(c.sce ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss", types, outputs, attrs, opset);
  std::vector<Tensor> in = {testlib::random_tensor(xt, rng, -3, 1), Tensor(types[1])};
  for (int64_t i = 0; i < in[1].numel(); ++i)
    in[1].set_i64(i, c.ignore && rng.coin(0.3) ? c.ignore_index : rng.range(0, c.x[1]));
  if (c.weighted) in.push_back(testlib::random_tensor(types[2], rng, 0.1, 2));
  std::vector<Tensor> got = run(m, in), want = ref_loss(c, in[0], in[1], c.weighted ? &in[2] : nullptr);
  double tol = ir::dtype_bytes(t) == 2 ? 2e-2 : 1e-5;
  ASSERT_EQ(got.size(), static_cast<size_t>(outputs));
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_EQ(testlib::compare_tensors(got[k], want[k], tol, tol), "")
        << "output " << k << " of x " << ir::type_str(xt) << " reduction " << c.reduction << " weighted " << c.weighted
        << " ignore " << (c.ignore ? std::to_string(c.ignore_index) : "-");
}

void check_random_loss(bool sce, uint64_t seed) {
  for (int64_t opset : {12, 13}) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " opset " + std::to_string(opset));
    Rng rng(seed * 7151 + static_cast<uint64_t>(opset) + (sce ? 99 : 0));
    LossCase c;
    c.sce = sce;
    c.x = random_shape(rng, 2, 5);
    c.x[1] = rng.range(2, 6);
    c.weighted = rng.coin();
    c.ignore = rng.coin(0.6);
    int64_t kind = rng.range(0, 3);  // inside the classes, negative, past the classes
    c.ignore_index = kind == 0 ? rng.range(0, c.x[1]) : kind == 1 ? -1 : c.x[1] + 5;
    const char* reductions[] = {"none", "sum", "mean"};
    c.reduction = reductions[rng.range(0, 3)];
    DType t = seed % 3 == 0 ? DType::F64 : seed % 3 == 1 ? DType::F32 : DType::F16;
    if (sce && opset >= 13 && seed % 5 == 0) t = DType::BF16;
    check_loss(c, t, rng.coin() ? DType::I64 : DType::I32, opset, rng.coin(), rng);
  }
}

TEST(CoverageReduceLoss, NegativeLogLikelihoodLoss) {
  for (uint64_t seed = 1; seed <= 12; ++seed) check_random_loss(false, seed);
}

TEST(CoverageReduceLoss, SoftmaxCrossEntropyLoss) {
  for (uint64_t seed = 1; seed <= 12; ++seed) check_random_loss(true, seed);
}

// The default reduction is mean; every sample ignored gives 0 / 0.
TEST(CoverageReduceLoss, DefaultsAndAllIgnored) {
  TensorType x{DType::F32, {2, 3}}, t{DType::I64, {2}};
  Rng rng(1);
  Tensor xv = testlib::random_tensor(x, rng), tv = i64_tensor({2}, {2, 0});
  Tensor got = run(single_node("NegativeLogLikelihoodLoss", {x, t}, 1, {}, 13), {xv, tv})[0];
  EXPECT_NEAR(got.get_f64(0), -(xv.get_f64(2) + xv.get_f64(3)) / 2, 1e-6);
  Tensor ignored = i64_tensor({2}, {1, 1});
  got = run(single_node("NegativeLogLikelihoodLoss", {x, t}, 1, {{"ignore_index", int64_t{1}}}, 13), {xv, ignored})[0];
  EXPECT_TRUE(std::isnan(got.get_f64(0)));
}

TEST(CoverageReduceLossErrors, Inputs) {
  TensorType x{DType::F32, {2, 3, 4}}, t{DType::I64, {2, 4}};
  const char* nll = "NegativeLogLikelihoodLoss";
  EXPECT_ERROR(single_node(nll, {x, t}, 1, {{"reduction", std::string("avg")}}, 13),
               "reduction 'avg' is not none, sum or mean");
  EXPECT_ERROR(single_node(nll, {x, {DType::I64, {2}}}, 1, {}, 13),
               "target of shape [2] does not fit input [2,3,4] (expected [2,4])");
  EXPECT_ERROR(single_node(nll, {x, t, {DType::F32, {4}}}, 1, {}, 13), "weight is f32[4]; expected f32[3], one per class");
  EXPECT_ERROR(single_node(nll, {{DType::F32, {3}}, {DType::I64, {3}}}, 1, {}, 13),
               "input 0 of shape [3] needs rank >= 2 (N x C x d1 x ...)");
  EXPECT_ERROR(single_node(nll, {x, {DType::I16, {2, 4}}}, 1, {}, 13),
               "input 1 has dtype i16; NegativeLogLikelihoodLoss-13 allows i32, i64");
  EXPECT_ERROR(single_node("SoftmaxCrossEntropyLoss", {{DType::BF16, {2, 3}}, {DType::I64, {2}}}, 1, {}, 12),
               "input 0 has dtype bf16; SoftmaxCrossEntropyLoss-12 allows f16, f32, f64");
  EXPECT_ERROR(single_node(nll, {{DType::BF16, {2, 3}}, {DType::I64, {2}}}, 1, {}, 13),
               "input 0 has dtype bf16; NegativeLogLikelihoodLoss-13 allows f16, f32, f64");
}

// A target outside [0, C) that is not ignore_index is a run-time error naming the primitive.
TEST(CoverageReduceLossErrors, TargetOutOfRange) {
  TensorType x{DType::F32, {2, 3}}, t{DType::I64, {2}};
  ir::Graph g = import_model(single_node("NegativeLogLikelihoodLoss", {x, t}, 1, {{"ignore_index", int64_t{-1}}}, 13));
  std::string e = testlib::error_of([&] { interp::run(g, {Tensor(x), i64_tensor({2}, {0, 3})}); });
  EXPECT_NE(e.find("out of"), std::string::npos) << e;
  EXPECT_NE(e.find("node"), std::string::npos) << e;
  EXPECT_EQ(testlib::error_of([&] { interp::run(g, {Tensor(x), i64_tensor({2}, {-1, 2})}); }), "(no error)");
}

}  // namespace
}  // namespace orchid
