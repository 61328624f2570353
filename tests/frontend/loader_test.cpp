// The ONNX loader: each user-facing error names the file (and node, op type, opset where one
// is involved); corrupt or truncated bytes never crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>

#include <onnx/onnx_pb.h>

#include "fission/fission.h"
#include "interp/interp.h"
#include "frontend/onnx_loader.h"
#include "support/error.h"
#include "support/random.h"
#include "testlib/onnx_builder.h"
#include "testlib/errors.h"

namespace orchid {
namespace {

using testlib::OnnxModel;
using testlib::serialize_model;
using testlib::single_node;

const ir::TensorType kF32x4{ir::DType::F32, {2, 2}};


bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(Loader, LoadsASingleNodeModel) {
  OnnxModel m = single_node("Add", {kF32x4, kF32x4});
  frontend::ImportOptions opts;
  opts.onnx_shape_inference = true;
  frontend::OpGraph g = frontend::load_onnx_bytes(serialize_model(m), "m.onnx", opts);
  EXPECT_EQ(g.opset, 17);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Add");
  EXPECT_EQ(g.nodes[0].since_version, 14);
  EXPECT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.inferred.at("y0"), kF32x4);  // ONNX shape inference ran
  EXPECT_TRUE(frontend::load_onnx_bytes(serialize_model(m), "m.onnx").inferred.empty());  // by request only
}

TEST(Loader, CorruptAndTruncatedBytesAreUserErrors) {
  std::string good = serialize_model(single_node("Relu", {kF32x4}));
  EXPECT_TRUE(contains(testlib::error_of([&] { frontend::load_onnx_bytes("\xff\xff\xff garbage", "bad.onnx"); }),
                       "bad.onnx: not an ONNX model"));
  Rng rng(1);
  for (size_t cut = 1; cut < good.size(); cut += 3) {  // no truncation may crash
    std::string msg = testlib::error_of([&] { frontend::load_onnx_bytes(good.substr(0, cut), "t.onnx"); });
    EXPECT_TRUE(msg == "(no error)" || contains(msg, "t.onnx")) << cut << ": " << msg;
  }
  for (int trial = 0; trial < 200; ++trial) {  // nor may flipped bytes
    std::string bad = good;
    bad[static_cast<size_t>(rng.range(0, static_cast<int64_t>(bad.size())))] ^= static_cast<char>(rng.range(1, 256));
    try {
      fission::fission(frontend::load_onnx_bytes(bad, "f.onnx"));
    } catch (const UserError& e) {
      EXPECT_TRUE(contains(e.what(), "f.onnx")) << e.what();
    }
  }
}

TEST(Loader, MissingFileNamesThePath) {
  EXPECT_EQ(testlib::error_of([] { frontend::load_onnx("/nonexistent/m.onnx"); }), "/nonexistent/m.onnx: cannot open");
}

TEST(Loader, OpsetOutOfRange) {
  OnnxModel m = single_node("Relu", {kF32x4}, 1, {}, 18);
  EXPECT_EQ(testlib::error_of([&] { frontend::load_onnx_bytes(serialize_model(m), "o.onnx"); }),
            "o.onnx: opset 18 is outside the supported range 1-17");
}

TEST(Loader, DynamicDimensionsNeedAShape) {
  OnnxModel m = single_node("Relu", {kF32x4});
  std::string bytes = serialize_model(m);
  // Rebuild with a symbolic batch dim through the protobuf-free path: the loader's --shape
  // handling is exercised by giving a wrong rank and a conflicting dim.
  frontend::ImportOptions opts;
  opts.shapes["x0"] = {2, 2, 1};
  EXPECT_EQ(testlib::error_of([&] { frontend::load_onnx_bytes(bytes, "d.onnx", opts); }),
            "d.onnx: input 'x0': --shape gives rank 3, the model declares rank 2");
  opts.shapes["x0"] = {3, 2};
  EXPECT_EQ(testlib::error_of([&] { frontend::load_onnx_bytes(bytes, "d.onnx", opts); }),
            "d.onnx: input 'x0': --shape gives dim 0 = 3, the model fixes it to 2");
  opts.shapes.clear();
  opts.shapes["nope"] = {1};
  EXPECT_EQ(testlib::error_of([&] { frontend::load_onnx_bytes(bytes, "d.onnx", opts); }),
            "d.onnx: --shape names 'nope', which is not a graph input");
}

TEST(Loader, SymbolicDimensionIsRefusedOrFixed) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(serialize_model(single_node("Relu", {{ir::DType::F32, {1, 3}}}))));
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()
      ->mutable_dim(0)->set_dim_param("batch");
  std::string bytes = m.SerializeAsString();
  EXPECT_EQ(testlib::error_of([&] { frontend::load_onnx_bytes(bytes, "s.onnx"); }),
            "s.onnx: input 'x0' has a dynamic dimension 0 ('batch'): fix it with --shape x0=...");
  frontend::ImportOptions opts;
  opts.shapes["x0"] = {4, 3};
  frontend::OpGraph g = frontend::load_onnx_bytes(bytes, "s.onnx", opts);
  EXPECT_EQ(g.inputs[0].second, (ir::TensorType{ir::DType::F32, {4, 3}}));
  EXPECT_EQ(frontend::parse_dims("1x3x224x224", "--shape"), ir::Dims({1, 3, 224, 224}));
  EXPECT_EQ(testlib::error_of([] { frontend::parse_dims("1x-3", "--shape x"); }),
            "--shape x: bad shape '1x-3' (expected dims like 1x3x224x224)");
}

