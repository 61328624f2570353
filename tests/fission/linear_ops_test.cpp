// Differential tests of the linear fission rules (MatMul, Gemm, Conv): seeded random shapes
// and attributes over every supported opset, imported through the real loader, run by the
// interpreter and compared with naive loops written from the ONNX operator text. Plus one
// test per user-facing error.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>

#include "interp/interp.h"
#include "support/error.h"
#include "testlib/errors.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"

namespace orchid {
namespace {

using ir::DType;
using ir::Dims;
using ir::Tensor;
using ir::TensorType;
using testlib::import_model;
using testlib::single_node;
using Attrs = std::vector<std::pair<std::string, frontend::Attribute>>;

double tolerance(DType t) { return t == DType::F16 ? 1e-2 : 1e-5; }

// Integers accumulate with wrap-around (then wrap to the dtype's width when stored).
void store(Tensor& t, int64_t i, double f, uint64_t n) {
  if (ir::is_float(t.dtype())) t.set_f64(i, f);
  else t.set_i64(i, static_cast<int64_t>(n));
}

// ---- MatMul: numpy.matmul ----

Tensor matmul_reference(const Tensor& a, const Tensor& b) {
  Dims sa = a.shape(), sb = b.shape();
  if (a.shape().size() == 1) sa.insert(sa.begin(), 1);
  if (b.shape().size() == 1) sb.push_back(1);
  size_t R = std::max(sa.size(), sb.size());
  sa.insert(sa.begin(), R - sa.size(), 1);
  sb.insert(sb.begin(), R - sb.size(), 1);
  Dims out(R);
  for (size_t j = 0; j + 2 < R; ++j) out[j] = std::max(sa[j], sb[j]);
  int64_t K = sa[R - 1];
  out[R - 2] = sa[R - 2];
  out[R - 1] = sb[R - 1];
  Dims final_shape = out;
  if (b.shape().size() == 1) final_shape.pop_back();
  if (a.shape().size() == 1) final_shape.erase(final_shape.end() - (b.shape().size() == 1 ? 1 : 2));
  Tensor y(TensorType{a.dtype(), final_shape});
  Dims o(R, 0);
  for (int64_t i = 0; i < y.numel(); ++i, testlib::next_index(out, o)) {
    double f = 0;
    uint64_t n = 0;
    for (int64_t k = 0; k < K; ++k) {
      Dims ia(R), ib(R);
      for (size_t j = 0; j + 2 < R; ++j) ia[j] = sa[j] == 1 ? 0 : o[j], ib[j] = sb[j] == 1 ? 0 : o[j];
      ia[R - 2] = o[R - 2], ia[R - 1] = k, ib[R - 2] = k, ib[R - 1] = o[R - 1];
      int64_t fa = testlib::flat_offset(sa, ia), fb = testlib::flat_offset(sb, ib);
      f += a.get_as_double(fa) * b.get_as_double(fb);
      if (!ir::is_float(a.dtype())) n += static_cast<uint64_t>(a.get_i64(fa)) * static_cast<uint64_t>(b.get_i64(fb));
    }
    store(y, i, f, n);
  }
  return y;
}

void check_matmul(DType t, int64_t opset, uint64_t seed) {
  Rng rng(seed * 6151 + static_cast<uint64_t>(t));
  size_t ra = static_cast<size_t>(rng.range(1, 5)), rb = static_cast<size_t>(rng.range(1, 5));
  size_t batch = std::max(ra, rb) > 2 ? std::max(ra, rb) - 2 : 0;
  Dims common;
  for (size_t j = 0; j < batch; ++j) common.push_back(rng.range(1, 4));
  int64_t M = rng.range(1, 5), K = rng.range(1, 6), N = rng.range(1, 5);
  auto operand = [&](size_t rank, int64_t r, int64_t c) {
    Dims s(common.end() - static_cast<int64_t>(rank - 2), common.end());
    for (auto& d : s)
      if (rng.coin(0.3)) d = 1;
    s.push_back(r);
    s.push_back(c);
    return s;
  };
  Dims sa = ra == 1 ? Dims{K} : operand(ra, M, K);
  Dims sb = rb == 1 ? Dims{K} : operand(rb, K, N);
  SCOPED_TRACE("MatMul seed " + std::to_string(seed) + " " + std::string(ir::dtype_name(t)) +
               ir::dims_str(sa) + " @ " + ir::dims_str(sb) + " opset " + std::to_string(opset));
  ir::Graph g = import_model(single_node("MatMul", {{t, sa}, {t, sb}}, 1, {}, opset));
  double hi = ir::is_float(t) ? 1 : 1000;
  double lo = ir::dtype_class(t) == ir::DTypeClass::Unsigned ? 0 : -hi;
  Tensor a = testlib::random_tensor({t, sa}, rng, lo, hi);
  Tensor b = testlib::random_tensor({t, sb}, rng, lo, hi);
  Tensor got = interp::run(g, {a, b})[0];
  EXPECT_EQ(testlib::compare_tensors(got, matmul_reference(a, b), tolerance(t), tolerance(t)), "");
}

TEST(LinearFission, MatMulMatchesNumpyMatmul) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    check_matmul(DType::F32, 13, seed);
    check_matmul(DType::F64, 1, seed);
    check_matmul(DType::F16, 9, seed);
    check_matmul(DType::I32, 9, seed);
    check_matmul(DType::I64, 13, seed);
    check_matmul(DType::U32, 13, seed);
  }
}

