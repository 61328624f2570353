// Differential tests of the pooling fission rules (MaxPool with Indices, AveragePool,
// GlobalAveragePool, GlobalMaxPool): seeded random geometries (1-3 spatial dims, strides,
// dilations, pads, auto_pad, ceil_mode, count_include_pad, opsets) imported through the real
// loader, run by the interpreter and compared with naive loops written from the ONNX text.
// Geometries ONNX leaves undefined must be refused as unsupported.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "fission/fission.h"
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

struct PoolCase {
  int64_t opset = 12;
  DType dtype = DType::F32;
  Dims x;  // [N, C, spatial..]
  Dims kernel, strides, dilations, pads;
  std::string auto_pad;  // "" : attribute absent
  bool ceil = false;
  bool count_include_pad = false;
  bool indices = false;
  int64_t storage_order = 0;

  size_t rank() const { return kernel.size(); }
  Attrs attrs() const {
    Attrs a = {{"kernel_shape", kernel}};
    if (!strides.empty()) a.push_back({"strides", strides});
    if (!dilations.empty()) a.push_back({"dilations", dilations});
    if (!pads.empty()) a.push_back({"pads", pads});
    if (!auto_pad.empty()) a.push_back({"auto_pad", auto_pad});
    if (ceil) a.push_back({"ceil_mode", int64_t{1}});
    if (count_include_pad) a.push_back({"count_include_pad", int64_t{1}});
    if (storage_order) a.push_back({"storage_order", storage_order});
    return a;
  }
  std::string str() const {
    std::ostringstream os;
    os << "opset " << opset << " " << ir::dtype_name(dtype) << ir::dims_str(x) << " kernel "
       << ir::dims_str(kernel) << " strides " << ir::dims_str(strides) << " dilations "
       << ir::dims_str(dilations) << " pads " << ir::dims_str(pads) << " auto_pad '" << auto_pad
       << "' ceil " << ceil << " cip " << count_include_pad << " indices " << indices
       << " storage_order " << storage_order;
    return os.str();
  }
};

// The window geometry as the ONNX operator text defines it; `refused` is set where ONNX is
// ambiguous and Orchid must refuse.
struct Geometry {
  Dims pb, pe, out;
  bool refused = false;
};

int64_t at(const Dims& v, size_t d, int64_t dflt) { return v.empty() ? dflt : v[d]; }

Geometry geometry(const PoolCase& c) {
  Geometry g;
  size_t S = c.rank();
  for (size_t d = 0; d < S; ++d) {
    int64_t in = c.x[2 + d], k = c.kernel[d], s = at(c.strides, d, 1), dil = at(c.dilations, d, 1);
    int64_t span = (k - 1) * dil + 1, pb = at(c.pads, d, 0), pe = at(c.pads, S + d, 0), out;
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      out = (in + s - 1) / s;
      int64_t total = (out - 1) * s + span - in;
      // Negative padding: ONNX shape inference clamps it to 0; onnxruntime does not.
      int64_t head = c.auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
      if (total < 0 && head != 0) g.refused = true;
      // ceil_mode over a clamped padding: shape inference adds a window past the input.
      if (total < 0 && c.ceil && (in - span) % s != 0) g.refused = true;
      total = std::max<int64_t>(total, 0);
      pb = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else {
      if (c.auto_pad == "VALID") pb = pe = 0;  // shape inference and onnxruntime honour ceil_mode
      int64_t room = in + pb + pe - span;
      out = 1 + (c.ceil ? (room + s - 1) / s : room / s);
    }
    for (int64_t p = 0; p < out; ++p) {  // a window over padding only: undefined
      bool touches = false;
      for (int64_t q = 0; q < k; ++q) touches |= p * s - pb + q * dil >= 0 && p * s - pb + q * dil < in;
      if (!touches) g.refused = true;
    }
    g.pb.push_back(pb);
    g.pe.push_back(pe);
    g.out.push_back(out);
  }
  if (c.indices && c.storage_order == 1 && c.x[0] * c.x[1] > 1) g.refused = true;
  return g;
}

struct PoolResult {
  Tensor y, indices;
};

