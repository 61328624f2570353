// Opaque scatter routines (scatter_elements, scatter_nd) against naive reference loops over
// seeded random shapes, axes, reductions and dtypes; their arithmetic (own-precision rounding
// per update, integer wrapping, bool or/and, duplicates in order) and their run-time errors.
#include <algorithm>
#include <string>

#include "interp_test_util.h"
#include "support/random.h"
#include "testlib/tensors.h"

namespace orchid::interp::test {
namespace {

Graph scatter_graph(OpaqueRoutine r, std::map<std::string, int64_t> params, const TensorType& data,
                    const TensorType& ind, const TensorType& upd) {
  Primitive p;
  p.op = PrimOp::Opaque;
  p.attrs = OpaqueAttrs{r, std::move(params)};
  p.domain = data.shape;
  p.name = "lib";
  return one_node({data, ind, upd}, p, {data});
}

// The reference combination of update element j into element f of `out` (floats in double,
// rounded once when stored; integers modulo 2^64, wrapped when stored; bool or / and).
void combine(Tensor& out, int64_t f, const Tensor& upd, int64_t j, int64_t red) {
  if (ir::is_float(out.dtype())) {
    double a = out.get_f64(f), b = upd.get_f64(j);
    out.set_f64(f, red == 0 ? b : red == 1 ? a + b : a * b);
    return;
  }
  auto a = static_cast<uint64_t>(out.get_i64(f)), b = static_cast<uint64_t>(upd.get_i64(j));
  uint64_t v = red == 0 ? b : red == 1 ? a + b : a * b;
  if (ir::is_bool(out.dtype()) && red != 0) v = red == 1 ? (a | b) : (a & b);
  out.set_i64(f, static_cast<int64_t>(v));
}

// Small values (floats rounded to their dtype, so that the reference in double sees them).
Tensor small_values(const TensorType& t, Rng& rng) {
  return t.dtype == DType::Bool ? testlib::random_tensor(t, rng)
                                : testlib::random_tensor(t, rng, -3, 4);
}

DType random_data_dtype(Rng& rng) {
  static const DType kTypes[] = {DType::F32, DType::F64, DType::I32,
                                 DType::I64, DType::U8,  DType::Bool};
  return kTypes[rng.range(0, 6)];
}

// Random indices in [-n, n) along one dim (or [0, n) when unsigned).
int64_t random_index(Rng& rng, int64_t n, bool negative) {
  return negative ? rng.range(-n, n) : rng.range(0, n);
}

TEST(ScatterElements, MatchesReferenceLoop) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE("scatter_elements seed " + std::to_string(seed));
    Rng rng(seed);
    Dims ds(static_cast<size_t>(rng.range(1, 4)));
    for (auto& d : ds) d = rng.range(1, 5);
    int64_t axis = rng.range(0, static_cast<int64_t>(ds.size()));
    Dims us = ds;
    for (size_t d = 0; d < us.size(); ++d)
      us[d] = static_cast<int64_t>(d) == axis ? rng.range(0, 6) : rng.range(1, ds[d] + 1);
    int64_t red = rng.range(0, 3);
    DType dt = random_data_dtype(rng), it = rng.coin() ? DType::I64 : DType::I32;
    TensorType data_t{dt, ds}, ind_t{it, us}, upd_t{dt, us};
    Tensor data = small_values(data_t, rng), upd = small_values(upd_t, rng);
    Tensor ind(ind_t);
    for (int64_t j = 0; j < ind.numel(); ++j)
      ind.set_i64(j, random_index(rng, ds[static_cast<size_t>(axis)], true));
    Tensor want = data;
    Dims pos(us.size(), 0);
    for (int64_t j = 0; j < upd.numel(); ++j, testlib::next_index(us, pos)) {
      Dims at = pos;
      int64_t k = ind.get_i64(j);
      at[static_cast<size_t>(axis)] = k < 0 ? k + ds[static_cast<size_t>(axis)] : k;
      int64_t f = testlib::flat_offset(ds, at);
      combine(want, f, upd, j, red);
    }
    Graph g = scatter_graph(OpaqueRoutine::ScatterElements, {{"axis", axis}, {"reduction", red}},
                            data_t, ind_t, upd_t);
    Tensor got = run(g, {data, ind, upd}, own())[0];  // rounds per update, as the reference
    EXPECT_EQ(testlib::compare_tensors(got, want, 0, 0), "") << "reduction " << red;
  }
}

