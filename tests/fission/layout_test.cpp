// Differential tests of the reshaping and rearranging fission rules (rules_layout.cpp):
// Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Concat, Split, Expand and Tile, each over
// seeded random shapes, dtypes, attributes and opset versions, against naive references;
// contiguous reshapes must import as views; every error message of the rules.
#include "layout_test_util.h"

#include <algorithm>
#include <numeric>

#include "fission/fission.h"
#include "fission/rule_context.h"

namespace orchid::layout_test {
namespace {

using testlib::import_model;

// Runs the model and compares output k with want[k]; the trace names op and seed.
void expect_outputs(const testlib::OnnxModel& m, const std::vector<Tensor>& in,
                    const std::vector<Tensor>& want) {
  std::vector<Tensor> got = run_model(m, in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_EQ(testlib::compare_tensors(got[k], want[k], 0, 0), "") << "output " << k;
}

// The same data in another shape.
Tensor reshaped(const Tensor& t, const Dims& shape) {
  return Tensor(TensorType{t.dtype(), shape}, t.bytes());
}

// Every primitive of g is a view.
bool only_views(const ir::Graph& g) { return count_ops(g, ir::PrimOp::View) == g.num_nodes(); }

TEST(LayoutFission, TransposeMatchesReference) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed_trace("Transpose", seed));
    Rng rng(seed);
    TensorType t{random_dtype(rng), random_shape(rng, 0, 4)};
    for (auto& d : t.shape)
      if (rng.coin(0.3)) d = 1;
    std::vector<int64_t> perm(t.shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    for (size_t k = perm.size(); k > 1; --k)
      std::swap(perm[k - 1], perm[static_cast<size_t>(rng.range(0, int64_t(k)))]);
    bool by_default = rng.coin(0.25);
    if (by_default) std::iota(perm.rbegin(), perm.rend(), 0);  // the default reverses the dims
    Attrs attrs;
    if (!by_default) attrs.push_back({"perm", perm});
    Dims out;
    for (int64_t p : perm) out.push_back(t.shape[size_t(p)]);
    Tensor x = random_data(t, rng);
    Tensor want = gather_ref(x, out, [&](const Dims& i) {
      Dims src(i.size());
      for (size_t k = 0; k < i.size(); ++k) src[size_t(perm[k])] = i[k];
      return src;
    });
    expect_outputs(node_model("Transpose", {t}, 1, attrs, seed % 2 ? 13 : 1), {x}, {want});
  }
}

TEST(LayoutFission, TransposeOfUnitDimsIsAView) {
  TensorType t{DType::F32, {1, 6, 1, 5}};
  ir::Graph g =
      import_model(node_model("Transpose", {t}, 1, {{"perm", std::vector<int64_t>{1, 0, 3, 2}}}));
  EXPECT_TRUE(only_views(g));
  ir::Graph h =
      import_model(node_model("Transpose", {t}, 1, {{"perm", std::vector<int64_t>{3, 1, 0, 2}}}));
  EXPECT_EQ(count_ops(h, ir::PrimOp::Layout), 1);
}

// A random target for Reshape of `numel` elements: a factorisation with 0 (copy) and -1 entries.
std::vector<int64_t> random_target(Rng& rng, const Dims& in, bool allowzero, Dims* out) {
  int64_t left = ir::numel(in);
  out->clear();
  while (left > 1 || out->empty() || rng.coin(0.2)) {
    int64_t f = 1;
    for (int64_t d = 2; d <= left; ++d)
      if (left % d == 0 && rng.coin(0.5)) {
        f = d;
        break;
      }
    if (left > 1 && f == 1) f = left;
    out->push_back(f);
    left /= f;
    if (out->size() > 5) break;
  }
  std::vector<int64_t> want(out->begin(), out->end());
  size_t inferred = want.size();
  if (rng.coin(0.6)) inferred = size_t(rng.range(0, int64_t(want.size())));
  for (size_t k = 0; k < want.size(); ++k) {
    if (k == inferred)
      want[k] = -1;
    else if (!allowzero && k < in.size() && in[k] == want[k] && rng.coin(0.5))
      want[k] = 0;
  }
  return want;
}

TEST(LayoutFission, ReshapeIsAViewWithZeroAndInferredDims) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(seed_trace("Reshape", seed));
    Rng rng(seed);
    TensorType t{random_dtype(rng), random_shape(rng, 0, 4)};
    static const int64_t kOpsets[] = {4, 5, 13, 14};
    int64_t opset = kOpsets[seed % 4];
    bool allowzero = opset >= 14 && rng.coin(0.5);
    Dims out;
    std::vector<int64_t> want = random_target(rng, t.shape, allowzero, &out);
    Attrs attrs;
    std::vector<Arg> args = {t};
    if (opset < 5)
      attrs.push_back({"shape", want});
    else
      args.push_back(i64s(want));
    if (allowzero) attrs.push_back({"allowzero", int64_t{1}});
    testlib::OnnxModel m = node_model("Reshape", args, 1, attrs, opset);
    EXPECT_TRUE(only_views(import_model(m)));
    Tensor x = random_data(t, rng);
    expect_outputs(m, {x}, {reshaped(x, out)});
  }
}