// Integer products wrap at the dtype's width, as the i32 arithmetic of runtimes does.
TEST(LinearFission, IntegerMatMulWraps) {
  ir::Graph g = import_model(single_node("MatMul", {{DType::I32, {1, 2}}, {DType::I32, {2, 1}}}));
  Tensor a(TensorType{DType::I32, {1, 2}}), b(TensorType{DType::I32, {2, 1}});
  a.set_i64(0, 65536), a.set_i64(1, 3), b.set_i64(0, 65536), b.set_i64(1, 5);
  EXPECT_EQ(interp::run(g, {a, b})[0].get_i64(0), 15);  // 2^32 wraps to 0
}

// MatMul(x, x): one value read twice by a primitive whose inputs must be distinct.
TEST(LinearFission, MatMulOfAValueWithItself) {
  for (DType t : {DType::F32, DType::I64}) {
    testlib::OnnxModel m;
    m.inputs = {{"x", {t, {2, 3, 3}}}};
    m.nodes = {{"MatMul", {"x", "x"}, {"y"}, {}, ""}};
    m.outputs = {"y"};
    ir::Graph g = import_model(m);
    Rng rng(5);
    Tensor x = testlib::random_tensor({t, {2, 3, 3}}, rng, -9, 9);
    EXPECT_EQ(testlib::compare_tensors(interp::run(g, {x})[0], matmul_reference(x, x)), "");
  }
}

// ---- Gemm: Y = alpha * A' B' + beta * C ----

struct GemmCase {
  DType t = DType::F32;
  int64_t opset = 13;
  int64_t M = 1, K = 1, N = 1;
  bool trans_a = false, trans_b = false;
  double alpha = 1, beta = 1;
  bool has_c = true;
  Dims c;
  int64_t broadcast = -1;  // opset < 7: the attribute (-1: absent)
};

Tensor gemm_reference(const GemmCase& gc, const Tensor& a, const Tensor& b, const Tensor* c) {
  Tensor y(TensorType{gc.t, {gc.M, gc.N}});
  for (int64_t m = 0; m < gc.M; ++m) {
    for (int64_t n = 0; n < gc.N; ++n) {
      double f = 0;
      uint64_t i = 0;
      for (int64_t k = 0; k < gc.K; ++k) {
        int64_t fa = gc.trans_a ? k * gc.M + m : m * gc.K + k;
        int64_t fb = gc.trans_b ? n * gc.K + k : k * gc.N + n;
        f += a.get_as_double(fa) * b.get_as_double(fb);
        if (!ir::is_float(gc.t)) i += static_cast<uint64_t>(a.get_i64(fa)) * static_cast<uint64_t>(b.get_i64(fb));
      }
      f *= gc.alpha;
      i *= static_cast<uint64_t>(static_cast<int64_t>(gc.alpha));
      if (c) {
        Dims idx = {m, n};
        Dims ci(idx.end() - static_cast<int64_t>(gc.c.size()), idx.end());
        for (size_t j = 0; j < ci.size(); ++j)
          if (gc.c[j] == 1) ci[j] = 0;
        int64_t fc = testlib::flat_offset(gc.c, ci);
        f += gc.beta * c->get_as_double(fc);
        if (!ir::is_float(gc.t))
          i += static_cast<uint64_t>(static_cast<int64_t>(gc.beta)) * static_cast<uint64_t>(c->get_i64(fc));
      }
      store(y, m * gc.N + n, f, i);
    }
  }
  return y;
}

