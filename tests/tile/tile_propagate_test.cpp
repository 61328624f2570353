// Tile propagation through one primitive (src/tile/propagate.h): exact regions for affine
// maps (transpose, strided slice, broadcast, matmul, conv with stride/dilation/padding/groups,
// pads, concat, reflect and edge padding, masks) against brute-force enumeration of what every
// tile reads; reduction splits; skipped select branches and predicated-off loads; indirect
// loads (graph inputs: whole axis; constants: the values read); views; opaque routines.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "support/error.h"
#include "support/random.h"
#include "tile/propagate.h"
#include "tile_oracle.h"

namespace orchid::tile {
namespace {

using ir::Dims;

const ir::Primitive& node_of(const ir::Graph& g, const std::string& value) {
  return g.node(g.value(*g.find_value(value)).node);
}

Region random_box(Rng& rng, const Dims& shape) {
  Region r{Dims(shape.size()), Dims(shape.size())};
  for (size_t d = 0; d < shape.size(); ++d) {
    r.lo[d] = rng.range(0, shape[d]);
    r.hi[d] = rng.range(r.lo[d] + 1, shape[d] + 1);
  }
  return r;
}

// Checks soundness and exactness of every slot on `tiles` random tiles (and, with
// split_reduce, random reduction boxes); returns the number of inexact slot regions.
int check_tiles(const ir::Graph& g, const ir::Primitive& p, int tiles, uint64_t seed, bool split_reduce,
                bool require_exact = true) {
  Rng rng(seed);
  int inexact = 0;
  for (int t = 0; t < tiles; ++t) {
    Region tile = t == 0 ? Region::whole(p.domain) : random_box(rng, p.domain);
    std::optional<Region> reduce;
    if (split_reduce && !p.reduce_domain.empty() && rng.coin()) reduce = random_box(rng, p.reduce_domain);
    auto got = propagate_primitive(g, p, tile, reduce);
    auto want = oracle::brute_force_reads(g, p, tile, reduce);
    for (size_t k = 0; k < p.inputs.size(); ++k) {
      const Dims& shape = g.type(p.inputs[k]).shape;
      std::string what = "slot " + std::to_string(k) + " of tile " + region_str(tile) +
                         (reduce ? " reduce " + region_str(*reduce) : "") + ": got " +
                         (got[k] ? region_str(*got[k]) : "(nothing)") + ", read " + oracle::read_box_str(want[k]);
      EXPECT_FALSE(want[k].out_of_bounds) << what;
      EXPECT_TRUE(oracle::covers(got[k], want[k], shape)) << "unsound " << what;
      bool ok = oracle::exact(got[k], want[k], shape);
      inexact += !ok;
      if (require_exact) {
        EXPECT_TRUE(ok) << "inexact " << what;
      }
    }
    if (::testing::Test::HasFailure()) break;
  }
  return inexact;
}

TEST(TilePropagate, TransposeStridedSliceAndBroadcastAreExact) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[5,7]
  input %s : f32[13]
  input %b : f32[1,6]
  %t : f32[7,5] = layout(%x) { %x[i1, i0] }
  %sl : f32[4] = layout(%s) { %s[add(mul(i0, 3), 2)] }
  %rv : f32[4] = layout(%s) { %s[sub(12, mul(i0, 3))] }
  %bc : f32[4,6] = broadcast(%b) { %b[0, i1] }
  output %t, %sl, %rv, %bc
})");
  auto t = propagate_primitive(g, node_of(g, "t"), Region{{1, 2}, {4, 5}});
  ASSERT_TRUE(t[0].has_value());
  EXPECT_EQ(*t[0], (Region{{2, 1}, {5, 4}}));
  auto sl = propagate_primitive(g, node_of(g, "sl"), Region{{1}, {3}});
  EXPECT_EQ(*sl[0], (Region{{5}, {9}}));  // elements 5 and 8
  auto rv = propagate_primitive(g, node_of(g, "rv"), Region{{0}, {2}});
  EXPECT_EQ(*rv[0], (Region{{9}, {13}}));  // elements 12 and 9
  auto bc = propagate_primitive(g, node_of(g, "bc"), Region{{1, 2}, {3, 5}});
  EXPECT_EQ(*bc[0], (Region{{0, 2}, {1, 5}}));
  for (const char* v : {"t", "sl", "rv", "bc"}) check_tiles(g, node_of(g, v), 60, 1, false);
}

