#include "testlib/onnx_builder.h"

#include <onnx/onnx_pb.h>

#include <cstring>

#include "fission/fission.h"
#include "frontend/onnx_loader.h"
#include "support/error.h"

namespace orchid::testlib {

namespace {

int32_t onnx_code(ir::DType t) {
  switch (t) {
    case ir::DType::F32: return 1;
    case ir::DType::U8: return 2;
    case ir::DType::I8: return 3;
    case ir::DType::U16: return 4;
    case ir::DType::I16: return 5;
    case ir::DType::I32: return 6;
    case ir::DType::I64: return 7;
    case ir::DType::Bool: return 9;
    case ir::DType::F16: return 10;
    case ir::DType::F64: return 11;
    case ir::DType::U32: return 12;
    case ir::DType::U64: return 13;
    case ir::DType::BF16: return 16;
  }
  return 0;
}

void fill_tensor(onnx::TensorProto* p, const std::string& name, const ir::Tensor& t) {
  p->set_name(name);
  p->set_data_type(onnx_code(t.dtype()));
  for (int64_t d : t.shape()) p->add_dims(d);
  p->set_raw_data(std::string(reinterpret_cast<const char*>(t.data()), t.bytes().size()));
}

void set_attr(onnx::AttributeProto* a, const std::string& name, const frontend::Attribute& v) {
  a->set_name(name);
  if (const auto* i = std::get_if<int64_t>(&v)) {
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(*i);
  } else if (const auto* f = std::get_if<double>(&v)) {
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(*f));
  } else if (const auto* s = std::get_if<std::string>(&v)) {
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(*s);
  } else if (const auto* is = std::get_if<std::vector<int64_t>>(&v)) {
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : *is) a->add_ints(x);
  } else if (const auto* fs = std::get_if<std::vector<double>>(&v)) {
    a->set_type(onnx::AttributeProto::FLOATS);
    for (double x : *fs) a->add_floats(static_cast<float>(x));
  } else if (const auto* ss = std::get_if<std::vector<std::string>>(&v)) {
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const auto& x : *ss) a->add_strings(x);
  } else if (const auto* t = std::get_if<ir::Tensor>(&v)) {
    a->set_type(onnx::AttributeProto::TENSOR);
    fill_tensor(a->mutable_t(), name, *t);
  }
}

}  // namespace

std::string serialize_model(const OnnxModel& m) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("orchid-tests");
  auto* op = model.add_opset_import();
  op->set_domain("");
  op->set_version(m.opset);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("test");
  for (const auto& [name, type] : m.inputs) {
    auto* in = g->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx_code(type.dtype));
    auto* shape = tt->mutable_shape();
    for (int64_t d : type.shape) shape->add_dim()->set_dim_value(d);
  }
  for (const auto& [name, t] : m.initializers) fill_tensor(g->add_initializer(), name, t);
  for (const auto& n : m.nodes) {
    auto* node = g->add_node();
    node->set_op_type(n.op_type);
    node->set_domain(n.domain);
    node->set_name(n.name);
    for (const auto& i : n.inputs) node->add_input(i);
    for (const auto& o : n.outputs) node->add_output(o);
    for (const auto& [name, v] : n.attrs) set_attr(node->add_attribute(), name, v);
  }
  for (const auto& o : m.outputs) g->add_output()->set_name(o);
  return model.SerializeAsString();
}

ir::Graph import_model(const OnnxModel& m, const std::string& name) {
  return fission::fission(frontend::load_onnx_bytes(serialize_model(m), name));
}

OnnxModel single_node(const std::string& op_type, const std::vector<ir::TensorType>& inputs,
                      int num_outputs, std::vector<std::pair<std::string, frontend::Attribute>> attrs,
                      int64_t opset) {
  OnnxModel m;
  m.opset = opset;
  OnnxNode n;
  n.op_type = op_type;
  n.attrs = std::move(attrs);
  for (size_t k = 0; k < inputs.size(); ++k) {
    std::string name = "x" + std::to_string(k);
    m.inputs.emplace_back(name, inputs[k]);
    n.inputs.push_back(name);
  }
  for (int k = 0; k < num_outputs; ++k) {
    std::string name = "y" + std::to_string(k);
    n.outputs.push_back(name);
    m.outputs.push_back(name);
  }
  m.nodes.push_back(std::move(n));
  return m;
}

}  // namespace orchid::testlib
