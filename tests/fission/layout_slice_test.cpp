// Differential tests of Slice, Pad and Gather (rules_layout_slice.cpp) over seeded random
// shapes, attributes and opset versions, against naive references written from ONNX's text
// (Slice) and numpy's semantics (Pad, as ONNX's reference uses numpy.pad); and every error
// message of these rules.
#include "layout_test_util.h"

#include <algorithm>
#include <limits>

namespace orchid::layout_test {
namespace {

using testlib::import_model;

void expect_output(const testlib::OnnxModel& m, const std::vector<Tensor>& in, const Tensor& want) {
  std::vector<Tensor> got = run_model(m, in);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(testlib::compare_tensors(got[0], want, 0, 0), "");
}

// The indices Slice-13's text selects along an axis of size n >= 1: negative bounds count
// from the end, start is clamped into [0, n] (forward) or [0, n-1] (backward), end into
// [0, n] or [-1, n-1]. This is numpy's x[start:end:step] except for a backward slice whose
// start lies below -n: numpy selects nothing there, ONNX's text starts at element 0.
std::vector<int64_t> spec_slice(int64_t n, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = step > 0 ? std::clamp<int64_t>(start, 0, n) : std::clamp<int64_t>(start, 0, n - 1);
  end = step > 0 ? std::clamp<int64_t>(end, 0, n) : std::clamp<int64_t>(end, -1, n - 1);
  std::vector<int64_t> out;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) out.push_back(i);
  return out;
}

int64_t random_bound(Rng& rng, int64_t n) {
  switch (rng.range(0, 6)) {
    case 0: return std::numeric_limits<int64_t>::max();
    case 1: return std::numeric_limits<int64_t>::min();
    case 2: return rng.range(-n - 3, 0);
    default: return rng.range(0, n + 3);
  }
}

TEST(LayoutSliceFission, SliceMatchesReference) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    SCOPED_TRACE(seed_trace("Slice", seed));
    Rng rng(seed);
    static const int64_t kOpsets[] = {1, 10, 11, 13};
    int64_t opset = kOpsets[seed % 4];
    TensorType t{random_dtype(rng), random_shape(rng, 1, 4, 6)};
    auto rank = int64_t(t.shape.size());
    std::vector<int64_t> starts, ends, axes, steps;
    std::vector<std::vector<int64_t>> picks(t.shape.size());
    for (size_t d = 0; d < t.shape.size(); ++d)
      for (int64_t i = 0; i < t.shape[d]; ++i) picks[d].push_back(i);
    bool default_axes = rng.coin(0.3);
    for (int64_t d = 0; d < rank; ++d) {
      if (!default_axes && rng.coin(0.3)) continue;
      int64_t n = t.shape[size_t(d)];
      int64_t step = opset == 1 ? 1 : rng.range(-3, 4);
      if (step == 0) step = 1;
      starts.push_back(random_bound(rng, n));
      ends.push_back(random_bound(rng, n));
      axes.push_back(opset >= 11 && rng.coin(0.5) ? d - rank : d);
      steps.push_back(step);
      picks[size_t(d)] = spec_slice(n, starts.back(), ends.back(), step);
    }
    if (!default_axes) {  // any order of the axes
      for (size_t k = axes.size(); k > 1; --k) {
        size_t j = size_t(rng.range(0, int64_t(k)));
        std::swap(axes[k - 1], axes[j]), std::swap(starts[k - 1], starts[j]);
        std::swap(ends[k - 1], ends[j]), std::swap(steps[k - 1], steps[j]);
      }
    }
    bool default_steps =
        std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s == 1; }) && rng.coin(0.5);
    std::vector<Arg> args = {t};
    Attrs attrs;
    if (opset == 1) {
      attrs = {{"starts", starts}, {"ends", ends}};
      if (!default_axes) attrs.push_back({"axes", axes});
    } else {
      args.push_back(i64s(starts));
      args.push_back(i64s(ends));
      args.push_back(default_axes && default_steps ? Arg{} : Arg{i64s(axes)});
      if (!default_steps) args.push_back(i64s(steps));
    }
    Dims out;
    for (const auto& p : picks) out.push_back(int64_t(p.size()));
    Tensor x = random_data(t, rng);
    Tensor want = gather_ref(x, out, [&](const Dims& i) {
      Dims j;
      for (size_t d = 0; d < i.size(); ++d) j.push_back(picks[d][size_t(i[d])]);
      return j;
    });
    expect_output(node_model("Slice", args, 1, attrs, opset), {x}, want);
  }
}