void check_gemm(const GemmCase& gc, uint64_t seed) {
  std::ostringstream os;
  os << "Gemm seed " << seed << " " << ir::dtype_name(gc.t) << " opset " << gc.opset << " M,K,N "
     << gc.M << "," << gc.K << "," << gc.N << " trans " << gc.trans_a << gc.trans_b << " alpha "
     << gc.alpha << " beta " << gc.beta << " C " << (gc.has_c ? ir::dims_str(gc.c) : "none")
     << " broadcast " << gc.broadcast;
  SCOPED_TRACE(os.str());
  Dims sa = gc.trans_a ? Dims{gc.K, gc.M} : Dims{gc.M, gc.K};
  Dims sb = gc.trans_b ? Dims{gc.N, gc.K} : Dims{gc.K, gc.N};
  std::vector<TensorType> types = {{gc.t, sa}, {gc.t, sb}};
  if (gc.has_c) types.push_back({gc.t, gc.c});
  Attrs attrs = {{"alpha", gc.alpha}, {"beta", gc.beta}, {"transA", int64_t{gc.trans_a}},
                 {"transB", int64_t{gc.trans_b}}};
  if (gc.broadcast >= 0) attrs.push_back({"broadcast", gc.broadcast});
  ir::Graph g = import_model(single_node("Gemm", types, 1, attrs, gc.opset));
  Rng rng(seed);
  double range = ir::is_float(gc.t) ? 1 : 100;
  std::vector<Tensor> ins;
  for (const auto& ty : types) ins.push_back(testlib::random_tensor(ty, rng, -range, range));
  Tensor got = interp::run(g, ins)[0];
  Tensor want = gemm_reference(gc, ins[0], ins[1], gc.has_c ? &ins[2] : nullptr);
  EXPECT_EQ(testlib::compare_tensors(got, want, 1e-5, 1e-5), "");
}

GemmCase random_gemm(Rng& rng, int64_t opset, DType t) {
  GemmCase gc;
  gc.t = t;
  gc.opset = opset;
  gc.M = rng.range(1, 6), gc.K = rng.range(1, 6), gc.N = rng.range(1, 6);
  gc.trans_a = rng.coin(), gc.trans_b = rng.coin();
  const double scales[] = {1, 0.5, -2, 0, 3};
  gc.alpha = scales[rng.range(0, 5)];
  gc.beta = scales[rng.range(0, 5)];
  if (!ir::is_float(t)) gc.alpha = std::round(gc.alpha), gc.beta = std::round(gc.beta);
  const Dims c_shapes[] = {{}, {1}, {gc.N}, {gc.M, 1}, {1, gc.N}, {gc.M, gc.N}, {1, 1}};
  gc.c = c_shapes[rng.range(0, 7)];
  gc.has_c = opset < 11 || rng.coin(0.8);
  if (opset < 7) gc.broadcast = gc.c == Dims{gc.M, gc.N} && rng.coin() ? 0 : 1;
  return gc;
}

TEST(LinearFission, GemmMatchesNaiveLoops) {
  const int64_t opsets[] = {1, 6, 7, 9, 11, 13};
  for (uint64_t seed = 1; seed <= 36; ++seed) {
    Rng rng(seed * 977);
    int64_t opset = opsets[seed % 6];
    DType t = seed % 4 == 0 ? DType::F64 : DType::F32;
    if (opset >= 9 && seed % 3 == 0) t = seed % 2 ? DType::I32 : DType::I64;
    check_gemm(random_gemm(rng, opset, t), seed);
  }
}

// ---- Conv ----

struct ConvCase {
  int64_t opset = 11;
  DType t = DType::F32;
  Dims x, w;  // X [N, C, s..], W [M, C/group, k..]
  int64_t group = 1;
  Dims strides, dilations, pads;
  std::string auto_pad;
  bool kernel_shape_attr = false, bias = false;
};

int64_t at(const Dims& v, size_t d, int64_t dflt) { return v.empty() ? dflt : v[d]; }