TEST(Loader, UndefinedInputNamesNodeAndOp) {
  OnnxModel m = single_node("Add", {kF32x4, kF32x4});
  m.nodes[0].inputs[1] = "ghost";
  EXPECT_EQ(testlib::error_of([&] { frontend::load_onnx_bytes(serialize_model(m), "u.onnx"); }),
            "u.onnx: node 'node' (Add, opset 17): input 'ghost' is neither a graph input, an "
            "initializer nor a node output");
}

TEST(Loader, NodesAreOrderedAndCyclesRefused) {
  ir::TensorType t{ir::DType::F32, {2}};
  OnnxModel m = single_node("Relu", {t});  // x0 -> a -> y0, written in reverse order
  m.nodes[0].outputs = {"a"};
  m.nodes.insert(m.nodes.begin(), testlib::OnnxNode{"Neg", {"a"}, {"y0"}, {}, ""});
  frontend::OpGraph g = frontend::load_onnx_bytes(serialize_model(m), "r.onnx");
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op_type, "Relu");
  m.nodes[1].inputs = {"y0"};  // Relu now reads Neg's output, which reads Relu's: a cycle
  EXPECT_EQ(testlib::error_of([&] { frontend::load_onnx_bytes(serialize_model(m), "r.onnx"); }),
            "r.onnx: the graph has a cycle");
}

TEST(Loader, UnknownAndForeignOpsAreUnsupported) {
  OnnxModel m = single_node("FrobnicateTensor", {kF32x4});
  std::string msg = testlib::error_of([&] { fission::fission(frontend::load_onnx_bytes(serialize_model(m), "k.onnx")); });
  EXPECT_EQ(msg, "k.onnx: node 'node' (FrobnicateTensor, opset 17): not supported: ONNX defines no "
                 "operator FrobnicateTensor in opset 17");
  OnnxModel ms = single_node("Gelu", {kF32x4});
  ms.nodes[0].domain = "com.microsoft";
  msg = testlib::error_of([&] { fission::fission(frontend::load_onnx_bytes(serialize_model(ms), "k.onnx")); });
  EXPECT_EQ(msg, "k.onnx: node 'node' (com.microsoft.Gelu, opset 0): not supported: operators of domain 'com.microsoft'");
  OnnxModel e = single_node("Exp", {{ir::DType::I32, {3}}});
  msg = testlib::error_of([&] { fission::fission(frontend::load_onnx_bytes(serialize_model(e), "k.onnx")); });
  EXPECT_EQ(msg, "k.onnx: node 'node' (Exp, opset 17): not supported: input 0 of dtype i32 (supported: float)");
}