TEST(TilePropagate, MatmulIsExactAndReductionsSplit) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %a : f32[2,6,4]
  input %b : f32[1,5,4]
  input %c : f32[4,3]
  %m : f32[2,6,5] = matmul(%a, %b) {trans_a=false, trans_b=true}
  %n : f32[2,6,3] = matmul(%a, %c) {trans_a=false, trans_b=false}
  output %m, %n
})");
  const ir::Primitive& m = node_of(g, "m");
  auto r = propagate_primitive(g, m, Region{{1, 2, 0}, {2, 4, 3}});
  EXPECT_EQ(*r[0], (Region{{1, 2, 0}, {2, 4, 4}}));
  EXPECT_EQ(*r[1], (Region{{0, 0, 0}, {1, 3, 4}}));  // batch dim broadcast: index 0
  auto split = propagate_primitive(g, m, Region{{0, 0, 0}, {2, 6, 5}}, Region{{1}, {3}});
  EXPECT_EQ(*split[0], (Region{{0, 0, 1}, {2, 6, 3}}));
  EXPECT_EQ(*split[1], (Region{{0, 0, 1}, {1, 5, 3}}));
  EXPECT_FALSE(propagate_primitive(g, m, Region{{0, 0, 0}, {2, 6, 5}}, Region{{2}, {2}})[0].has_value());
  check_tiles(g, m, 80, 2, true);
  check_tiles(g, node_of(g, "n"), 80, 3, true);
}

// Adds conv(x, w) with the given attributes to a graph of inputs x and w.
ir::Graph conv_graph(const Dims& x, const Dims& w, const ir::ConvAttrs& attrs) {
  ir::Graph g;
  ir::TensorType xt{ir::DType::F32, x}, wt{ir::DType::F32, w};
  ir::ValueId xv = g.add_input("x", xt), wv = g.add_input("w", wt);
  ir::Primitive p;
  p.op = ir::PrimOp::Conv;
  p.inputs = {xv, wv};
  p.attrs = attrs;
  ir::NodeId n = g.add_node(std::move(p), {ir::conv_result_type(xt, wt, attrs)}, {"y"});
  g.set_outputs({g.node(n).outputs[0]});
  return g;
}

TEST(TilePropagate, ConvWithStrideDilationPaddingAndGroupsIsExact) {
  struct Case {
    Dims x, w;
    ir::ConvAttrs attrs;
  };
  std::vector<Case> cases = {
      {{1, 3, 9, 9}, {4, 3, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1}},
      {{2, 4, 9, 11}, {6, 2, 3, 2}, {{2, 3}, {2, 1}, {1, 2}, {3, 0}, 2}},
      {{1, 2, 12, 7}, {2, 2, 4, 3}, {{3, 2}, {2, 3}, {3, 4}, {2, 4}, 1}},
      {{1, 6, 8}, {6, 1, 5}, {{2}, {3}, {5}, {6}, 6}},  // depthwise 1-d, padding larger than the kernel
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("conv case " + std::to_string(c));
    ir::Graph g = conv_graph(cases[c].x, cases[c].w, cases[c].attrs);
    check_tiles(g, g.nodes()[0], 120, 10 + c, true);
  }
  // The whole output of a padded conv reads the whole input; a corner tile only its corner.
  ir::Graph g = conv_graph({1, 1, 8, 8}, {1, 1, 3, 3}, {{2, 2}, {1, 1}, {1, 1}, {1, 1}, 1});
  auto corner = propagate_primitive(g, g.nodes()[0], Region{{0, 0, 0, 0}, {1, 1, 1, 1}});
  EXPECT_EQ(*corner[0], (Region{{0, 0, 0, 0}, {1, 1, 2, 2}}));  // rows -1..1 clipped to 0..1
}