// Output sizes and begin pads per the ONNX Conv text.
void conv_geometry(const ConvCase& c, Dims* out, Dims* pad_begin) {
  size_t S = c.x.size() - 2;
  for (size_t d = 0; d < S; ++d) {
    int64_t in = c.x[2 + d], s = at(c.strides, d, 1);
    int64_t span = (c.w[2 + d] - 1) * at(c.dilations, d, 1) + 1;
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      int64_t o = (in + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (o - 1) * s + span - in);
      out->push_back(o);
      pad_begin->push_back(c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2);
    } else if (c.auto_pad == "VALID") {
      out->push_back((in - span + s) / s);
      pad_begin->push_back(0);
    } else {
      out->push_back((in + at(c.pads, d, 0) + at(c.pads, S + d, 0) - span) / s + 1);
      pad_begin->push_back(at(c.pads, d, 0));
    }
  }
}

Tensor conv_reference(const ConvCase& c, const Tensor& x, const Tensor& w, const Tensor* b) {
  size_t S = c.x.size() - 2;
  Dims out_sp, pb;
  conv_geometry(c, &out_sp, &pb);
  Dims out = {c.x[0], c.w[0]};
  out.insert(out.end(), out_sp.begin(), out_sp.end());
  Tensor y(TensorType{c.t, out});
  int64_t cg = c.w[1], mg = c.w[0] / c.group;
  Dims kernel(c.w.begin() + 1, c.w.end());  // [C/group, k..]
  Dims o(out.size(), 0);
  for (int64_t i = 0; i < y.numel(); ++i, testlib::next_index(out, o)) {
    double acc = b ? b->get_f64(o[1]) : 0;
    Dims q(kernel.size(), 0);
    do {
      Dims xi = {o[0], (o[1] / mg) * cg + q[0]};
      bool inside = true;
      for (size_t d = 0; d < S; ++d) {
        int64_t pos = o[2 + d] * at(c.strides, d, 1) + q[1 + d] * at(c.dilations, d, 1) - pb[d];
        inside &= pos >= 0 && pos < c.x[2 + d];
        xi.push_back(pos);
      }
      if (!inside) continue;
      Dims wi = {o[1]};
      wi.insert(wi.end(), q.begin(), q.end());
      acc += x.get_f64(testlib::flat_offset(c.x, xi)) * w.get_f64(testlib::flat_offset(c.w, wi));
    } while (testlib::next_index(kernel, q));
    y.set_f64(i, acc);
  }
  return y;
}

ConvCase random_conv(Rng& rng, int64_t opset) {
  ConvCase c;
  c.opset = opset;
  c.t = rng.coin(0.2) ? DType::F64 : DType::F32;
  size_t S = static_cast<size_t>(rng.range(1, 4));
  c.group = rng.range(1, 4);
  bool depthwise = rng.coin(0.3);
  int64_t cg = depthwise ? 1 : rng.range(1, 4), mg = depthwise ? 1 : rng.range(1, 4);
  c.x = {rng.range(1, 3), cg * c.group};
  c.w = {mg * c.group, cg};
  bool dilated = rng.coin(0.4);
  for (size_t d = 0; d < S; ++d) {
    c.x.push_back(rng.range(S == 3 ? 2 : 3, S == 3 ? 6 : 10));
    c.w.push_back(rng.range(1, 4));
    if (dilated) c.dilations.push_back(rng.range(1, 3));
  }
  if (rng.coin(0.7))
    for (size_t d = 0; d < S; ++d) c.strides.push_back(rng.range(1, 4));
  int mode = static_cast<int>(rng.range(0, 4));
  if (mode == 0) c.auto_pad = "VALID";
  if (mode == 1) c.auto_pad = rng.coin() ? "SAME_UPPER" : "SAME_LOWER";
  if (mode == 2)
    for (size_t d = 0; d < 2 * S; ++d) c.pads.push_back(rng.range(0, 3));
  for (size_t d = 0; d < S; ++d) {  // the kernel fits the padded input; SAME pads are >= 0
    int64_t room = c.x[2 + d] + at(c.pads, d, 0) + at(c.pads, S + d, 0);
    auto span = [&] { return (c.w[2 + d] - 1) * at(c.dilations, d, 1) + 1; };
    while (span() > room) c.dilations.empty() || c.dilations[d] == 1 ? --c.w[2 + d] : --c.dilations[d];
    if (!c.auto_pad.empty() && c.auto_pad != "VALID" && !c.strides.empty())
      c.strides[d] = std::min(c.strides[d], span());
  }
  c.kernel_shape_attr = rng.coin();
  c.bias = rng.coin();
  return c;
}