// Naive pooling: every output point scans its window.
PoolResult pool_reference(const PoolCase& c, const Geometry& g, const Tensor& x, bool max) {
  size_t S = c.rank();
  Dims out = {c.x[0], c.x[1]};
  out.insert(out.end(), g.out.begin(), g.out.end());
  PoolResult r{Tensor(TensorType{c.dtype, out}), Tensor(TensorType{DType::I64, out})};
  Dims o(out.size(), 0);
  for (int64_t i = 0; i < r.y.numel(); ++i, testlib::next_index(out, o)) {
    double best = 0, sum = 0;
    int64_t best_at = -1, inside = 0, in_padded = 0;
    Dims q(S, 0);
    do {
      Dims xi = {o[0], o[1]};
      bool in_x = true, in_pad = true;
      int64_t column_major = 0, plane = 1;
      for (size_t d = 0; d < S; ++d) {
        int64_t pos = o[2 + d] * at(c.strides, d, 1) - g.pb[d] + q[d] * at(c.dilations, d, 1);
        in_x &= pos >= 0 && pos < c.x[2 + d];
        in_pad &= pos >= -g.pb[d] && pos < c.x[2 + d] + g.pe[d];
        xi.push_back(pos);
        column_major += pos * plane;
        plane *= c.x[2 + d];
      }
      in_padded += in_pad;
      if (!in_x) continue;
      int64_t flat = testlib::flat_offset(c.x, xi);
      double v = x.get_as_double(flat);
      ++inside;
      sum += v;
      if (best_at < 0 || v > best) best = v, best_at = c.storage_order ? column_major : flat;
    } while (testlib::next_index(c.kernel, q));
    double y = max ? best : sum / static_cast<double>(c.count_include_pad ? in_padded : inside);
    if (ir::is_float(c.dtype)) r.y.set_f64(i, y);
    else r.y.set_i64(i, static_cast<int64_t>(y));
    r.indices.set_i64(i, best_at);
  }
  return r;
}

void check_pool(const std::string& op, const PoolCase& c, uint64_t seed) {
  SCOPED_TRACE(op + " seed " + std::to_string(seed) + ": " + c.str());
  Geometry g = geometry(c);
  auto model = single_node(op, {{c.dtype, c.x}}, c.indices ? 2 : 1, c.attrs(), c.opset);
  if (g.refused) {
    EXPECT_THROW(import_model(model), UnsupportedError);
    return;
  }
  ir::Graph graph;
  ASSERT_NO_THROW(graph = import_model(model));
  Rng rng(seed);
  double lo = c.dtype == DType::U8 ? 0 : c.dtype == DType::I8 ? -128 : -1;
  double hi = c.dtype == DType::U8 ? 256 : c.dtype == DType::I8 ? 128 : 1;
  Tensor x = testlib::random_tensor({c.dtype, c.x}, rng, lo, hi);
  std::vector<Tensor> got = interp::run(graph, {x});
  PoolResult want = pool_reference(c, g, x, op == "MaxPool");
  ASSERT_EQ(got.size(), c.indices ? 2u : 1u);
  EXPECT_EQ(testlib::compare_tensors(got[0], want.y, 1e-5, 1e-6), "");
  if (c.indices) {
    EXPECT_EQ(testlib::compare_tensors(got[1], want.indices), "");
  }
}

// A random geometry whose window fits the padded input; `features` of the opset decide
// which attributes appear.
PoolCase random_case(Rng& rng, int64_t opset, bool max) {
  PoolCase c;
  c.opset = opset;
  size_t S = static_cast<size_t>(rng.range(1, 4));
  c.x = {rng.range(1, 3), rng.range(1, 4)};
  bool dilated = max && opset >= 10 && rng.coin(0.4);
  for (size_t d = 0; d < S; ++d) {
    c.x.push_back(rng.range(S == 3 ? 2 : 3, S == 3 ? 6 : 9));
    c.kernel.push_back(rng.range(1, std::min<int64_t>(4, c.x.back() + 1)));
    if (dilated) c.dilations.push_back(rng.range(1, 3));
  }
  if (rng.coin(0.7))
    for (size_t d = 0; d < S; ++d) c.strides.push_back(rng.range(1, 4));
  int mode = static_cast<int>(rng.range(0, 5));
  if (mode == 0) c.auto_pad = "VALID";
  if (mode == 1) c.auto_pad = rng.coin() ? "SAME_UPPER" : "SAME_LOWER";
  if (mode >= 3)
    for (size_t d = 0; d < 2 * S; ++d) c.pads.push_back(rng.range(0, c.kernel[d % S] + (rng.coin(0.1) ? 1 : 0)));
  c.ceil = opset >= 10 && rng.coin(0.4);
  c.count_include_pad = !max && opset >= 7 && rng.coin(0.5);
  for (size_t d = 0; d < S; ++d) {  // keep the span within the (padded) input
    int64_t room = c.x[2 + d] + at(c.pads, d, 0) + at(c.pads, S + d, 0);
    while ((c.kernel[d] - 1) * at(c.dilations, d, 1) + 1 > room)
      c.dilations.empty() || c.dilations[d] == 1 ? --c.kernel[d] : --c.dilations[d];
  }
  return c;
}