// A model whose initializer "w" lives in an external file at `location`.
std::string external_model(const std::string& location, const ir::Tensor& w) {
  OnnxModel m = single_node("Add", {kF32x4});
  m.nodes[0].inputs.push_back("w");
  m.initializers.emplace_back("w", w);
  onnx::ModelProto p;
  EXPECT_TRUE(p.ParseFromString(serialize_model(m)));
  onnx::TensorProto* t = p.mutable_graph()->mutable_initializer(0);
  t->clear_raw_data();
  t->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto* loc = t->add_external_data();
  loc->set_key("location");
  loc->set_value(location);
  auto* off = t->add_external_data();
  off->set_key("offset");
  off->set_value("8");
  return p.SerializeAsString();
}

TEST(Loader, ExternalDataIsReadAndConfinedToTheModelDirectory) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("orchid_ext_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ir::Tensor w(kF32x4);
  for (int i = 0; i < 4; ++i) w.set_f64(i, i + 0.5);
  std::ofstream(dir / "w.bin", std::ios::binary)
      << std::string(8, 'p') << std::string(reinterpret_cast<const char*>(w.data()), 16);
  std::string model = (dir / "m.onnx").string();
  frontend::OpGraph g = frontend::load_onnx_bytes(external_model("w.bin", w), model);
  EXPECT_EQ(g.initializers.at(0).second, w);
  EXPECT_EQ(testlib::error_of([&] { frontend::load_onnx_bytes(external_model("../w.bin", w), model); }),
            model + ": initializer 'w': external data location '../w.bin' leaves the model's directory");
  EXPECT_EQ(testlib::error_of([&] { frontend::load_onnx_bytes(external_model("/etc/passwd", w), model); }),
            model + ": initializer 'w': external data location '/etc/passwd' must be a relative path");
  std::string huge = external_model("w.bin", w);
  {  // offset 1, length INT64_MAX: the range check must not overflow
    onnx::ModelProto p;
    ASSERT_TRUE(p.ParseFromString(huge));
    auto* len = p.mutable_graph()->mutable_initializer(0)->add_external_data();
    len->set_key("length");
    len->set_value("9223372036854775807");
    huge = p.SerializeAsString();
  }
  EXPECT_TRUE(contains(testlib::error_of([&] { frontend::load_onnx_bytes(huge, model); }), "lies outside"));
  std::ofstream(dir / "short.bin", std::ios::binary) << std::string(12, 'p');
  EXPECT_TRUE(contains(testlib::error_of([&] { frontend::load_onnx_bytes(external_model("short.bin", w), model); }),
                       "initializer 'w': raw data has 4 bytes, f32[2,2] needs 16"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace orchid

namespace orchid {
namespace {

using testlib::OnnxModel;

// ---- If on a constant condition: the chosen branch inlined ----

onnx::TensorProto bool_scalar(const std::string& name, bool v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::BOOL);
  t.add_int32_data(v ? 1 : 0);
  return t;
}

void add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> ins, const std::string& out) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  for (const auto& i : ins) n->add_input(i);
  n->add_output(out);
}

// If(c) { y = x + one (one: the branch's own initializer) } else { If(c2) { x * x } else { -x } }.
std::string if_model(bool c, bool c2) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("if");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  *g->add_initializer() = bool_scalar("c", c);
  *g->add_initializer() = bool_scalar("c2", c2);
  g->add_output()->set_name("z");
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("If");
  n->set_name("outer");
  n->add_input("c");
  n->add_output("z");
  auto branch = [&](onnx::NodeProto* node, const char* name) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    return a->mutable_g();
  };
  onnx::GraphProto* then_g = branch(n, "then_branch");
  onnx::TensorProto* one = then_g->add_initializer();
  one->set_name("one");
  one->set_data_type(onnx::TensorProto::FLOAT);
  one->add_dims(3);
  for (int k = 0; k < 3; ++k) one->add_float_data(1);
  add_node(then_g, "Add", {"x", "one"}, "y");
  then_g->add_output()->set_name("y");
  onnx::GraphProto* else_g = branch(n, "else_branch");
  onnx::NodeProto* inner = else_g->add_node();
  inner->set_op_type("If");
  inner->add_input("c2");
  inner->add_output("y");  // the same name as the other branch's: each branch is its own scope
  add_node(branch(inner, "then_branch"), "Mul", {"x", "x"}, "sq");
  inner->mutable_attribute(0)->mutable_g()->add_output()->set_name("sq");
  add_node(branch(inner, "else_branch"), "Neg", {"x"}, "ng");
  inner->mutable_attribute(1)->mutable_g()->add_output()->set_name("ng");
  else_g->add_output()->set_name("y");
  return m.SerializeAsString();
}