void check_conv(const ConvCase& c, uint64_t seed) {
  std::ostringstream os;
  os << "Conv seed " << seed << " opset " << c.opset << " X " << ir::dims_str(c.x) << " W "
     << ir::dims_str(c.w) << " group " << c.group << " strides " << ir::dims_str(c.strides)
     << " dilations " << ir::dims_str(c.dilations) << " pads " << ir::dims_str(c.pads) << " auto_pad '"
     << c.auto_pad << "' bias " << c.bias;
  SCOPED_TRACE(os.str());
  Attrs attrs;
  if (c.group != 1 || seed % 2) attrs.push_back({"group", c.group});
  if (!c.strides.empty()) attrs.push_back({"strides", c.strides});
  if (!c.dilations.empty()) attrs.push_back({"dilations", c.dilations});
  if (!c.pads.empty()) attrs.push_back({"pads", c.pads});
  if (!c.auto_pad.empty()) attrs.push_back({"auto_pad", c.auto_pad});
  if (c.kernel_shape_attr) attrs.push_back({"kernel_shape", Dims(c.w.begin() + 2, c.w.end())});
  std::vector<TensorType> types = {{c.t, c.x}, {c.t, c.w}};
  if (c.bias) types.push_back({c.t, {c.w[0]}});
  ir::Graph g = import_model(single_node("Conv", types, 1, attrs, c.opset));
  Rng rng(seed);
  std::vector<Tensor> ins;
  for (const auto& ty : types) ins.push_back(testlib::random_tensor(ty, rng));
  Tensor got = interp::run(g, ins)[0];
  EXPECT_EQ(testlib::compare_tensors(got, conv_reference(c, ins[0], ins[1], c.bias ? &ins[2] : nullptr), 1e-5, 1e-5), "");
}

TEST(LinearFission, ConvMatchesNaiveLoops) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng(seed * 65537);
    check_conv(random_conv(rng, seed % 2 ? 11 : 1), seed);
  }
}

// A window lying entirely in the padding reads only zeros: the output is the bias.
TEST(LinearFission, ConvWindowsInPaddingGiveTheBias) {
  ConvCase c;
  c.x = {1, 2, 3};
  c.w = {2, 2, 2};
  c.pads = {3, 3};
  c.strides = {2};
  c.bias = true;
  check_conv(c, 99);
}

// auto_pad SAME with a kernel smaller than the stride (a strided 1x1 conv): ONNX clamps the
// negative padding to 0, where onnxruntime agrees as long as the first window stays put.
TEST(LinearFission, ConvSameWithAStrideLargerThanTheKernel) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    ConvCase c;
    c.x = {1, 2, 6, 7};
    c.w = {3, 2, 1, 1};
    c.strides = {2, 2};
    c.auto_pad = mode;
    check_conv(c, 7);
  }
  Attrs attrs = {{"strides", Dims{3}}, {"auto_pad", std::string("SAME_UPPER")}};
  EXPECT_THROW(import_model(single_node("Conv", {{DType::F32, {1, 1, 6}}, {DType::F32, {1, 1, 1}}}, 1, attrs, 11)),
               UnsupportedError);
}

// ---- Errors ----

using testlib::error_of;

std::string import_error(const std::string& op, const std::vector<TensorType>& ins, Attrs attrs = {},
                         int64_t opset = 13) {
  return error_of([&] { import_model(single_node(op, ins, 1, std::move(attrs), opset), "l.onnx"); });
}

#define EXPECT_MESSAGE(msg, text) EXPECT_NE((msg).find(text), std::string::npos) << (msg)

TEST(LinearFission, MatMulErrorsNameTheNode) {
  TensorType f23{DType::F32, {2, 3}}, f45{DType::F32, {4, 5}};
  EXPECT_EQ(import_error("MatMul", {f23, f45}),
            "l.onnx: node 'node' (MatMul, opset 13): matmul inner dimensions differ (3 vs 4): f32[2,3] and f32[4,5]");
  EXPECT_MESSAGE(import_error("MatMul", {{DType::F32, {2, 2, 3}}, {DType::F32, {3, 3, 4}}}),
                 "matmul batch dimensions do not broadcast");
  EXPECT_MESSAGE(import_error("MatMul", {{DType::F32, {}}, f23}), "MatMul of a scalar (shapes [] and [2,3])");
  EXPECT_MESSAGE(import_error("MatMul", {f23, {DType::F64, {3, 2}}}),
                 "inputs 0 and 1 have different dtypes (f32 and f64)");
  EXPECT_MESSAGE(import_error("MatMul", {{DType::U8, {2, 3}}, {DType::U8, {3, 2}}}),
                 "input 0 has dtype u8; MatMul-13 allows f16, f32, f64, u32, u64, i32, i64, bf16");
  EXPECT_MESSAGE(import_error("MatMul", {{DType::I32, {2, 3}}, {DType::I32, {3, 2}}}, {}, 8),
                 "input 0 has dtype i32; MatMul-1 allows f16, f32, f64");
}

