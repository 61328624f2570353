// Differential tests of the Einsum fission rule: random equations (1 to 3 operands, repeated
// labels, broadcast dims of 1, ellipses, implicit and explicit outputs) and the classic
// named ones (matmuls with and without transposes, traces, diagonals, outer products),
// imported through the real loader, run by the interpreter and compared with a naive
// evaluator that loops over every assignment of every label; plus the rule's error messages.
#include <algorithm>
#include <map>
#include <set>

#include "coverage_reduce_util.h"

namespace orchid {
namespace {

using namespace coverage;

// numpy.einsum of an equation of letters only with an explicit output, by brute force: every
// assignment of every label, a dim of 1 broadcasting under a larger extent.
Tensor ref_einsum(const std::string& eq, const std::vector<Tensor>& xs, DType t) {
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow), out = eq.substr(arrow + 2);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') terms.emplace_back();
    else terms.back().push_back(c);
  }
  std::map<char, int64_t> ext;
  for (size_t k = 0; k < terms.size(); ++k)
    for (size_t j = 0; j < terms[k].size(); ++j) ext[terms[k][j]] = std::max(ext[terms[k][j]], xs[k].shape()[j]);
  std::string labels;
  Dims extents, out_shape;
  for (auto [l, e] : ext) labels += l, extents.push_back(e);
  for (char l : out) out_shape.push_back(ext[l]);
  Tensor y(TensorType{t, out_shape});
  std::vector<double> acc(static_cast<size_t>(y.numel()));
  Dims at(labels.size(), 0);
  auto value = [&](char l) { return at[labels.find(l)]; };
  if (ir::numel(extents) > 0) do {
      double prod = 1;
      for (size_t k = 0; k < terms.size(); ++k) {
        Dims idx;
        for (size_t j = 0; j < terms[k].size(); ++j) idx.push_back(xs[k].shape()[j] == 1 ? 0 : value(terms[k][j]));
        prod *= xs[k].get_as_double(testlib::flat_offset(xs[k].shape(), idx));
      }
      Dims oi;
      for (char l : out) oi.push_back(value(l));
      acc[static_cast<size_t>(testlib::flat_offset(out_shape, oi))] += prod;
    } while (testlib::next_index(extents, at));
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (ir::is_float(t)) y.set_f64(i, acc[static_cast<size_t>(i)]);
    else y.set_i64(i, static_cast<int64_t>(acc[static_cast<size_t>(i)]));
  }
  return y;
}

struct EinsumCase {
  std::string equation;  // as the node gets it
  std::string expanded;  // letters only, explicit output (ellipses as upper-case letters)
  std::vector<Dims> shapes;
};

// A random equation over the labels a..e: operands of rank 0-3 with occasional repeated
// labels, dims of 1 that broadcast, a leading "..." (ellipsis dims U, V, W aligned right),
// and an explicit or implicit output.
EinsumCase random_einsum(Rng& rng) {
  std::map<char, int64_t> ext;
  for (char l = 'a'; l <= 'e'; ++l) ext[l] = rng.range(1, 4);
  const std::string ell_labels = "UVW";
  Dims ell_ext = {rng.range(1, 3), rng.range(1, 4), rng.range(1, 3)};
  bool ellipsis = rng.coin(0.3);
  int64_t ell_max = 0;
  EinsumCase c;
  std::vector<std::string> terms, expanded;
  std::map<char, int> uses;
  auto n = static_cast<size_t>(rng.range(1, 4));
  for (size_t k = 0; k < n; ++k) {
    std::string term, full;
    Dims shape;
    int64_t ell = ellipsis ? rng.range(0, 4) : 0;
    ell_max = std::max(ell_max, ell);
    for (int64_t j = 3 - ell; j < 3; ++j) {
      full += ell_labels[static_cast<size_t>(j)];
      shape.push_back(rng.coin(0.2) ? 1 : ell_ext[static_cast<size_t>(j)]);
    }
    for (int64_t j = rng.range(0, 4); j > 0; --j) {
      char l = static_cast<char>('a' + rng.range(0, 5));
      term += l, full += l, ++uses[l];
      shape.push_back(rng.coin(0.1) ? 1 : ext[l]);
    }
    terms.push_back((ellipsis ? "..." : "") + term);
    expanded.push_back(full);
    c.shapes.push_back(shape);
  }
  std::string ell_out = ell_labels.substr(static_cast<size_t>(3 - ell_max));
  std::string out;
  bool implicit = rng.coin(0.3);
  if (implicit) {
    for (auto [l, u] : uses) if (u == 1) out += l;
  } else {
    for (auto [l, u] : uses) if (rng.coin(0.6)) out += l;
    for (size_t i = out.size(); i > 1; --i) std::swap(out[i - 1], out[static_cast<size_t>(rng.range(0, static_cast<int64_t>(i)))]);
  }
  for (size_t k = 0; k < n; ++k) c.equation += (k ? "," : "") + terms[k], c.expanded += (k ? "," : "") + expanded[k];
  size_t at = implicit ? 0 : static_cast<size_t>(rng.range(0, static_cast<int64_t>(out.size()) + 1));
  if (!implicit) c.equation += "->" + out.substr(0, at) + (ellipsis ? "..." : "") + out.substr(at);
  c.expanded += "->" + out.substr(0, at) + ell_out + out.substr(at);
  return c;
}