TEST(TilePropagate, PadsConcatMasksAndReflectionsAreExact) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[5,4]
  input %a : f32[2,3]
  input %b : f32[2,4]
  %pad : f32[9,4] = layout(%x) { %x[sub(i0, 2), i1] if and(ge(i0, 2), lt(i0, 7)) else 0:f32 }
  %cat : f32[2,7] = layout(%a, %b) { select(lt(i1, 3), %a[i0, i1], %b[i0, sub(i1, 3)]) }
  %refl : f32[9,4] = layout(%x) { %x[select(lt(sub(i0, 2), 0), sub(2, i0), select(gt(sub(i0, 2), 4), sub(10, i0), sub(i0, 2))), i1] }
  %edge : f32[9,4] = layout(%x) { %x[min(max(sub(i0, 2), 0), 4), i1] }
  %tri : f32[5,4] = layout(%x) { select(lt(i1, add(i0, 1)), %x[i0, i1], 0:f32) }
  output %pad, %cat, %refl, %edge, %tri
})");
  const ir::Primitive& pad = node_of(g, "pad");
  EXPECT_FALSE(propagate_primitive(g, pad, Region{{0, 0}, {2, 4}})[0].has_value());  // all padding
  EXPECT_EQ(*propagate_primitive(g, pad, Region{{1, 1}, {4, 3}})[0], (Region{{0, 1}, {2, 3}}));
  const ir::Primitive& cat = node_of(g, "cat");
  auto left = propagate_primitive(g, cat, Region{{0, 0}, {2, 2}});
  EXPECT_EQ(*left[0], (Region{{0, 0}, {2, 2}}));
  EXPECT_FALSE(left[1].has_value());  // the other piece's branch is decided false
  auto mid = propagate_primitive(g, cat, Region{{0, 2}, {1, 5}});
  EXPECT_EQ(*mid[0], (Region{{0, 2}, {1, 3}}));
  EXPECT_EQ(*mid[1], (Region{{0, 0}, {1, 2}}));
  // The lower triangle (i1 <= i0) of rows 1..3, columns 2..3 is (2,2), (3,2), (3,3); rows
  // 0..1 of columns 2..3 read nothing.
  EXPECT_EQ(*propagate_primitive(g, node_of(g, "tri"), Region{{1, 2}, {4, 4}})[0], (Region{{2, 2}, {4, 4}}));
  EXPECT_FALSE(propagate_primitive(g, node_of(g, "tri"), Region{{0, 2}, {2, 4}})[0].has_value());
  for (const char* v : {"pad", "cat", "refl", "edge", "tri"}) {
    SCOPED_TRACE(v);
    check_tiles(g, node_of(g, v), 150, 20, false);
  }
}

TEST(TilePropagate, IndirectLoadsReadTheWholeAxisUnlessTheIndicesAreConstant) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[4,10]
  input %idx : i32[3]
  const %cidx : i64[5] = [7, 2, 9, 3, 5]
  const %small : u8[2] = [1, 2]
  %gi : f32[4,3] = layout(%x, %idx) { %x[i0, cast<i64>(%idx[i1])] }
  %gc : f32[4,5] = layout(%x, %cidx) { %x[i0, %cidx[i1]] }
  %gs : f32[2,3] = layout(%x, %small) { %x[cast<i64>(%small[i0]), 1] if lt(i1, 2) else 0:f32 }
  output %gi, %gc, %gs
})");
  auto gi = propagate_primitive(g, node_of(g, "gi"), Region{{1, 1}, {3, 2}});
  EXPECT_EQ(*gi[0], (Region{{1, 0}, {3, 10}}));
  EXPECT_EQ(*gi[1], (Region{{1}, {2}}));
  auto gc = propagate_primitive(g, node_of(g, "gc"), Region{{0, 1}, {4, 4}});
  EXPECT_EQ(*gc[0], (Region{{0, 2}, {4, 10}}));  // values 2, 9, 3
  EXPECT_EQ(*gc[1], (Region{{1}, {4}}));
  auto gs = propagate_primitive(g, node_of(g, "gs"), Region{{1, 0}, {2, 3}});
  EXPECT_EQ(*gs[0], (Region{{2, 1}, {3, 2}}));
  EXPECT_EQ(*gs[1], (Region{{1}, {2}}));
  EXPECT_FALSE(propagate_primitive(g, node_of(g, "gs"), Region{{0, 2}, {2, 3}})[1].has_value());  // predicated off
  for (const char* v : {"gi", "gc", "gs"}) {
    SCOPED_TRACE(v);
    check_tiles(g, node_of(g, v), 100, 30, false);
  }
}