TEST(LayoutFission, ReshapeAllowzeroKeepsZeroDims) {
  TensorType t{DType::F32, {0, 3}};
  Tensor x(t);
  expect_outputs(node_model("Reshape", {t, i64s({3, 0})}, 1, {{"allowzero", int64_t{1}}}, 14), {x},
                 {Tensor(TensorType{DType::F32, {3, 0}})});
}

TEST(LayoutFission, FlattenIsAView) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed_trace("Flatten", seed));
    Rng rng(seed);
    TensorType t{random_dtype(rng), random_shape(rng, 1, 4)};
    static const int64_t kOpsets[] = {1, 9, 11, 13};
    int64_t opset = kOpsets[seed % 4];
    auto rank = int64_t(t.shape.size());
    int64_t axis = rng.range(opset >= 11 ? -rank : 0, rank + 1);
    int64_t a = axis < 0 ? axis + rank : axis;
    Dims out = {1, 1};
    for (int64_t d = 0; d < rank; ++d) out[d < a ? 0 : 1] *= t.shape[size_t(d)];
    Attrs attrs;
    if (axis != 1 || rng.coin(0.5)) attrs.push_back({"axis", axis});
    testlib::OnnxModel m = node_model("Flatten", {t}, 1, attrs, opset);
    EXPECT_TRUE(only_views(import_model(m)));
    Tensor x = random_data(t, rng);
    expect_outputs(m, {x}, {reshaped(x, out)});
  }
}

TEST(LayoutFission, SqueezeAndUnsqueezeAreViews) {
  for (uint64_t seed = 1; seed <= 9; ++seed) {
    SCOPED_TRACE(seed_trace("Squeeze/Unsqueeze", seed));
    Rng rng(seed);
    static const int64_t kOpsets[] = {1, 11, 13};
    int64_t opset = kOpsets[seed % 3];
    TensorType t{random_dtype(rng), random_shape(rng, 1, 5, 3)};
    std::vector<int64_t> axes;
    Dims squeezed;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      bool pick = t.shape[d] == 1 && rng.coin(0.6);
      if (pick)
        axes.push_back(rng.coin(0.5) && opset >= 11 ? int64_t(d) - int64_t(t.shape.size())
                                                    : int64_t(d));
      else
        squeezed.push_back(t.shape[d]);
    }
    bool all = axes.empty();  // no axes: every dim of size 1 goes
    if (all) squeezed.erase(std::remove(squeezed.begin(), squeezed.end(), 1), squeezed.end());
    std::vector<Arg> args = {t};
    Attrs attrs;
    if (!all && opset >= 13) args.push_back(i64s(axes));
    if (!all && opset < 13) attrs.push_back({"axes", axes});
    testlib::OnnxModel m = node_model("Squeeze", args, 1, attrs, opset);
    EXPECT_TRUE(only_views(import_model(m)));
    Tensor x = random_data(t, rng);
    expect_outputs(m, {x}, {reshaped(x, squeezed)});
    // Unsqueeze at random output positions.
    size_t extra = size_t(rng.range(1, 3)), rank = t.shape.size() + extra;
    std::vector<int64_t> ins, perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    for (size_t k = 0; k < extra; ++k)
      std::swap(perm[k], perm[size_t(rng.range(int64_t(k), int64_t(rank)))]);
    std::vector<bool> inserted(rank, false);
    for (size_t k = 0; k < extra; ++k) {
      inserted[size_t(perm[k])] = true;
      ins.push_back(opset >= 11 && rng.coin(0.5) ? perm[k] - int64_t(rank) : perm[k]);
    }
    Dims out;
    for (size_t d = 0, j = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : t.shape[j++]);
    testlib::OnnxModel u = opset >= 13 ? node_model("Unsqueeze", {t, i64s(ins)}, 1, {}, opset)
                                       : node_model("Unsqueeze", {t}, 1, {{"axes", ins}}, opset);
    EXPECT_TRUE(only_views(import_model(u)));
    expect_outputs(u, {x}, {reshaped(x, out)});
  }
}