TEST(Loader, IfOnAConstantConditionInlinesItsBranch) {
  ir::Tensor x(ir::TensorType{ir::DType::F32, {3}});
  for (int64_t k = 0; k < 3; ++k) x.set_f64(k, double(k) - 1.5);
  struct Case {
    bool c, c2;
    std::function<double(double)> f;
  } cases[] = {{true, false, [](double v) { return v + 1; }},
               {false, true, [](double v) { return v * v; }},
               {false, false, [](double v) { return -v; }}};
  for (const Case& k : cases) {
    frontend::OpGraph og = frontend::load_onnx_bytes(if_model(k.c, k.c2), "if.onnx");
    for (const auto& n : og.nodes) EXPECT_NE(n.op_type, "If");
    ir::Graph g = fission::fission(og);
    ir::Tensor y = interp::run(g, {x})[0];
    for (int64_t i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(y.get_f64(i), k.f(x.get_f64(i))) << k.c << k.c2;
  }
}

// A branch's own initializer may live in an external file too.
TEST(Loader, InlinedBranchesReadTheirExternalData) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("orchid_if_ext_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  float ones[3] = {1, 1, 1};
  std::ofstream(dir / "one.bin", std::ios::binary) << std::string(reinterpret_cast<const char*>(ones), sizeof ones);
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(if_model(true, false)));
  onnx::TensorProto* one = m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_initializer(0);
  one->clear_float_data();
  one->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto* loc = one->add_external_data();
  loc->set_key("location");
  loc->set_value("one.bin");
  ir::Graph g = fission::fission(frontend::load_onnx_bytes(m.SerializeAsString(), (dir / "if.onnx").string()));
  fs::remove_all(dir);
  ir::Tensor x(ir::TensorType{ir::DType::F32, {3}});
  ir::Tensor y = interp::run(g, {x})[0];
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(y.get_f64(i), 1);
}

TEST(Loader, IfOnARunTimeConditionIsRefused) {
  std::string bytes = if_model(true, true);
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  m.mutable_graph()->mutable_initializer()->DeleteSubrange(0, 1);  // "c" becomes an input
  auto* c = m.mutable_graph()->add_input();
  c->set_name("c");
  c->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  c->mutable_type()->mutable_tensor_type()->mutable_shape();
  std::string msg = testlib::error_of([&] { fission::fission(frontend::load_onnx_bytes(m.SerializeAsString(), "if.onnx")); });
  EXPECT_NE(msg.find("node 'outer' (If, opset 17)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("operator If"), std::string::npos) << msg;
}

}  // namespace
}  // namespace orchid
