// TfIdfVectorizer (rules_sample.cpp) against a direct count of n-gram occurrences (every
// start and skip; unigrams once) on seeded random sequences and pools: every mode, with and
// without weights, 1-D and batched input, n-gram length ranges that leave some pool n-grams
// uncounted.
#include <gtest/gtest.h>

#include "interp/interp.h"
#include "support/random.h"
#include "testlib/errors.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"

namespace orchid {
namespace {

using ir::DType;
using ir::Dims;
using ir::Tensor;
using ir::TensorType;

TEST(CoverageTfIdf, MatchesDirectCounts) {
  const char* modes[] = {"TF", "IDF", "TFIDF"};
  for (uint64_t seed = 1; seed <= 18; ++seed) {
    Rng rng(seed * 811);
    int64_t len = rng.range(1, 12), rows = rng.range(1, 3), max_skip = rng.range(0, 4), vocab = rng.range(2, 5);
    int64_t max_len = rng.range(1, 4), min_n = rng.range(1, max_len + 1), max_n = rng.range(min_n, max_len + 1);
    bool batched = rng.coin(), weighted = rng.coin();
    std::string mode = modes[seed % 3];
    // The pool: for each length 1..max_len a few random n-grams; ngram_counts holds the pool
    // position where each length's n-grams begin.
    std::vector<std::vector<int64_t>> grams;
    std::vector<int64_t> counts, pool;
    for (int64_t n = 1; n <= max_len; ++n) {
      counts.push_back(static_cast<int64_t>(pool.size()));
      for (int64_t k = rng.range(0, 4); k > 0; --k) {
        std::vector<int64_t> g;
        for (int64_t j = 0; j < n; ++j) g.push_back(rng.range(0, vocab));
        grams.push_back(g);
        pool.insert(pool.end(), g.begin(), g.end());
      }
    }
    std::vector<int64_t> indexes(grams.size());
    for (size_t k = 0; k < indexes.size(); ++k) indexes[k] = static_cast<int64_t>(indexes.size() - 1 - k);
    std::vector<double> weights;
    for (size_t k = 0; k < grams.size(); ++k) weights.push_back(static_cast<float>(rng.uniform(0.5, 2)));
    if (grams.empty()) continue;
    SCOPED_TRACE("seed " + std::to_string(seed) + " " + mode);
    Tensor x(TensorType{DType::I64, batched ? Dims{rows, len} : Dims{len}});
    for (int64_t i = 0; i < x.numel(); ++i) x.set_i64(i, rng.range(0, vocab));
    std::vector<std::pair<std::string, frontend::Attribute>> attrs = {
        {"mode", mode}, {"min_gram_length", min_n}, {"max_gram_length", max_n}, {"max_skip_count", max_skip},
        {"ngram_counts", counts}, {"ngram_indexes", indexes}, {"pool_int64s", pool}};
    if (weighted) attrs.emplace_back("weights", weights);
    Tensor got = interp::run(testlib::import_model(testlib::single_node("TfIdfVectorizer", {x.type()}, 1, attrs, 9)), {x})[0];
    int64_t out = static_cast<int64_t>(grams.size()), nrows = batched ? rows : 1;
    Tensor want(TensorType{DType::F32, batched ? Dims{rows, out} : Dims{out}});
    for (int64_t r = 0; r < nrows; ++r)
      for (size_t g = 0; g < grams.size(); ++g) {
        auto n = static_cast<int64_t>(grams[g].size());
        double count = 0;
        if (n >= min_n && n <= max_n)
          for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip); ++skip)
            for (int64_t start = 0; start + (n - 1) * (skip + 1) < len; ++start) {
              bool match = true;
              for (int64_t j = 0; j < n; ++j) match = match && x.get_i64(r * len + start + j * (skip + 1)) == grams[g][static_cast<size_t>(j)];
              count += match;
            }
        double w = weighted ? weights[g] : 1.0;  // TF counts; IDF and TFIDF weigh
        want.set_f64(r * out + indexes[g], mode == "TF" ? count : mode == "IDF" ? (count > 0 ? w : 0) : count * w);
      }
    EXPECT_EQ(testlib::compare_tensors(got, want, 1e-6, 1e-6), "") << "len " << len << " skip " << max_skip << " n " << min_n << ".." << max_n;
  }
}

TEST(CoverageTfIdf, BadIndexesAndCountsAreUserErrors) {
  auto model = [](std::vector<int64_t> counts, std::vector<int64_t> indexes) {
    std::vector<std::pair<std::string, frontend::Attribute>> attrs = {
        {"mode", std::string("TF")}, {"min_gram_length", int64_t{1}}, {"max_gram_length", int64_t{1}},
        {"max_skip_count", int64_t{0}}, {"ngram_counts", counts}, {"ngram_indexes", indexes},
        {"pool_int64s", std::vector<int64_t>{4, 5}}};
    return testlib::single_node("TfIdfVectorizer", {TensorType{DType::I64, {6}}}, 1, attrs, 9);
  };
  std::string negative = testlib::error_of([&] { testlib::import_model(model({0}, {0, -1})); });
  EXPECT_NE(negative.find("negative index -1"), std::string::npos) << negative;
  std::string beyond = testlib::error_of([&] { testlib::import_model(model({3}, {0})); });
  EXPECT_NE(beyond.find("ngram_counts[0] = 3 is outside the pool of 2"), std::string::npos) << beyond;
  // Pool entries before ngram_counts[0] belong to no n-gram: counts {1} leaves one unigram.
  ir::Graph g = testlib::import_model(model({1}, {0}));
  Tensor x(TensorType{DType::I64, {6}});
  for (int64_t i = 0; i < 6; ++i) x.set_i64(i, i % 3 == 0 ? 5 : 4);
  Tensor got = interp::run(g, {x})[0];
  ASSERT_EQ(got.numel(), 1);
  EXPECT_EQ(got.get_f64(0), 2);  // 5 occurs twice; 4 is not counted
}

}  // namespace
}  // namespace orchid