TEST(TilePropagate, ViewsAreSoundAndExactWhenTheyKeepRows) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[4,6]
  %v : f32[6,4] = view(%x)
  %f : f32[24] = view(%x)
  %u : f32[2,2,6] = view(%x)
  output %v, %f, %u
})");
  // Elements 4..5 and 8..9 of the flat order: row 0 cols 4..5 and row 1 cols 2..3 (the
  // residues of 4 i0 + i1 modulo 6 are enumerated for small tiles).
  EXPECT_EQ(*propagate_primitive(g, node_of(g, "v"), Region{{1, 0}, {3, 2}})[0], (Region{{0, 2}, {2, 6}}));
  EXPECT_EQ(*propagate_primitive(g, node_of(g, "f"), Region{{7}, {17}})[0], (Region{{1, 0}, {3, 6}}));
  EXPECT_EQ(*propagate_primitive(g, node_of(g, "u"), Region{{1, 0, 2}, {2, 2, 4}})[0], (Region{{2, 2}, {4, 4}}));
  // Splitting a dim (u) or flattening (f) keeps tiles boxes: exact. A reshape that moves
  // row boundaries (v) reads a set that is no box: sound, sometimes larger than the hull.
  check_tiles(g, node_of(g, "v"), 100, 40, false, false);
  check_tiles(g, node_of(g, "f"), 100, 41, false);
  check_tiles(g, node_of(g, "u"), 100, 42, false);
}

TEST(TilePropagate, LargeViewsStaySoundBeyondTheEnumerationLimit) {
  // Tiles of more than 4096 points: the residues of 64 i0 + i1 mod 96 are not enumerated.
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[64,96]
  %v : f32[96,64] = view(%x)
  output %v
})");
  const ir::Primitive& v = node_of(g, "v");
  EXPECT_EQ(*propagate_primitive(g, v, Region{{0, 0}, {96, 64}})[0], Region::whole({64, 96}));
  EXPECT_EQ(*propagate_primitive(g, v, Region{{3, 0}, {5, 64}})[0], (Region{{2, 0}, {4, 96}}));
  Rng rng(50);
  for (int t = 0; t < 40; ++t) {
    Region tile = random_box(rng, v.domain);
    auto got = propagate_primitive(g, v, tile);
    auto want = oracle::brute_force_reads(g, v, tile);
    EXPECT_TRUE(oracle::covers(got[0], want[0], {64, 96})) << region_str(tile);
  }
}

TEST(TilePropagate, OpaqueRoutinesReadTheirWholeInputs) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[3,5]
  %c : f32[3,5] = opaque cumsum(%x) {axis=1, exclusive=0, reverse=0}
  output %c
})");
  EXPECT_EQ(*propagate_primitive(g, node_of(g, "c"), Region{{1, 1}, {2, 2}})[0], Region::whole({3, 5}));
  EXPECT_FALSE(propagate_primitive(g, node_of(g, "c"), Region{{1, 1}, {1, 2}})[0].has_value());  // empty tile
}

TEST(TilePropagate, TilesOutsideTheDomainAreInternalErrors) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[3,5]
  %y : f32[3,5] = elementwise(%x) { neg(%x[i0, i1]) }
  output %y
})");
  EXPECT_THROW(propagate_primitive(g, node_of(g, "y"), Region{{0, 0}, {4, 5}}), InternalError);
  EXPECT_THROW(propagate_primitive(g, node_of(g, "y"), Region{{0}, {3}}), InternalError);
}

}  // namespace
}  // namespace orchid::tile