TEST(LayoutFission, ConcatMatchesReference) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed_trace("Concat", seed));
    Rng rng(seed);
    static const int64_t kOpsets[] = {1, 4, 11, 13};
    int64_t opset = kOpsets[seed % 4];
    DType dt = random_dtype(rng);
    Dims base = random_shape(rng, 1, 4);
    auto rank = int64_t(base.size());
    int64_t axis = opset == 1 && rng.coin(0.5) ? 1 : rng.range(opset >= 11 ? -rank : 0, rank);
    if (opset == 1 && rank < 2) axis = 0;
    size_t a = size_t(axis < 0 ? axis + rank : axis);
    std::vector<Arg> args;
    std::vector<Tensor> ins;
    std::vector<int64_t> starts;
    Dims out = base;
    out[a] = 0;
    for (int64_t k = 0, n = rng.range(1, 5); k < n; ++k) {
      Dims s = base;
      s[a] = rng.range(0, 4);
      starts.push_back(out[a]);
      out[a] += s[a];
      args.push_back(TensorType{dt, s});
      ins.push_back(random_data({dt, s}, rng));
    }
    Attrs attrs;
    if (!(opset == 1 && axis == 1)) attrs.push_back({"axis", axis});
    Tensor want(TensorType{dt, out});
    Dims idx(out.size(), 0);
    for (int64_t i = 0; i < want.numel(); ++i, testlib::next_index(out, idx)) {
      size_t k = ins.size() - 1;
      while (idx[a] < starts[k]) --k;
      Dims src = idx;
      src[a] -= starts[k];
      copy_elem(want, i, ins[k], testlib::flat_offset(ins[k].shape(), src));
    }
    expect_outputs(node_model("Concat", args, 1, attrs, opset), ins, {want});
  }
}

TEST(LayoutFission, ConcatOfTheSameInputTwice) {
  testlib::OnnxModel m =
      node_model("Concat", {TensorType{DType::I32, {2, 2}}}, 1, {{"axis", int64_t{1}}});
  m.nodes[0].inputs = {"x0", "x0"};
  Tensor x(TensorType{DType::I32, {2, 2}});
  for (int64_t k = 0; k < 4; ++k) x.set_i64(k, k + 1);
  Tensor want(TensorType{DType::I32, {2, 4}});
  for (int64_t k = 0; k < 8; ++k) want.set_i64(k, (k / 4) * 2 + k % 2 + 1);
  expect_outputs(m, {x}, {want});
}

