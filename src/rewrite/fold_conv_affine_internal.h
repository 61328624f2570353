// Private to fold_conv_affine (fold_conv_affine.cpp: finding and composing chains;
// fold_conv_affine_rebuild.cpp: the rewritten copy of the graph).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "ir/graph.h"

namespace orchid::rewrite::detail {

// Values that depend on no graph input: constants, and outputs of non-opaque nodes all of
// whose inputs are such values (after fission: views of weights, BatchNormalization's gain).
// Their data is computed on demand by the interpreter (f64, rounded to the value's dtype once,
// as a materialised tensor would be) and cached.
class ConstValues {
 public:
  explicit ConstValues(const ir::Graph& g);
  bool is_const(ir::ValueId v) const { return known_[static_cast<size_t>(v.v)]; }
  const ir::Tensor& data(ir::ValueId v);  // v must be constant-valued

 private:
  const ir::Graph& g_;
  std::vector<bool> known_;               // per value
  std::map<int32_t, ir::Tensor> cache_;   // computed node outputs
};

// A chain to fold: the conv node, its links in order, and the composed map per channel.
struct Fold {
  int32_t conv = -1;
  std::vector<int32_t> links;
  std::vector<double> scale, shift;  // A[c], B[c]
};

// The graph with each fold applied (fold_conv_affine.h, "The rewrite").
ir::Graph rebuild_with_folds(const ir::Graph& g, ConstValues& consts, const std::vector<Fold>& folds);

}  // namespace orchid::rewrite::detail
