// Det (one opaque `det` primitive) against cofactor expansion on seeded random batches of
// matrices, singular ones included; the primitive prints and parses back.
#include <gtest/gtest.h>

#include <cmath>

#include "interp/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "support/random.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"

namespace orchid {
namespace {

using ir::DType;
using ir::Dims;
using ir::Tensor;
using ir::TensorType;

double cofactor_det(const std::vector<double>& a, int64_t m) {
  if (m == 1) return a[0];
  double d = 0;
  for (int64_t j = 0; j < m; ++j) {
    std::vector<double> minor;
    for (int64_t r = 1; r < m; ++r)
      for (int64_t c = 0; c < m; ++c)
        if (c != j) minor.push_back(a[static_cast<size_t>(r * m + c)]);
    d += (j % 2 == 0 ? 1 : -1) * a[static_cast<size_t>(j)] * cofactor_det(minor, m - 1);
  }
  return d;
}

TEST(CoverageDet, MatchesCofactorExpansion) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    Rng rng(seed * 613);
    int64_t m = rng.range(1, 6);
    Dims shape = {rng.range(1, 3), rng.range(1, 4), m, m};
    Tensor x(TensorType{seed % 2 ? DType::F64 : DType::F32, shape});
    for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, rng.coin(0.2) ? 0.0 : std::round(rng.uniform(-4, 4)));
    if (m > 1 && rng.coin()) {  // a singular matrix first: row 1 = row 0
      for (int64_t j = 0; j < m; ++j) x.set_f64(m + j, x.get_f64(j));
    }
    SCOPED_TRACE("seed " + std::to_string(seed) + " " + ir::type_str(x.type()));
    ir::Graph g = testlib::import_model(testlib::single_node("Det", {x.type()}, 1, {}, 13));
    ASSERT_EQ(g.num_nodes(), 1);
    EXPECT_EQ(ir::print_graph(ir::parse_graph(ir::print_graph(g))), ir::print_graph(g));
    Tensor got = interp::run(g, {x})[0];
    Tensor want(TensorType{x.dtype(), {shape[0], shape[1]}});
    for (int64_t k = 0; k < want.numel(); ++k) {
      std::vector<double> a;
      for (int64_t i = 0; i < m * m; ++i) a.push_back(x.get_f64(k * m * m + i));
      want.set_f64(k, cofactor_det(a, m));
    }
    EXPECT_EQ(testlib::compare_tensors(got, want, 1e-6, 1e-6), "");
  }
}

}  // namespace
}  // namespace orchid