TEST(LinearFission, GemmErrorsNameTheNode) {
  TensorType a{DType::F32, {2, 3}}, b{DType::F32, {3, 4}};
  EXPECT_EQ(import_error("Gemm", {{DType::F32, {1, 2, 3}}, b}),
            "l.onnx: node 'node' (Gemm, opset 13): A and B must be matrices, given [1,2,3] and [3,4]");
  EXPECT_MESSAGE(import_error("Gemm", {a, b, {DType::F32, {3}}}), "C of shape [3] does not broadcast to [2,4]");
  EXPECT_MESSAGE(import_error("Gemm", {a, b, {DType::F32, {1, 2, 4}}}), "C of shape [1,2,4] does not broadcast to [2,4]");
  EXPECT_MESSAGE(import_error("Gemm", {a, b, {DType::F32, {4}}}, {{"broadcast", int64_t{0}}}, 6),
                 "C of shape [4] must equal [2,4] (broadcast=0)");
  EXPECT_MESSAGE(import_error("Gemm", {a, b, {DType::F32, {4}}}, {{"broadcast", int64_t{1}}}, 7),
                 "attribute 'broadcast' is not defined after version 6");
  EXPECT_MESSAGE(import_error("Gemm", {a, b}, {}, 9), "has 2 inputs, the operator takes 3");
  EXPECT_MESSAGE(import_error("Gemm", {a, {DType::F32, {2, 4}}}), "matmul inner dimensions differ (3 vs 2)");
  std::string msg = import_error("Gemm", {{DType::I32, {2, 3}}, {DType::I32, {3, 4}}}, {{"alpha", 0.5}});
  EXPECT_MESSAGE(msg, "not supported: integer Gemm with a non-integer alpha (0.5");
}

TEST(LinearFission, ConvErrorsNameTheNode) {
  TensorType x{DType::F32, {1, 4, 5, 5}}, w{DType::F32, {6, 2, 3, 3}};
  EXPECT_EQ(import_error("Conv", {x, w}, {}, 11),
            "l.onnx: node 'node' (Conv, opset 11): group=1 does not fit X [1,4,5,5] and W [6,2,3,3] "
            "(X channels = W dim 1 * group, W dim 0 a multiple of group)");
  EXPECT_MESSAGE(import_error("Conv", {x, {DType::F32, {6, 2, 3}}}, {}, 11),
                 "X [1,4,5,5] and W [6,2,3] need one rank >= 3");
  EXPECT_MESSAGE(import_error("Conv", {x, w}, {{"group", int64_t{2}}, {"kernel_shape", Dims{3, 2}}}, 11),
                 "kernel_shape [3,2] differs from the weight's spatial shape [3,3]");
  EXPECT_MESSAGE(import_error("Conv", {x, w, {DType::F32, {4}}}, {{"group", int64_t{2}}}, 11),
                 "bias B of shape [4] should be [6]");
  EXPECT_MESSAGE(import_error("Conv", {x, {DType::F32, {6, 2, 0, 3}}}, {{"group", int64_t{2}}}, 11),
                 "the weight's spatial shape [0,3] has an empty dim");
  EXPECT_MESSAGE(import_error("Conv", {x, w}, {{"group", int64_t{2}}, {"dilations", Dims{3, 1}}}, 11),
                 "the window (span 7) is larger than the padded input (5) along spatial dim 0");
  EXPECT_MESSAGE(import_error("Conv", {{DType::BF16, {1, 4, 5, 5}}, {DType::BF16, {6, 2, 3, 3}}},
                              {{"group", int64_t{2}}}, 11),
                 "input 0 has dtype bf16; Conv-11 allows f16, f32, f64");
}

}  // namespace
}  // namespace orchid