TEST(ScatterND, MatchesReferenceLoop) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE("scatter_nd seed " + std::to_string(seed));
    Rng rng(seed);
    Dims ds(static_cast<size_t>(rng.range(1, 4)));
    for (auto& d : ds) d = rng.range(1, 5);
    int64_t k = rng.range(1, static_cast<int64_t>(ds.size()) + 1);
    Dims lead(static_cast<size_t>(rng.range(1, 3)));
    for (auto& d : lead) d = rng.range(0, 4);
    Dims is = lead, us = lead;
    is.push_back(k);
    us.insert(us.end(), ds.begin() + k, ds.end());
    int64_t red = rng.range(0, 3);
    DType dt = random_data_dtype(rng), it = rng.coin() ? DType::I64 : DType::I32;
    TensorType data_t{dt, ds}, ind_t{it, is}, upd_t{dt, us};
    Tensor data = small_values(data_t, rng), upd = small_values(upd_t, rng);
    Tensor ind(ind_t);
    for (int64_t j = 0; j < ind.numel(); ++j)
      ind.set_i64(j, random_index(rng, ds[static_cast<size_t>(j % k)], true));
    Tensor want = data;
    int64_t slice = ir::numel(Dims(ds.begin() + k, ds.end()));
    for (int64_t t = 0; t < ir::numel(lead); ++t) {
      Dims at(ds.size(), 0);
      for (int64_t j = 0; j < k; ++j) {
        int64_t v = ind.get_i64(t * k + j);
        at[static_cast<size_t>(j)] = v < 0 ? v + ds[static_cast<size_t>(j)] : v;
      }
      int64_t base = testlib::flat_offset(ds, at);
      for (int64_t s = 0; s < slice; ++s) combine(want, base + s, upd, t * slice + s, red);
    }
    Graph g = scatter_graph(OpaqueRoutine::ScatterND, {{"reduction", red}}, data_t, ind_t, upd_t);
    Tensor got = run(g, {data, ind, upd}, own())[0];  // rounds per update, as the reference
    EXPECT_EQ(testlib::compare_tensors(got, want, 0, 0), "") << "reduction " << red;
  }
}

TEST(ScatterElements, DuplicatesApplyInRowMajorOrder) {
  // Updates 0..3 go to elements 1, 1, 0 and 1 (index -2 of 3).
  Graph g = scatter_graph(OpaqueRoutine::ScatterElements, {{"axis", 0}, {"reduction", 0}},
                          {DType::F32, {3}}, {DType::I64, {4}}, {DType::F32, {4}});
  Tensor out =
      run(g, {tensor_f(DType::F32, {3}, {9, 9, 9}), tensor_i(DType::I64, {4}, {1, 1, 0, -2}),
              tensor_f(DType::F32, {4}, {1, 2, 3, 4})})[0];
  EXPECT_EQ(doubles(out), (std::vector<double>{3, 4, 9}));  // the last write wins
}

TEST(ScatterND, OwnPrecisionRoundsEachUpdateToTheDtype) {
  // 2048 + 1 + 1 in f16: each sum rounds to even (2048), so the result stays 2048; in f64
  // precision it is 2050.
  Graph g = scatter_graph(OpaqueRoutine::ScatterND, {{"reduction", 1}}, {DType::F16, {1}},
                          {DType::I64, {2, 1}}, {DType::F16, {2}});
  std::vector<Tensor> in = {tensor_f(DType::F16, {1}, {2048}), tensor_i(DType::I64, {2, 1}, {0, 0}),
                            tensor_f(DType::F16, {2}, {1, 1})};
  EXPECT_EQ(doubles(run(g, in, own())[0]), (std::vector<double>{2048}));
  EXPECT_EQ(doubles(run(g, in, f64_out())[0]), (std::vector<double>{2050}));
}

