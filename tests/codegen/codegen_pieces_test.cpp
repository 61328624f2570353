// Elementwise loops cut into pieces where their index arithmetic changes along the innermost
// variable (emit_pieces.cpp): a reflecting pad, a zero pad, a concatenation, a pad read through
// an inlined producer; a select on a mod by 2 would take a piece per point and stays one loop.
// The loop counts are checked on the default schedule's source, and every kernel matches the
// interpreter under the default schedule, with nothing inlined and rows cut into tiles of 16
// (in the middle of pieces), and under random schedules.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/cpu/lower.h"
#include "codegen/kernel_cases.h"
#include "ir/parser.h"

namespace orchid::codegen::cpu {
namespace {

struct PieceCase {
  const char* what;
  std::string text;
  int loops;  // loops over the innermost variable, in all
};

std::string reflect(const std::string& v, int pad, int n) {
  std::string m = "mod(sub(" + v + ", " + std::to_string(pad) + "), " + std::to_string(2 * (n - 1)) + ")";
  return "select(lt(" + m + ", " + std::to_string(n) + "), " + m + ", sub(" + std::to_string(2 * (n - 1)) + ", " + m + "))";
}

std::vector<PieceCase> piece_cases() {
  return {
      {"reflecting pad by 3",
       "graph @g {\n  input %x : f32[2,5,40]\n  %y : f32[2,11,46] = layout(%x) { %x[i0, " + reflect("i1", 3, 5) + ", " +
           reflect("i2", 3, 40) + "] }\n  output %y\n}\n",
       3},
      {"zero pad by 1 and 2",
       "graph @g {\n  input %x : f32[3,37]\n"
       "  %y : f32[3,40] = layout(%x) { %x[i0, sub(i1, 1)] if and(ge(i1, 1), lt(i1, 38)) else 0:f32 }\n  output %y\n}\n",
       3},
      {"concatenation along the rows",
       "graph @g {\n  input %a : f32[4,21]\n  input %b : f32[4,30]\n"
       "  %y : f32[4,51] = layout(%a, %b) { select(lt(i1, 21), %a[i0, i1], %b[i0, sub(i1, 21)]) }\n  output %y\n}\n",
       2},
      {"a relu of an inlined reflecting pad",
       "graph @g {\n  input %x : f32[2,40]\n  %p : f32[2,44] = layout(%x) { %x[i0, " + reflect("i1", 2, 40) + "] }\n"
       "  %y : f32[2,44] = elementwise(%p) { max(%p[i0, i1], 0:f32) }\n  output %y\n}\n",
       3},
      {"a zero pad read by two primitives, inlined into both",
       "graph @g {\n  input %x : f32[2,50]\n"
       "  %p : f32[2,54] = layout(%x) { %x[i0, sub(i1, 2)] if and(ge(i1, 2), lt(i1, 52)) else 0:f32 }\n"
       "  %y : f32[2,54] = elementwise(%p) { max(%p[i0, i1], 0:f32) }\n"
       "  %z : f32[2,54] = elementwise(%p) { min(%p[i0, i1], 0:f32) }\n  output %y, %z\n}\n",
       6},
      {"a concatenation of a reflecting pad and a zero pad, both inlined",
       "graph @g {\n  input %x : f32[2,40]\n  input %w : f32[2,41]\n"
       "  %p : f32[2,44] = layout(%x) { %x[i0, " + reflect("i1", 2, 40) + "] }\n"
       "  %q : f32[2,44] = layout(%w) { %w[i0, sub(i1, 1)] if and(ge(i1, 1), lt(i1, 42)) else 0:f32 }\n"
       "  %y : f32[2,88] = layout(%p, %q) { select(lt(i1, 44), %p[i0, i1], %q[i0, sub(i1, 44)]) }\n  output %y\n}\n",
       6},
      {"interleaving by a mod by 2",
       "graph @g {\n  input %a : f32[3,20]\n  input %b : f32[3,20]\n"
       "  %y : f32[3,40] = layout(%a, %b) { select(eq(mod(i1, 2), 0), %a[i0, floordiv(i1, 2)], %b[i0, floordiv(i1, 2)]) }\n"
       "  output %y\n}\n",
       1},
  };
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ElementwisePieces, LoopsAreCutWhereTheirIndexArithmeticChanges) {
  for (const PieceCase& c : piece_cases()) {
    SCOPED_TRACE(c.what);
    ir::Graph g = ir::parse_graph(c.text);
    tile::Kernel k = whole_kernel(g);
    GeneratedKernel gk = generate_kernel(g, k, default_schedule(g, k, 2), "orc_piece");
    size_t rank = g.type(g.outputs()[0]).shape.size();
    std::string v = "v" + std::to_string(rank - 1);
    EXPECT_EQ(count(gk.source, "for (int64_t " + v + " = "), c.loops) << gk.source;
    if (c.loops > 1)  // no mod of the row's variable and no comparison of it is left in its pieces
      for (const std::string& left : {"orc_imod((" + v, "orc_imod(" + v + ",", "(" + v + " <", "(" + v + " >"})
        EXPECT_EQ(count(gk.source, left), 0) << left << "\n" << gk.source;
  }
}

TEST(ElementwisePieces, MatchInterpreter) {
  std::vector<PieceCase> pieces = piece_cases();
  std::vector<Case> cases;
  for (size_t i = 0; i < pieces.size(); ++i)
    for (int rep = 0; rep < 4; ++rep) {
      SCOPED_TRACE(pieces[i].what);
      auto pick = [rep](const ir::Graph& g, const tile::Kernel& k, Rng& rng) {
        if (rep >= 2) return random_schedule(g, k, rng);
        Schedule s = default_schedule(g, k, 2);
        if (rep == 1) {  // nothing inlined: each primitive into scratch, rows cut into tiles of 16
          s.inline_single_use = false;
          s.tile.back() = 16;
        }
        return s;
      };
      cases.push_back(make_case(97500 + 10 * i + rep, pieces[i].text, pick, "orc_p" + std::to_string(cases.size())));
    }
  check_cases(cases);
}

}  // namespace
}  // namespace orchid::codegen::cpu