TEST(LayoutSliceFission, BackwardSliceFromBelowTheStartFollowsTheSpecText) {
  TensorType t{DType::I64, {3}};
  Tensor x = i64s({7, 8, 9});
  expect_output(node_model("Slice", {t, i64s({-10}), i64s({-20}), i64s({0}), i64s({-1})}), {x},
                i64s({7}));
  expect_output(node_model("Slice", {t, i64s({10}), i64s({-20}), i64s({0}), i64s({-2})}), {x},
                i64s({9, 7}));
}

TEST(LayoutSliceFission, SliceWithInt32BoundsAndFullRangeIsIdentity) {
  TensorType t{DType::F32, {3, 4}};
  Tensor s32(TensorType{DType::I32, {1}}), e32(TensorType{DType::I32, {1}});
  s32.set_i64(0, 1);
  e32.set_i64(0, 3);
  Rng rng(1);
  Tensor x = random_data(t, rng);
  expect_output(node_model("Slice", {t, s32, e32}), {x}, gather_ref(x, {2, 4}, [](const Dims& i) {
                  return Dims{i[0] + 1, i[1]};
                }));
  ir::Graph g = import_model(node_model("Slice", {t, i64s({0}), i64s({100})}));
  EXPECT_EQ(g.num_nodes(), 0);  // the identity slice is the input itself
}

// numpy.pad of one axis of size n cropped to [lo, hi) (negative pads) then padded: the
// source index of output index o, or -1 for the constant.
int64_t pad_source(const std::string& mode, int64_t o, int64_t n, int64_t begin, int64_t end) {
  int64_t lo = std::max<int64_t>(0, -begin), hi = n - std::max<int64_t>(0, -end);
  int64_t t = o - std::max<int64_t>(0, begin) + lo;  // index into the input
  if (t >= lo && t < hi) return t;
  if (mode == "constant") return -1;
  if (mode == "edge") return t < lo ? lo : hi - 1;
  if (hi - lo == 1) return lo;
  while (t < lo || t >= hi) t = t < lo ? 2 * lo - t : 2 * (hi - 1) - t;  // bounce off the ends
  return t;
}

TEST(LayoutSliceFission, PadMatchesNumpy) {
  for (uint64_t seed = 1; seed <= 18; ++seed) {
    SCOPED_TRACE(seed_trace("Pad", seed));
    Rng rng(seed);
    static const int64_t kOpsets[] = {1, 2, 11, 13};
    static const char* kModes[] = {"constant", "edge", "reflect"};
    int64_t opset = kOpsets[seed % 4];
    std::string mode = kModes[(seed / 4) % 3];
    TensorType t{opset < 11 ? DType::F32 : random_dtype(rng), random_shape(rng, 1, 3, 5)};
    size_t r = t.shape.size();
    std::vector<int64_t> pads(2 * r);
    for (size_t d = 0; d < r; ++d) {
      int64_t n = t.shape[d];
      pads[d] = rng.range(mode == "constant" ? -n : 1 - n, 2 * n + 2);
      int64_t left = n + std::min<int64_t>(pads[d], 0);  // keep at least one element
      pads[d + r] = rng.range(std::max<int64_t>(1 - left, -n), 2 * n + 2);
      if (mode == "constant" && rng.coin(0.2)) pads[d + r] = -left;  // crop the dim away
    }
    double value = rng.coin(0.5) ? 0 : double(rng.range(-5, 6));
    bool runtime_value = opset >= 11 && mode == "constant" && rng.coin(0.5);
    std::vector<Arg> args = {t};
    std::vector<Tensor> ins = {random_data(t, rng)};
    Attrs attrs = {{"mode", mode}};
    if (opset < 11) attrs.push_back({opset == 1 ? "paddings" : "pads", pads});
    if (opset < 11 && value != 0) attrs.push_back({"value", value});
    if (opset >= 11) args.push_back(i64s(pads));
    if (runtime_value)
      args.push_back(TensorType{t.dtype, {}}), ins.push_back(scalar(t.dtype, value));
    else if (opset >= 11 && value != 0)
      args.push_back(scalar(t.dtype, value));
    Dims out;
    for (size_t d = 0; d < r; ++d) out.push_back(t.shape[d] + pads[d] + pads[d + r]);
    Tensor want(TensorType{t.dtype, out}), fill = scalar(t.dtype, value);
    Dims idx(r, 0);
    for (int64_t i = 0; i < want.numel(); ++i, testlib::next_index(out, idx)) {
      Dims src;
      for (size_t d = 0; d < r; ++d)
        src.push_back(pad_source(mode, idx[d], t.shape[d], pads[d], pads[d + r]));
      if (std::count(src.begin(), src.end(), -1) > 0)
        copy_elem(want, i, fill, 0);
      else
        copy_elem(want, i, ins[0], testlib::flat_offset(t.shape, src));
    }
    expect_output(node_model("Pad", args, 1, attrs, opset), ins, want);
  }
}

