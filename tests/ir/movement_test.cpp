// Data movement in the IR (ir/movement.h): which layout primitives are permutations, and the
// strides of permuted and reshaped tensors, checked against element addresses enumerated
// directly.
#include <gtest/gtest.h>

#include "ir/movement.h"
#include "ir/parser.h"
#include "support/random.h"

namespace orchid::ir {
namespace {

TEST(Movement, PermutationsAreRecognised) {
  Graph g = parse_graph(R"(graph @g {
    input %x : f32[2,3,4]
    %p : f32[3,4,2] = layout(%x) { %x[i2, i0, i1] }
    %s : f32[2,3,2] = layout(%x) { %x[i0, i1, add(i2, 2)] }
    %d : f32[2,3,3] = layout(%x) { %x[i0, i1, i1] }
    %v : f32[6,4] = view(%x)
    output %p, %s, %d, %v
  })");
  EXPECT_EQ(permutation_of(g, NodeId(0)), (std::vector<int32_t>{2, 0, 1}));
  EXPECT_FALSE(permutation_of(g, NodeId(1)));  // a slice
  EXPECT_FALSE(permutation_of(g, NodeId(2)));  // a diagonal
  EXPECT_TRUE(is_movement(g, NodeId(3)));
  EXPECT_FALSE(is_movement(g, NodeId(1)));
  EXPECT_EQ(permuted_strides({12, 4, 1}, {2, 0, 1}), (Dims{4, 1, 12}));
}

// A random reshape of `count` elements: the count split into random factors (at most six),
// with a dim of 1 after a factor at `unit_chance`.
Dims random_reshape(int64_t count, Rng& rng, double unit_chance) {
  Dims to;
  while (count > 1 && to.size() < 5) {
    int64_t f = rng.range(1, count + 1);
    if (count % f != 0) continue;
    to.push_back(f);
    count /= f;
    if (unit_chance > 0 && rng.coin(unit_chance)) to.push_back(1);
  }
  to.push_back(count);
  return to;
}

// The offset of every element of `shape` at `strides`, in row-major order of the elements.
std::vector<int64_t> offsets(const Dims& shape, const Dims& strides) {
  std::vector<int64_t> out;
  Dims idx(shape.size(), 0);
  for (int64_t n = 0; n < numel(shape); ++n) {
    int64_t off = 0;
    for (size_t k = 0; k < shape.size(); ++k) off += idx[k] * strides[k];
    out.push_back(off);
    for (size_t k = shape.size(); k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

// Random permuted tensors reshaped at random: where strides exist, they address exactly the
// elements the row-major order of the reshape says; where they do not, the permuted tensor
// is not contiguous over some merged group.
TEST(Movement, ReshapedStridesAddressTheSameElements) {
  Rng rng(5);
  int found = 0, refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    size_t r = static_cast<size_t>(rng.range(1, 5));
    Dims base;
    for (size_t k = 0; k < r; ++k) base.push_back(rng.range(1, 5));
    std::vector<int32_t> q(r);
    for (size_t k = 0; k < r; ++k) q[k] = static_cast<int32_t>(k);
    for (size_t k = r; k > 1; --k) std::swap(q[k - 1], q[static_cast<size_t>(rng.range(0, static_cast<int64_t>(k)))]);
    Dims shape(r), strides = permuted_strides(row_major_strides(base), q);
    for (size_t k = 0; k < r; ++k) shape[static_cast<size_t>(q[k])] = base[k];
    Dims to = random_reshape(numel(shape), rng, 0.2);
    std::optional<Dims> st = reshaped_strides(shape, strides, to);
    if (!st) {
      ++refused;
      continue;
    }
    ++found;
    EXPECT_EQ(offsets(to, *st), offsets(shape, strides)) << dims_str(shape) << " -> " << dims_str(to);
  }
  EXPECT_GE(found, 150);
  EXPECT_GE(refused, 20);
  // Leading dims of 1 are outermost (oneDNN knows channels-last by its strides).
  EXPECT_EQ(reshaped_strides({1, 8, 16}, {128, 1, 8}, {1, 8, 4, 4}), (Dims{128, 1, 32, 8}));
  EXPECT_EQ(reshaped_strides({4, 6}, {1, 4}, {24}), std::nullopt);
}

// The dense offset of flat element e (row-major over `shape`) in an operand broadcast over
// `shape` as `dims`.
int64_t broadcast_offset(const Dims& shape, const Dims& dims, int64_t e) {
  int64_t offset = 0, stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    int64_t i = e % shape[k];
    e /= shape[k];
    if (dims[k] != 1) offset += i * stride;
    stride *= dims[k];
  }
  return offset;
}

// Every element reads the same operand element over the reshape's source as over the
// reshape, wherever a broadcast is found; the cases fission makes are found, and an operand
// spanning part of a merged group is refused.
TEST(Movement, BroadcastsAreCarriedBackThroughReshapes) {
  Rng rng(424242);
  int found = 0, refused = 0;
  for (int t = 0; t < 400; ++t) {
    Dims from;
    for (int64_t r = rng.range(1, 5); r > 0; --r) from.push_back(rng.coin(0.25) ? 1 : rng.range(2, 6));
    Dims to = random_reshape(numel(from), rng, 0);
    Dims dims;
    for (int64_t d : to) dims.push_back(rng.coin(0.4) ? 1 : d);
    std::optional<Dims> carried = broadcast_before_reshape(dims, from, to);
    if (!carried) {
      ++refused;
      continue;
    }
    ++found;
    const Dims& back = *carried;
    ASSERT_EQ(back.size(), from.size());
    for (int64_t e = 0; e < numel(to); ++e)
      ASSERT_EQ(broadcast_offset(from, back, e), broadcast_offset(to, dims, e))
          << dims_str(dims) << " over " << dims_str(to) << " as " << dims_str(back) << " over " << dims_str(from);
  }
  EXPECT_GE(found, 150);
  EXPECT_GE(refused, 20);
  using Carried = std::optional<Dims>;
  EXPECT_EQ(broadcast_before_reshape({1, 1, 128}, {16384, 128}, {1, 16384, 128}), Carried({1, 128}));  // a bias
  EXPECT_EQ(broadcast_before_reshape({8, 4, 6}, {32, 6}, {8, 4, 6}), Carried({32, 6}));  // a residual
  EXPECT_EQ(broadcast_before_reshape({8, 4, 1}, {32, 6}, {8, 4, 6}), Carried({32, 1}));  // per row
  EXPECT_EQ(broadcast_before_reshape({1, 4, 6}, {32, 6}, {8, 4, 6}), std::nullopt);      // one batch's positions
  EXPECT_EQ(broadcast_before_reshape({1, 1}, {3, 4}, {4, 3}), Carried({1, 1}));          // a scalar
  EXPECT_EQ(broadcast_before_reshape({4, 1}, {12}, {4, 3}), std::nullopt);
}

}  // namespace
}  // namespace orchid::ir
