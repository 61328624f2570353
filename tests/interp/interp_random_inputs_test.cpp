// random_inputs: determinism, value ranges, and index inputs drawn inside the indexed axis.
#include "interp/random_inputs.h"

#include <set>

#include "interp_test_util.h"

namespace orchid::interp::test {
namespace {

Graph mixed_inputs() {
  Graph g;
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I8,
                  DType::U8, DType::U64, DType::Bool})
    g.add_input(std::string(dtype_name(t)), {t, {1000}});
  return g;
}

TEST(RandomInputs, SameSeedSameTensorsOtherSeedOthers) {
  Graph g = mixed_inputs();
  auto a = random_inputs(g, 42), b = random_inputs(g, 42), c = random_inputs(g, 43);
  ASSERT_EQ(a.size(), 9u);
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k], b[k]) << k;
    EXPECT_NE(a[k], c[k]) << k;
    EXPECT_EQ(a[k].type(), g.type(g.inputs()[k]));
  }
}

TEST(RandomInputs, EachInputHasItsOwnStream) {
  Graph one;
  one.add_input("a", {DType::F32, {50}});
  Graph two;
  two.add_input("a", {DType::F32, {50}});
  two.add_input("b", {DType::F32, {70}});
  auto in = random_inputs(two, 5);
  EXPECT_EQ(random_inputs(one, 5)[0], in[0]);  // adding an input leaves the others alone
  std::vector<std::byte> b_prefix(in[1].bytes().begin(), in[1].bytes().begin() + 200);
  EXPECT_NE(in[0].bytes(), b_prefix);  // and inputs do not share a stream
}

TEST(RandomInputs, ValueRanges) {
  Graph g = mixed_inputs();
  auto in = random_inputs(g, 7);
  for (const Tensor& t : in) {
    std::set<int64_t> seen;
    for (int64_t k = 0; k < t.numel(); ++k) {
      switch (dtype_class(t.dtype())) {
        case DTypeClass::Float:
          ASSERT_GE(t.get_f64(k), -1.0);
          ASSERT_LE(t.get_f64(k), 1.0);  // [-1, 1) may round up to 1 in a narrow dtype
          break;
        case DTypeClass::Signed:
          ASSERT_GE(t.get_i64(k), -8);
          ASSERT_LT(t.get_i64(k), 8);
          seen.insert(t.get_i64(k));
          break;
        case DTypeClass::Unsigned:
          ASSERT_GE(t.get_i64(k), 0);
          ASSERT_LT(t.get_i64(k), 8);
          seen.insert(t.get_i64(k));
          break;
        case DTypeClass::Bool:
          ASSERT_TRUE(t.get_i64(k) == 0 || t.get_i64(k) == 1);
          seen.insert(t.get_i64(k));
          break;
      }
    }
    size_t want = 0;  // every value of the range is drawn from 1000
    if (dtype_class(t.dtype()) == DTypeClass::Signed) want = 16;
    if (dtype_class(t.dtype()) == DTypeClass::Unsigned) want = 8;
    if (dtype_class(t.dtype()) == DTypeClass::Bool) want = 2;
    EXPECT_EQ(seen.size(), want) << dtype_name(t.dtype());
  }
}

// x: f32[rows, 3]; y[i0, i1] = x[cast<i64>(idx[i0]) , i1] — optionally with the index cast
// in a node of its own, and optionally also indexing a second table of `rows2` rows.
Graph gather(int64_t rows, bool cast_node, int64_t rows2 = 0) {
  Graph g;
  ValueId x = g.add_input("x", {DType::F32, {rows, 3}});
  ValueId idx = g.add_input("idx", {DType::I32, {2000}});
  ValueId index = idx;
  DType index_t = DType::I32;
  if (cast_node) {
    Primitive c = prim(PrimOp::Elementwise, {cast(DType::I64, load(0, DType::I32, {dvar(0)}))}, {2000});
    c.inputs = {idx};
    index = g.node(g.add_node(c, {{DType::I64, {2000}}}, {"idx64"})).outputs[0];
    index_t = DType::I64;
  }
  Expr i = load(1, index_t, {dvar(0)});
  if (index_t != DType::I64) i = cast(DType::I64, i);
  Primitive p = prim(PrimOp::Layout, {load(0, DType::F32, {i, dvar(1)})}, {2000, 3});
  p.inputs = {x, index};
  std::vector<ValueId> outs = {g.node(g.add_node(p, {{DType::F32, {2000, 3}}}, {"y"})).outputs[0]};
  if (rows2 > 0) {
    ValueId z = g.add_input("z", {DType::F32, {rows2}});
    Primitive q = prim(PrimOp::Layout, {load(0, DType::F32, {i})}, {2000});
    q.inputs = {z, index};
    outs.push_back(g.node(g.add_node(q, {{DType::F32, {2000}}}, {"w"})).outputs[0]);
  }
  g.set_outputs(outs);
  return g;
}

void expect_indices_within(const Tensor& t, int64_t extent) {
  std::set<int64_t> seen;
  for (int64_t k = 0; k < t.numel(); ++k) {
    ASSERT_GE(t.get_i64(k), 0);
    ASSERT_LT(t.get_i64(k), extent);
    seen.insert(t.get_i64(k));
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), extent);  // the whole range is drawn
}

TEST(RandomInputs, GatherIndicesLieInTheIndexedAxis) {
  Graph g = gather(37, false);
  auto in = random_inputs(g, 1);
  expect_indices_within(in[1], 37);
  EXPECT_NO_THROW(run(g, in));
}

TEST(RandomInputs, IndicesThroughACastNode) {
  Graph g = gather(11, true);
  auto in = random_inputs(g, 2);
  expect_indices_within(in[1], 11);
  EXPECT_NO_THROW(run(g, in));
}

TEST(RandomInputs, SmallestExtentWins) {
  Graph g = gather(50, false, 6);
  auto in = random_inputs(g, 3);
  expect_indices_within(in[1], 6);
  EXPECT_NO_THROW(run(g, in));
}

}  // namespace
}  // namespace orchid::interp::test