TEST(LayoutFission, SplitMatchesReference) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(seed_trace("Split", seed));
    Rng rng(seed);
    static const int64_t kOpsets[] = {1, 2, 11, 13, 1};
    int64_t opset = kOpsets[seed % 5];
    TensorType t{random_dtype(rng), random_shape(rng, 1, 3)};
    auto rank = int64_t(t.shape.size());
    int64_t axis = rng.range(opset >= 11 ? -rank : 0, rank);
    size_t a = size_t(axis < 0 ? axis + rank : axis);
    std::vector<int64_t> sizes;
    bool equal = rng.coin(0.4);
    int64_t parts = rng.range(1, 4);
    if (equal) {
      t.shape[a] = parts * rng.range(1, 3);
      sizes.assign(size_t(parts), t.shape[a] / parts);
    } else {
      t.shape[a] = 0;
      for (int64_t k = 0; k < parts; ++k)
        sizes.push_back(rng.range(0, 4)), t.shape[a] += sizes.back();
    }
    std::vector<Arg> args = {t};
    Attrs attrs = {{"axis", axis}};
    bool as_input = opset >= 13 || (opset == 1 && seed % 2 == 0);
    if (!equal && as_input) {
      Tensor s = i64s(sizes);
      if (opset == 1) {  // Split-1 takes the sizes as a tensor of the data's (float) type
        s = Tensor(TensorType{DType::F32, {parts}});
        for (int64_t k = 0; k < parts; ++k) s.set_f64(k, double(sizes[size_t(k)]));
      }
      args.push_back(s);
    }
    if (!equal && !as_input) attrs.push_back({"split", sizes});
    Tensor x = random_data(t, rng);
    std::vector<Tensor> want;
    int64_t off = 0;
    for (int64_t s : sizes) {
      Dims shape = t.shape;
      shape[a] = s;
      want.push_back(gather_ref(x, shape, [&](const Dims& i) {
        Dims j = i;
        j[a] += off;
        return j;
      }));
      off += s;
    }
    expect_outputs(node_model("Split", args, int(parts), attrs, opset), {x}, want);
  }
}

TEST(LayoutFission, ExpandBroadcastsBothWays) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed_trace("Expand", seed));
    Rng rng(seed);
    Dims out = random_shape(rng, 1, 4);
    Dims in(out.end() - rng.range(0, int64_t(out.size()) + 1), out.end());
    for (auto& d : in)
      if (rng.coin(0.5)) d = 1;
    std::vector<int64_t> shape(out.begin(), out.end());
    for (size_t k = 0; k < shape.size(); ++k)  // a 1 in `shape` keeps the input's dim
      if (k + in.size() >= shape.size() && rng.coin(0.3))
        shape[k] = 1, out[k] = in[k + in.size() - shape.size()];
    if (rng.coin(0.3))
      shape.erase(shape.begin(), shape.begin() + int64_t(shape.size() - in.size()));
    if (shape.size() < out.size())
      out.erase(out.begin(), out.begin() + int64_t(out.size() - in.size()));
    TensorType t{random_dtype(rng), in};
    Tensor x = random_data(t, rng);
    Tensor want = gather_ref(x, out, [&](const Dims& i) {
      Dims j;
      for (size_t k = 0; k < in.size(); ++k)
        j.push_back(in[k] == 1 ? 0 : i[k + out.size() - in.size()]);
      return j;
    });
    expect_outputs(node_model("Expand", {t, i64s(shape)}, 1, {}, seed % 2 ? 8 : 13), {x}, {want});
  }
}

TEST(LayoutFission, TileMatchesReference) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed_trace("Tile", seed));
    Rng rng(seed);
    static const int64_t kOpsets[] = {1, 6, 13};
    int64_t opset = kOpsets[seed % 3];
    TensorType t{random_dtype(rng), random_shape(rng, 1, 3, 3)};
    std::vector<int64_t> reps(t.shape.size(), 1);
    std::vector<Arg> args = {t};
    if (opset == 1) {
      size_t axis = size_t(rng.range(0, int64_t(reps.size())));
      reps[axis] = rng.range(0, 4);
      args.push_back(scalar(DType::F32, double(reps[axis])));
      args.push_back(scalar(DType::F32, double(axis)));
    } else {
      for (auto& r : reps) r = rng.range(0, 4);
      args.push_back(i64s(reps));
    }
    Dims out;
    for (size_t d = 0; d < reps.size(); ++d) out.push_back(t.shape[d] * reps[d]);
    Tensor x = random_data(t, rng);
    Tensor want = gather_ref(x, out, [&](const Dims& i) {
      Dims j;
      for (size_t d = 0; d < i.size(); ++d) j.push_back(i[d] % t.shape[d]);
      return j;
    });
    expect_outputs(node_model("Tile", args, 1, {}, opset), {x}, {want});
  }
}