TEST(PoolFission, MaxPoolMatchesNaiveLoops) {
  const int64_t opsets[] = {1, 8, 10, 11, 12};
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Rng rng(seed * 104729);
    int64_t opset = opsets[seed % 5];
    PoolCase c = random_case(rng, opset, true);
    if (opset >= 12 && rng.coin(0.3)) c.dtype = rng.coin() ? DType::I8 : DType::U8;
    if (opset >= 12 && rng.coin(0.2)) c.dtype = rng.coin() ? DType::F64 : DType::F16;
    c.indices = opset >= 8 && rng.coin(0.5);
    if (c.indices && rng.coin(0.3)) {
      c.storage_order = 1;
      if (rng.coin(0.7)) c.x[0] = c.x[1] = 1;
    }
    check_pool("MaxPool", c, seed);
  }
}

TEST(PoolFission, AveragePoolMatchesNaiveLoops) {
  const int64_t opsets[] = {1, 7, 10, 11};
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Rng rng(seed * 7907);
    int64_t opset = opsets[seed % 4];
    PoolCase c = random_case(rng, opset, false);
    if (rng.coin(0.2)) c.dtype = DType::F64;
    check_pool("AveragePool", c, seed);
  }
}

// ceil_mode: the last window runs past the padded end; count_include_pad counts the padded
// positions (1 here), never the space past them.
TEST(PoolFission, AveragePoolCeilModePastThePaddedEnd) {
  for (bool cip : {false, true}) {
    SCOPED_TRACE(cip);
    ir::Graph g = import_model(single_node("AveragePool", {{DType::F32, {1, 1, 6}}}, 1,
                                           {{"kernel_shape", Dims{3}}, {"strides", Dims{2}},
                                            {"pads", Dims{1, 1}}, {"ceil_mode", int64_t{1}},
                                            {"count_include_pad", int64_t{cip}}}, 11));
    Tensor x(TensorType{DType::F32, {1, 1, 6}});
    for (int64_t i = 0; i < 6; ++i) x.set_f64(i, static_cast<double>(i + 1));
    Tensor y = interp::run(g, {x})[0];
    ASSERT_EQ(y.shape(), (Dims{1, 1, 4}));
    // windows [-1, 2), [1, 4), [3, 6), [5, 8): sums 3, 9, 15, 6
    std::vector<double> want = cip ? std::vector<double>{1, 3, 5, 3} : std::vector<double>{1.5, 3, 5, 6};
    for (int64_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(y.get_f64(i), want[static_cast<size_t>(i)]) << i;
  }
}

void check_global(const std::string& op, DType t, uint64_t seed) {
  Rng rng(seed * 31337);
  Dims shape = {rng.range(1, 3), rng.range(1, 4)};
  int64_t spatial = rng.range(0, 4);
  for (int64_t d = 0; d < spatial; ++d) shape.push_back(rng.range(1, 6));
  SCOPED_TRACE(op + " seed " + std::to_string(seed) + " " + ir::dims_str(shape));
  ir::Graph g = import_model(single_node(op, {{t, shape}}));
  Tensor x = testlib::random_tensor({t, shape}, rng);
  Tensor got = interp::run(g, {x})[0];
  Dims out(shape.size(), 1);
  out[0] = shape[0], out[1] = shape[1];
  Tensor want(TensorType{t, out});
  int64_t plane = x.numel() / (shape[0] * shape[1]);
  for (int64_t nc = 0; nc < shape[0] * shape[1]; ++nc) {
    double acc = op == "GlobalMaxPool" ? -INFINITY : 0;
    for (int64_t i = 0; i < plane; ++i) {
      double v = x.get_as_double(nc * plane + i);
      acc = op == "GlobalMaxPool" ? std::max(acc, v) : acc + v;
    }
    want.set_f64(nc, op == "GlobalMaxPool" ? acc : acc / static_cast<double>(plane));
  }
  EXPECT_EQ(testlib::compare_tensors(got, want, 1e-5, 1e-6), "");
}

TEST(PoolFission, GlobalPoolsMatchNaiveLoops) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    check_global("GlobalAveragePool", seed % 2 ? DType::F32 : DType::F64, seed);
    check_global("GlobalMaxPool", seed % 2 ? DType::F32 : DType::F16, seed);
  }
}