TEST(ScatterND, IntegersWrapAndBoolAddIsOr) {
  Graph g = scatter_graph(OpaqueRoutine::ScatterND, {{"reduction", 2}}, {DType::I8, {2}},
                          {DType::I64, {2, 1}}, {DType::I8, {2}});
  Tensor out = run(g, {tensor_i(DType::I8, {2}, {64, 3}), tensor_i(DType::I64, {2, 1}, {0, 0}),
                       tensor_i(DType::I8, {2}, {2, 2})})[0];
  EXPECT_EQ(ints(out), (std::vector<int64_t>{0, 3}));  // 64 * 2 * 2 = 256 wraps to 0
  Graph h = scatter_graph(OpaqueRoutine::ScatterND, {{"reduction", 1}}, {DType::Bool, {2}},
                          {DType::I64, {2, 1}}, {DType::Bool, {2}});
  Tensor b = run(h, {tensor_i(DType::Bool, {2}, {0, 0}), tensor_i(DType::I64, {2, 1}, {1, 1}),
                     tensor_i(DType::Bool, {2}, {1, 1})})[0];
  EXPECT_EQ(ints(b), (std::vector<int64_t>{0, 1}));
}

TEST(ScatterElements, IndexOutOfRangeIsAUserErrorNamingTheNode) {
  Graph g = scatter_graph(OpaqueRoutine::ScatterElements, {{"axis", 1}, {"reduction", 0}},
                          {DType::F32, {1, 3}}, {DType::I32, {1, 1}}, {DType::F32, {1, 1}});
  std::string msg =
      error_of(g, {tensor_f(DType::F32, {1, 3}, {1, 2, 3}), tensor_i(DType::I32, {1, 1}, {-4}),
                   tensor_f(DType::F32, {1, 1}, {7})});
  EXPECT_EQ(msg,
            "node 0 (%y0 = opaque, from \"lib\"): scatter_elements index -4 is out of range for "
            "dimension 1 of size 3");
}

TEST(ScatterND, UnsignedIndicesAreNeverNegative) {
  Graph g = scatter_graph(OpaqueRoutine::ScatterND, {{"reduction", 0}}, {DType::F32, {3}},
                          {DType::U64, {1, 1}}, {DType::F32, {1}});
  std::string msg =
      error_of(g, {tensor_f(DType::F32, {3}, {1, 2, 3}), tensor_i(DType::U64, {1, 1}, {-1}),
                   tensor_f(DType::F32, {1}, {7})});
  EXPECT_EQ(msg,
            "node 0 (%y0 = opaque, from \"lib\"): scatter_nd index 18446744073709551615 is out of "
            "range for dimension 0 of size 3");
}

TEST(ScatterND, BadReductionParameterIsAUserError) {
  Graph g = scatter_graph(OpaqueRoutine::ScatterND, {{"reduction", 0}}, {DType::F32, {3}},
                          {DType::I64, {1, 1}}, {DType::F32, {1}});
  std::get<OpaqueAttrs>(g.mutable_node(NodeId(0)).attrs).params["reduction"] = 3;
  std::string msg =
      error_of(g, {tensor_f(DType::F32, {3}, {1, 2, 3}), tensor_i(DType::I64, {1, 1}, {0}),
                   tensor_f(DType::F32, {1}, {7})});
  EXPECT_NE(msg.find("parameter reduction=3 outside [0, 2]"), std::string::npos) << msg;
}

}  // namespace
}  // namespace orchid::interp::test
