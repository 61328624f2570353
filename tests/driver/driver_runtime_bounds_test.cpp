// Indirect loads are bounds-checked at run time: a compiled model whose Gather reads indices
// from its caller fails a run with an index out of range with an error that names the node,
// the tensor it reads and the index, never a wild read; the next run with good indices works.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "driver/compile_options.h"
#include "driver/pipeline.h"
#include "interp/interp.h"
#include "runtime/model.h"
#include "runtime/session.h"
#include "support/random.h"
#include "testlib/errors.h"
#include "testlib/onnx_builder.h"
#include "testlib/temp_dir.h"
#include "testlib/tensors.h"

namespace orchid::driver {
namespace {

// table[50, 8] (a weight), gathered along axis 0 by the caller's ids[6], then doubled.
testlib::OnnxModel embedding() {
  Rng rng(11);
  testlib::OnnxModel m;
  m.inputs = {{"ids", {ir::DType::I64, {6}}}};
  m.initializers = {{"table", testlib::random_tensor({ir::DType::F32, {50, 8}}, rng)},
                    {"two", testlib::random_tensor({ir::DType::F32, {1}}, rng)}};
  m.nodes = {{"Gather", {"table", "ids"}, {"rows"}, {{"axis", int64_t{0}}}, "", "lookup"},
             {"Mul", {"rows", "two"}, {"y"}, {}, "", "scale"}};
  m.outputs = {"y"};
  return m;
}

ir::Tensor ids(std::vector<int64_t> v) {
  ir::Tensor t({ir::DType::I64, {static_cast<int64_t>(v.size())}});
  for (size_t k = 0; k < v.size(); ++k) t.set_i64(static_cast<int64_t>(k), v[k]);
  return t;
}

TEST(RuntimeBounds, AnIndexOutOfRangeIsAnErrorNamingNodeTensorAndIndex) {
  testlib::TempDir dir("orchid_bounds");
  std::string model = dir.file("embedding.onnx");
  std::ofstream(model, std::ios::binary) << testlib::serialize_model(embedding());
  CompileOptions o = test_compile_options(model, dir.file("out"));
  ASSERT_TRUE(compile_onnx(o).verified);

  ir::Graph g = testlib::import_model(embedding());
  runtime::Session session(runtime::Model::load(o.out_dir), runtime::SessionOptions{2});
  for (int64_t bad : {50, 1000000007, -51}) {  // -50..-1 count from the end, as ONNX says
    std::string msg = testlib::error_of([&] { session.run({{"ids", ids({3, 7, bad, 0, 1, 2})}}); });
    EXPECT_NE(msg.find("index " + std::to_string(bad < 0 ? bad + 50 : bad) + " is out of range: node 'lookup' reads 'table' (f32[50,8]) along dim 0"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("which must lie in [0, 50)"), std::string::npos) << msg;
  }
  ir::Tensor good = ids({3, 7, -1, 0, 49, 2});
  std::vector<ir::Tensor> got = session.run({{"ids", good}});
  std::vector<ir::Tensor> want = interp::run(g, {good});
  EXPECT_EQ(testlib::compare_tensors(got[0], want[0]), "");
}

}  // namespace
}  // namespace orchid::driver