TEST(LayoutFission, TileOfUnitDimsIsABroadcast) {
  TensorType t{DType::F32, {1, 4, 1}};
  ir::Graph g = import_model(node_model("Tile", {t, i64s({3, 1, 2})}));
  EXPECT_EQ(count_ops(g, ir::PrimOp::Broadcast), 1);
  EXPECT_EQ(g.num_nodes(), 1);
}

TEST(LayoutFission, ReshapeAndTransposeErrors) {
  TensorType t{DType::F32, {2, 3}};
  auto reshape = [&](std::vector<int64_t> s, Attrs a = {}) {
    return node_model("Reshape", {t, i64s(s)}, 1, a);
  };
  expect_error(reshape({1, 1, 0}), "Reshape",
               "shape entry 2 is 0 (copy the input dim) but the input has rank 2");
  expect_error(reshape({-1, -1}), "Reshape", "shape [-1,-1] has more than one -1");
  expect_error(reshape({-2, 3}), "Reshape", "shape [-2,3] has an invalid entry -2");
  expect_error(reshape({4, -1}), "Reshape", "cannot infer the -1 of shape [4,-1] for input [2,3]");
  expect_error(reshape({5}), "Reshape", "cannot reshape [2,3] (6 elements) to [5]");
  expect_error(reshape({0, -1}, {{"allowzero", int64_t{1}}}), "Reshape",
               "shape [0,-1] has both 0 and -1 with allowzero=1");
  expect_error(node_model("Reshape", {t}, 1, {}, 4), "Reshape", "attribute 'shape' is required");
  expect_error(node_model("Reshape", {t}), "Reshape", "has 1 inputs, the operator takes 2");
  expect_unsupported(
      node_model("Reshape", {t, TensorType{DType::I64, {2}}}), "Reshape",
      "input 1 ('x1') must be a constant (computable at compile time): shapes are static");
  expect_error(node_model("Transpose", {t}, 1, {{"perm", std::vector<int64_t>{0, 0}}}), "Transpose",
               "perm [0,0] is not a permutation of the 2 dims");
  expect_error(node_model("Transpose", {t}, 1, {{"perm", std::vector<int64_t>{0}}}), "Transpose",
               "perm [0] is not a permutation of the 2 dims");
  expect_error(node_model("Flatten", {t}, 1, {{"axis", int64_t{3}}}), "Flatten",
               "axis 3 is out of range for rank 2");
  expect_error(node_model("Flatten", {t}, 1, {{"axis", int64_t{-1}}}, 9), "Flatten",
               "axis -1 is out of range for rank 2");
}

TEST(LayoutFission, SqueezeAndUnsqueezeErrors) {
  TensorType t{DType::F32, {2, 1}};
  expect_error(node_model("Squeeze", {t, i64s({0})}), "Squeeze", "cannot squeeze axis 0 of size 2");
  expect_error(node_model("Squeeze", {t, i64s({2})}), "Squeeze",
               "axes entry 2 is out of range for rank 2");
  expect_error(node_model("Squeeze", {t, i64s({1, -1})}), "Squeeze", "axes names axis 1 twice");
  Tensor none(TensorType{DType::I64, {0}});
  expect_unsupported(
      node_model("Squeeze", {t, none}), "Squeeze",
      "an empty axes input (ONNX does not say whether it squeezes all dims of size 1 or none)");
  expect_error(node_model("Unsqueeze", {t}, 1, {}, 11), "Unsqueeze",
               "attribute 'axes' is required");
  expect_error(node_model("Unsqueeze", {t, i64s({3})}), "Unsqueeze",
               "axes entry 3 is out of range for rank 3");
}