void check_einsum(const EinsumCase& c, DType t, Rng& rng) {
  std::vector<TensorType> types;
  std::vector<Tensor> xs;
  for (const Dims& s : c.shapes) {
    types.push_back({t, s});
    xs.push_back(ir::is_float(t) ? testlib::random_tensor(types.back(), rng, -1, 1) : tie_tensor(types.back(), rng, -3, 4, false));
  }
  OnnxModel m = single_node("Einsum", types, 1, {{"equation", c.equation}}, 12);
  Tensor want = ref_einsum(c.expanded, xs, t);
  double tol = ir::dtype_bytes(t) == 2 ? 1e-2 : 1e-5;
  EXPECT_EQ(testlib::compare_tensors(run(m, xs)[0], want, tol, tol), "")
      << "equation '" << c.equation << "' (" << c.expanded << ") dtype " << ir::dtype_name(t);
}

TEST(CoverageReduceEinsum, RandomEquations) {
  const DType dtypes[] = {DType::F32, DType::F64, DType::I32, DType::I64, DType::F16};
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed * 131);
    check_einsum(random_einsum(rng), dtypes[seed % 5], rng);
  }
}

TEST(CoverageReduceEinsum, NamedEquations) {
  const EinsumCase cases[] = {
      {"ij,jk->ik", "ij,jk->ik", {{3, 4}, {4, 5}}},
      {"bij,bjk->bik", "bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
      {"ji,kj->ik", "ji,kj->ik", {{4, 3}, {5, 4}}},
      {"bij,bkj->bki", "bij,bkj->bki", {{2, 3, 4}, {2, 5, 4}}},
      {"ibj,jbk", "ibj,jbk->ik", {{3, 2, 4}, {4, 2, 5}}},
      {"abij,jk->abik", "abij,jk->abik", {{2, 2, 3, 4}, {4, 3}}},
      {"ij,ij->i", "ij,ij->i", {{3, 4}, {3, 4}}},
      {"ij->ji", "ij->ji", {{3, 4}}},
      {"ii->i", "ii->i", {{4, 4}}},
      {"ii", "ii->", {{4, 4}}},
      {"i,i", "i,i->", {{5}, {5}}},
      {"i,j->ij", "i,j->ij", {{3}, {4}}},
      {"ij", "ij->ij", {{3, 4}}},
      {"ij->", "ij->", {{3, 4}}},
      {"...ij,...jk", "Uij,Ujk->Uik", {{2, 3, 4}, {2, 4, 5}}},
      {"...ij,jk->...ik", "UVij,jk->UVik", {{2, 1, 3, 4}, {4, 5}}},
      {"b...i,b...i->b...", "bUi,bUi->bU", {{2, 3, 4}, {2, 1, 4}}},
  };
  Rng rng(5);
  for (const auto& c : cases)
    for (DType t : {DType::F32, DType::F64, DType::I64}) {
      SCOPED_TRACE(c.equation);
      check_einsum(c, t, rng);
    }
}

// Batched float matmuls become one matmul primitive, read transposed where that suffices.
TEST(CoverageReduceEinsum, MatMulShape) {
  auto ops = [](const std::string& eq, Dims a, Dims b) {
    ir::Graph g = import_model(single_node("Einsum", {{DType::F32, a}, {DType::F32, b}}, 1, {{"equation", eq}}, 12));
    std::multiset<ir::PrimOp> s;
    for (const auto& n : g.nodes()) s.insert(n.op);
    return s;
  };
  EXPECT_EQ(ops("bij,bjk->bik", {2, 3, 4}, {2, 4, 5}), (std::multiset<ir::PrimOp>{ir::PrimOp::MatMul}));
  std::multiset<ir::PrimOp> t = ops("ji,kj->ik", {4, 3}, {5, 4});
  EXPECT_EQ(t.count(ir::PrimOp::MatMul), 1u);
  EXPECT_EQ(t.count(ir::PrimOp::Layout), 0u);
  EXPECT_EQ(ops("ij,jk->ik", {3, 4}, {4, 5}).count(ir::PrimOp::MatMul), 1u);
}

TEST(CoverageReduceEinsumErrors, Equation) {
  TensorType a{DType::F32, {2, 3}}, b{DType::F32, {3, 4}};
  auto node = [](const std::string& eq, std::vector<TensorType> ts) {
    return single_node("Einsum", ts, 1, {{"equation", eq}}, 12);
  };
  EXPECT_ERROR(single_node("Einsum", {a}, 1, {}, 12), "attribute 'equation' is required");
  EXPECT_ERROR(node("ij,jk", {a}), "equation 'ij,jk' has 2 terms for 1 inputs");
  EXPECT_ERROR(node("i1->i", {a}), "unexpected character '1'");
  EXPECT_ERROR(node("...i...", {a}), "term '...i...' has two ellipses");
  EXPECT_ERROR(node("ijk", {a}), "term 0 has 3 letters for input 0 of rank 2");
  EXPECT_ERROR(node("ij->k", {a}), "output label 'k' appears in no input");
  EXPECT_ERROR(node("ij->ii", {a}), "output label 'i' appears twice");
  EXPECT_ERROR(node("ij,ij", {a, b}), "dim 0 of input 1 has size 3 where its label 'i' has size 2");
  EXPECT_ERROR(node("...j->j", {{DType::F32, {2, 3, 4}}}),
               "the inputs have 2 broadcast dims ('...') but the output has no '...'");
  EXPECT_ERROR(node("ij,jk", {a, {DType::F64, {3, 4}}}), "input 1 is f64, input 0 is f32");
  EXPECT_ERROR(node("ij->ij->ij", {a}), "has two '->'");
  EXPECT_ERROR(node("ij", {{DType::BF16, {2, 3}}}), "input 0 has dtype bf16; Einsum-12 allows");
}

}  // namespace
}  // namespace orchid