using testlib::error_of;

std::string pool_error(const std::string& op, const Dims& x, Attrs attrs, int64_t opset = 12,
                       DType t = DType::F32, int outputs = 1) {
  return error_of([&] { import_model(single_node(op, {{t, x}}, outputs, std::move(attrs), opset), "p.onnx"); });
}

#define EXPECT_MESSAGE(msg, text) EXPECT_NE((msg).find(text), std::string::npos) << (msg)

TEST(PoolFission, ErrorsNameTheNode) {
  Dims x = {1, 1, 5, 5};
  Attrs k2 = {{"kernel_shape", Dims{2, 2}}};
  EXPECT_EQ(pool_error("MaxPool", x, {}),
            "p.onnx: node 'node' (MaxPool, opset 12): attribute 'kernel_shape' is required");
  EXPECT_MESSAGE(pool_error("MaxPool", x, {{"kernel_shape", Dims{2}}}),
                 "attribute 'kernel_shape' has 1 entries, expected 2");
  EXPECT_MESSAGE(pool_error("MaxPool", x, {{"kernel_shape", Dims{2, 0}}}),
                 "attribute 'kernel_shape' needs integers >= 1");
  // The loader checks these before ONNX's shape inference, which divides by them.
  EXPECT_MESSAGE(pool_error("MaxPool", x, {k2[0], {"strides", Dims{1, -1}}}), "attribute 'strides' needs integers >= 1");
  EXPECT_MESSAGE(pool_error("MaxPool", x, {k2[0], {"pads", Dims{1, 1, 1, -1}}}), "needs values >= 0");
  EXPECT_MESSAGE(pool_error("MaxPool", x, {k2[0], {"pads", Dims{1, 1}}}), "'pads' has 2 entries, expected 4");
  EXPECT_MESSAGE(pool_error("MaxPool", x, {k2[0], {"auto_pad", std::string("SAME")}}),
                 "auto_pad 'SAME' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  EXPECT_MESSAGE(pool_error("MaxPool", x, {k2[0], {"auto_pad", std::string("VALID")}, {"pads", Dims{1, 1, 1, 1}}}),
                 "pads [1,1,1,1] cannot be used with auto_pad=VALID");
  EXPECT_MESSAGE(pool_error("MaxPool", x, {{"kernel_shape", Dims{7, 2}}}),
                 "the window (span 7) is larger than the padded input (5) along spatial dim 0");
  EXPECT_MESSAGE(pool_error("MaxPool", {1, 5}, {{"kernel_shape", Dims{}}}), "needs rank >= 3");
  EXPECT_MESSAGE(pool_error("MaxPool", x, {k2[0], {"ceil_mode", int64_t{1}}}, 8),
                 "attribute 'ceil_mode' is not defined before version 10");
  EXPECT_MESSAGE(pool_error("MaxPool", x, {k2[0], {"dilations", Dims{1, 1}}}, 8),
                 "attribute 'dilations' is not defined before version 10");
  EXPECT_MESSAGE(pool_error("MaxPool", x, {k2[0], {"storage_order", int64_t{1}}}, 1),
                 "attribute 'storage_order' is not defined before version 8");
  EXPECT_MESSAGE(pool_error("MaxPool", x, {k2[0], {"storage_order", int64_t{2}}}, 12, DType::F32, 2),
                 "storage_order 2 is not 0 or 1");
  EXPECT_MESSAGE(pool_error("MaxPool", x, k2, 11, DType::U8), "input 0 has dtype u8; MaxPool-11 allows f16, f32, f64");
  EXPECT_MESSAGE(pool_error("AveragePool", x, {k2[0], {"count_include_pad", int64_t{1}}}, 6),
                 "attribute 'count_include_pad' is not defined before version 7");
  EXPECT_MESSAGE(pool_error("AveragePool", x, {k2[0], {"dilations", Dims{2, 2}}}, 11),
                 "attribute 'dilations' is not defined before version 19");
  EXPECT_MESSAGE(pool_error("GlobalAveragePool", {4}, {}, 12), "needs rank >= 2");
  EXPECT_MESSAGE(pool_error("GlobalMaxPool", {4}, {}, 12), "needs rank >= 2");
  EXPECT_MESSAGE(pool_error("GlobalMaxPool", {1, 2, 3}, {}, 12, DType::BF16), "GlobalMaxPool-1 allows f16, f32, f64");
}