TEST(LayoutFission, ConcatAndSplitErrors) {
  TensorType a{DType::F32, {2, 3}}, b{DType::F32, {3, 3}}, c{DType::I32, {2, 3}},
      r{DType::F32, {6}};
  auto concat = [](std::vector<Arg> args, int64_t axis) {
    return node_model("Concat", args, 1, {{"axis", axis}});
  };
  expect_error(concat({a, b}, 1), "Concat",
               "input 1 [3,3] and input 0 [2,3] differ outside axis 1");
  expect_error(concat({a, c}, 0), "Concat", "input 1 (i32[2,3]) does not match input 0 (f32[2,3])");
  expect_error(concat({a, r}, 0), "Concat", "input 1 (f32[6]) does not match input 0 (f32[2,3])");
  expect_error(concat({a}, 2), "Concat", "axis 2 is out of range for rank 2");
  expect_error(concat({}, 0), "Concat", "has 0 inputs, the operator takes at least 1");
  expect_error(node_model("Concat", {a, b}, 1, {}, 4), "Concat", "attribute 'axis' is required");
  auto split = [&](int outputs, Attrs attrs, std::vector<Arg> extra = {}, int64_t opset = 17) {
    std::vector<Arg> args = {TensorType{DType::F32, {5, 2}}};
    args.insert(args.end(), extra.begin(), extra.end());
    return node_model("Split", args, outputs, attrs, opset);
  };
  expect_error(split(2, {}), "Split", "dim 5 does not split into 2 equal parts");
  expect_error(split(2, {}, {i64s({5})}), "Split", "split has 1 entries for 2 outputs");
  expect_error(split(2, {}, {i64s({6, -1})}), "Split", "split has a negative entry -1");
  expect_error(split(2, {{"split", std::vector<int64_t>{2, 2}}}, {}, 11), "Split",
               "split sizes sum to 4, the dim is 5");
  expect_error(split(1, {{"axis", int64_t{-3}}}), "Split", "axis -3 is out of range for rank 2");
}

TEST(LayoutFission, ExpandAndTileErrors) {
  TensorType t{DType::F32, {2, 3}};
  expect_error(node_model("Expand", {t, i64s({4, 3})}), "Expand",
               "shapes do not broadcast: [2,3] and [4,3]");
  expect_error(node_model("Tile", {t, i64s({2})}), "Tile", "repeats [2] do not match rank 2");
  expect_error(node_model("Tile", {t, i64s({2, -1})}), "Tile", "repeats has a negative entry -1");
  Tensor two(TensorType{DType::F32, {2}});
  expect_error(node_model("Tile", {t, two, scalar(DType::F32, 0)}, 1, {}, 1), "Tile",
               "tiles and axis must be scalars");
  expect_error(node_model("Tile", {t, scalar(DType::F32, 2), scalar(DType::F32, 2)}, 1, {}, 1),
               "Tile", "axis 2 is out of range for rank 2");
}

// A Split without outputs cannot pass the loader (see below), so the rule's own check is
// reached through an OpGraph built by hand.
TEST(LayoutFission, SplitWithoutOutputsIsAUserError) {
  frontend::OpGraph g;
  g.path = "e.onnx";
  g.opset = 17;
  g.inputs = {{"x", {DType::F32, {4}}}};
  g.nodes.push_back({"node", "Split", "", 17, 13, {"x"}, {}, {}, {}});
  EXPECT_EQ(error_of([&] { fission::fission(g); }),
            "e.onnx: node 'node' (Split, opset 17): has no outputs");
}

// const_ints(k) of an input the node does not have is a malformed node.
TEST(LayoutFission, ConstIntsOfAMissingInputIsAUserError) {
  frontend::OpGraph model;
  model.path = "e.onnx";
  frontend::OpNode node{"node", "Reshape", "", 17, 14, {"x"}, {"y"}, {}, {}};
  ir::Graph g;
  ir::ValueId x = g.add_input("x", {DType::F32, {2}});
  fission::RuleContext ctx(model, node, g, {x});
  EXPECT_EQ(error_of([&] { ctx.const_ints(1); }),
            "e.onnx: node 'node' (Reshape, opset 17): input 1 is required");
}

// A Split without outputs is malformed: the loader checks each node against its schema before
// ONNX's shape inference (which divides by the number of outputs) runs.
TEST(LayoutFission, SplitWithoutOutputsDoesNotCrashTheLoader) {
  EXPECT_NE(error_of([] {
              import_model(node_model("Split", {TensorType{DType::F32, {4}}}, 0));
            }),
            "(no error)");
}

}  // namespace
}  // namespace orchid::layout_test