TEST(LayoutSliceFission, GatherMatchesReference) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed_trace("Gather", seed));
    Rng rng(seed);
    static const int64_t kOpsets[] = {1, 11, 13};
    int64_t opset = kOpsets[seed % 3];
    TensorType t{random_dtype(rng), random_shape(rng, 1, 3, 4)};
    auto rank = int64_t(t.shape.size());
    int64_t axis = rng.range(-rank, rank);
    size_t a = size_t(axis < 0 ? axis + rank : axis);
    TensorType it{rng.coin(0.5) ? DType::I32 : DType::I64, random_shape(rng, 0, 2, 3)};
    Tensor ind(it);
    int64_t n = t.shape[a];
    for (int64_t k = 0; k < ind.numel(); ++k) ind.set_i64(k, rng.range(-n, n));
    bool constant = seed % 4 == 0;
    std::vector<Arg> args = {t, constant ? Arg{ind} : Arg{it}};
    std::vector<Tensor> ins = {random_data(t, rng)};
    if (!constant) ins.push_back(ind);
    Dims out(t.shape.begin(), t.shape.begin() + int64_t(a));
    out.insert(out.end(), it.shape.begin(), it.shape.end());
    out.insert(out.end(), t.shape.begin() + int64_t(a) + 1, t.shape.end());
    Tensor want = gather_ref(ins[0], out, [&](const Dims& i) {
      Dims at(i.begin() + int64_t(a), i.begin() + int64_t(a + it.shape.size()));
      int64_t k = ind.get_i64(testlib::flat_offset(it.shape, at));
      Dims j(i.begin(), i.begin() + int64_t(a));
      j.push_back(k < 0 ? k + n : k);
      j.insert(j.end(), i.begin() + int64_t(a + it.shape.size()), i.end());
      return j;
    });
    Attrs attrs;
    if (axis != 0 || rng.coin(0.5)) attrs.push_back({"axis", axis});
    expect_output(node_model("Gather", args, 1, attrs, opset), ins, want);
  }
}

TEST(LayoutSliceFission, GatherOfOneConstantIndexIsAPlainSlice) {
  TensorType t{DType::F32, {3, 4}};
  ir::Graph g =
      import_model(node_model("Gather", {t, scalar(DType::I64, -1)}, 1, {{"axis", int64_t{1}}}));
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.nodes()[0].inputs.size(), 1u);  // no indirect load of the index
  Rng rng(2);
  Tensor x = random_data(t, rng);
  EXPECT_EQ(testlib::compare_tensors(interp::run(g, {x})[0],
                                     gather_ref(x, {3},
                                                [](const Dims& i) {
                                                  return Dims{i[0], 3};
                                                }),
                                     0, 0),
            "");
}

TEST(LayoutSliceFission, GatherOutOfRangeRuntimeIndexIsARunError) {
  TensorType t{DType::F32, {3}}, it{DType::I64, {1}};
  ir::Graph g = import_model(node_model("Gather", {t, it}));
  EXPECT_NE(error_of([&] { interp::run(g, {Tensor(t), i64s({3})}); }), "(no error)");
  EXPECT_NE(error_of([&] { interp::run(g, {Tensor(t), i64s({-4})}); }), "(no error)");
}