// The window reduction's output type once read p.domain in the argument list that also moved
// p: under left-to-right evaluation (clang) the pooled value had rank 0.
TEST(PoolFission, WindowReductionsHaveThePooledShape) {
  Attrs attrs = {{"kernel_shape", Dims{2, 2}}, {"strides", Dims{2, 1}}};
  for (const char* op : {"MaxPool", "AveragePool"}) {
    ir::Graph g = import_model(single_node(op, {{DType::F32, {2, 3, 6, 5}}}, 1, attrs, 12));
    EXPECT_EQ(g.type(g.outputs()[0]), (TensorType{DType::F32, {2, 3, 3, 4}})) << op;
    for (const ir::Primitive& p : g.nodes())
      for (ir::ValueId v : p.outputs) EXPECT_EQ(g.type(v).shape, p.domain) << op;
  }
}

// libonnx 1.12's shape inference divides by each stride (SIGFPE on 0): the loader checks
// strides before running it.
TEST(PoolFission, ZeroStrideIsAUserErrorNotACrash) {
  EXPECT_MESSAGE(pool_error("MaxPool", {1, 1, 5, 5}, {{"kernel_shape", Dims{2, 2}}, {"strides", Dims{1, 0}}}),
                 "attribute 'strides' needs integers >= 1");
}

TEST(PoolFission, AmbiguousGeometriesAreUnsupported) {
  Dims x = {2, 3, 4, 4};
  auto unsupported = [](const std::string& op, const Dims& shape, Attrs attrs, int outputs = 1) {
    try {
      import_model(single_node(op, {{DType::F32, shape}}, outputs, std::move(attrs), 12), "p.onnx");
    } catch (const UnsupportedError& e) {
      return std::string(e.what());
    }
    return std::string("(not refused)");
  };
  EXPECT_MESSAGE(unsupported("MaxPool", x, {{"kernel_shape", Dims{2, 2}}, {"pads", Dims{2, 0, 0, 0}}}),
                 "p.onnx: node 'node' (MaxPool, opset 12): not supported: pooling window 0 of spatial dim 0 "
                 "covers no input element");
  EXPECT_MESSAGE(unsupported("AveragePool", x, {{"kernel_shape", Dims{1, 1}}, {"strides", Dims{2, 2}},
                                                {"ceil_mode", int64_t{1}}, {"pads", Dims{0, 0, 1, 1}}}),
                 "pooling window 2 of spatial dim 0 covers no input element");
  EXPECT_MESSAGE(unsupported("MaxPool", {1, 1, 6}, {{"kernel_shape", Dims{1}}, {"strides", Dims{3}},
                                                    {"auto_pad", std::string("SAME_UPPER")}}),
                 "auto_pad=SAME_UPPER with a kernel span 1 much smaller than stride 3");
  EXPECT_MESSAGE(unsupported("MaxPool", x, {{"kernel_shape", Dims{2, 2}}, {"storage_order", int64_t{1}}}, 2),
                 "Indices with storage_order=1 for N*C > 1");
}

}  // namespace
}  // namespace orchid
