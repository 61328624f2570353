// The fission driver: naming, folding of constant subgraphs, dead-code elimination.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fission/fission.h"
#include "interp/interp.h"
#include "ir/printer.h"
#include "testlib/errors.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"

namespace orchid {
namespace {

using ir::DType;
using ir::TensorType;
using testlib::import_model;
using testlib::single_node;

TEST(FissionDriver, OutputsKeepTheirOnnxNames) {
  // MatMul of a 1-D operand and Gemm both build their result under derived names first.
  ir::Graph mm = import_model(single_node("MatMul", {{DType::F32, {3}}, {DType::F32, {3, 4}}}));
  EXPECT_EQ(mm.value(mm.outputs()[0]).name, "y0") << ir::print_graph(mm);
  ir::Graph gemm = import_model(single_node("Gemm", {{DType::F32, {2, 3}}, {DType::F32, {3, 4}}, {DType::F32, {4}}},
                                            1, {{"alpha", 0.5}}));
  EXPECT_EQ(gemm.value(gemm.outputs()[0]).name, "y0") << ir::print_graph(gemm);
}

TEST(FissionDriver, ConstantSubgraphsFoldAndDeadValuesGo) {
  // y = x + (w * 2): the product of constants folds; neither w nor 2 survives as a value.
  TensorType t{DType::F32, {4}};
  testlib::OnnxModel m = single_node("Add", {t});
  m.nodes[0].inputs.push_back("w2");
  ir::Tensor w(t), two(TensorType{DType::F32, {}});
  for (int i = 0; i < 4; ++i) w.set_f64(i, i);
  two.set_f64(0, 2);
  m.initializers = {{"w", w}, {"two", two}};
  m.nodes.insert(m.nodes.begin(), testlib::OnnxNode{"Mul", {"w", "two"}, {"w2"}, {}, ""});
  ir::Graph g = import_model(m);
  ASSERT_EQ(g.num_nodes(), 1) << ir::print_graph(g);
  ASSERT_EQ(g.constants().size(), 1u);
  EXPECT_EQ(g.value(g.nodes()[0].inputs[1]).name, "w2");
  Rng rng(1);
  ir::Tensor x = testlib::random_tensor(t, rng);
  ir::Tensor y = interp::run(g, {x})[0];
  for (int i = 0; i < 4; ++i) EXPECT_EQ(y.get_f64(i), static_cast<float>(x.get_f64(i) + 2.0 * i));
}

// Shapes computed from model data are checked before anything is allocated.
TEST(FissionDriver, HugeOrNegativeShapesAreUserErrors) {
  auto with_shape_input = [](const std::string& op, const std::vector<int64_t>& dims) {
    testlib::OnnxModel m = single_node(op, {{DType::F32, {1}}});
    ir::Tensor shape(TensorType{DType::I64, {static_cast<int64_t>(dims.size())}});
    for (size_t k = 0; k < dims.size(); ++k) shape.set_i64(static_cast<int64_t>(k), dims[k]);
    m.initializers.emplace_back("shape", shape);
    m.nodes[0].inputs.push_back("shape");
    return testlib::error_of([&] { import_model(m, "h.onnx"); });
  };
  EXPECT_EQ(with_shape_input("Expand", {-5}),
            "h.onnx: node 'node' (Expand, opset 17): a result of shape [-5] has a negative dimension or "
            "too many elements");
  EXPECT_EQ(with_shape_input("Tile", {int64_t(1) << 62}),
            "h.onnx: node 'node' (Tile, opset 17): a result of shape [4611686018427387904] has a negative "
            "dimension or too many elements");
  testlib::OnnxModel cos = single_node("ConstantOfShape", {});
  ir::Tensor shape(TensorType{DType::I64, {2}});
  shape.set_i64(0, int64_t(1) << 20);
  shape.set_i64(1, int64_t(1) << 20);
  cos.initializers.emplace_back("shape", shape);
  cos.nodes[0].inputs = {"shape"};
  EXPECT_EQ(testlib::error_of([&] { import_model(cos, "h.onnx"); }),
            "h.onnx: node 'node' (ConstantOfShape, opset 17): a result of type f32[1048576,1048576] takes "
            "4398046511104 bytes, more than the limit of 4294967296");
}

// docs/ops.md gives each supported operator's decomposition (ops_doc.def): none missing, and
// no line for an operator the table does not have.
TEST(FissionDriver, EveryOperatorHasItsDecomposition) {
  std::set<std::string> ops;
  for (const fission::OpSupport& s : fission::supported_ops()) {
    EXPECT_FALSE(s.decomposition.empty()) << s.op_type << " has no line in ops_doc.def";
    ops.insert(s.op_type);
  }
  for (const char* op : {
#define ORCHID_OP_DOC(op, text) op,
#include "fission/ops_doc.def"
#undef ORCHID_OP_DOC
       })
    EXPECT_TRUE(ops.count(op)) << "ops_doc.def has a line for " << op << ", which fission does not support";
}

}  // namespace
}  // namespace orchid