// A u64 index of 2^63 or more reads as a negative i64, but it is no index counted from the
// end: it lies past every dim.
TEST(LayoutSliceFission, GatherConstantU64IndexOf2To63OrMoreIsOutOfRange) {
  TensorType t{DType::F32, {2, 3}};
  Tensor two_to_63(TensorType{DType::U64, {2}});
  two_to_63.set_i64(1, std::numeric_limits<int64_t>::min());
  expect_error(node_model("Gather", {t, two_to_63}, 1, {{"axis", int64_t{1}}}), "Gather",
               "index 9223372036854775808 (element 1 of input 1) is out of range for axis 1 of size 3");
  Tensor all_ones(TensorType{DType::U64, {}});
  all_ones.set_i64(0, -1);
  expect_error(node_model("Gather", {t, all_ones}, 1, {{"axis", int64_t{1}}}), "Gather",
               "index 18446744073709551615 (element 0 of input 1) is out of range for axis 1 of size 3");
}

TEST(LayoutSliceFission, SliceErrors) {
  TensorType t{DType::F32, {4, 5}};
  expect_error(node_model("Slice", {t, i64s({0}), i64s({1, 2})}), "Slice",
               "starts, ends, axes and steps have different lengths (1, 2, 1, 1)");
  expect_error(node_model("Slice", {t, i64s({0}), i64s({1}), i64s({0}), i64s({0})}), "Slice",
               "step of axis 0 is 0");
  expect_error(node_model("Slice", {t, i64s({0, 0}), i64s({1, 1}), i64s({1, -1})}), "Slice",
               "axes names axis 1 twice");
  expect_error(node_model("Slice", {t, i64s({0}), i64s({1}), i64s({2})}), "Slice",
               "axes entry 2 is out of range for rank 2");
  expect_error(node_model("Slice", {t}, 1, {{"starts", std::vector<int64_t>{0}}}, 1), "Slice",
               "attribute 'ends' is required");
  expect_unsupported(
      node_model("Slice", {t, TensorType{DType::I64, {1}}, i64s({1})}), "Slice",
      "input 1 ('x1') must be a constant (computable at compile time): shapes are static");
}

TEST(LayoutSliceFission, PadErrors) {
  TensorType t{DType::F32, {2, 3}};
  expect_error(node_model("Pad", {t, i64s({1, 1})}), "Pad",
               "pads has 2 entries for rank 2 (needs 4)");
  expect_error(node_model("Pad", {t, i64s({0, -2, 0, -2})}), "Pad",
               "pads [0,-2,0,-2] remove more than the 3 elements of dim 1");
  expect_error(node_model("Pad", {t, i64s({0, -3, 0, 1})}, 1, {{"mode", std::string("edge")}}),
               "Pad", "cannot pad a dim of size 0 (after cropping) in edge mode");
  expect_error(node_model("Pad", {t, i64s({0, 1, 0, 0}), scalar(DType::F64, 1)}), "Pad",
               "constant_value must be one element of the data's dtype, found f64[]");
  expect_unsupported(node_model("Pad", {t, i64s({0, 1, 0, 0})}, 1, {{"mode", std::string("wrap")}}),
                     "Pad", "pad mode 'wrap'");
  expect_error(node_model("Pad", {t}, 1, {}, 2), "Pad", "attribute 'pads' is required");
  expect_error(node_model("Pad", {t}, 1, {}, 1), "Pad", "attribute 'paddings' is required");
}

TEST(LayoutSliceFission, GatherErrors) {
  TensorType t{DType::F32, {2, 3}}, s{DType::F32, {}}, it{DType::I64, {2}};
  expect_error(node_model("Gather", {s, it}), "Gather", "cannot gather from a scalar");
  expect_error(node_model("Gather", {t, it}, 1, {{"axis", int64_t{2}}}), "Gather",
               "axis 2 is out of range for rank 2");
  expect_error(node_model("Gather", {t, i64s({0, 3})}, 1, {{"axis", int64_t{1}}}), "Gather",
               "index 3 (element 1 of input 1) is out of range for axis 1 of size 3");
  expect_unsupported(node_model("Gather", {t, TensorType{DType::F32, {2}}}), "Gather",
                     "input 1 of dtype f32 (supported: integral)");
}

}  // namespace
}  // namespace orchid::layout_test
