// The graph walk: validate the inputs, evaluate the nodes in order, convert the results.
#include "interp/interp.h"

#include "interp/buffer.h"
#include "interp/kernels.h"
#include "ir/printer.h"
#include "ir/stats.h"
#include "support/error.h"

namespace orchid::interp {

using detail::Buffer;

namespace {

bool computed(const Buffer& b, const ir::TensorType& t) {
  auto size = static_cast<int64_t>(ir::is_float(t.dtype) ? b.f.size() : b.i.size());
  return b.type == t && size == t.numel();
}

void check_inputs(const ir::Graph& g, const std::vector<ir::Tensor>& inputs) {
  ORCHID_USER_CHECK(inputs.size() == g.inputs().size())
      << "graph @" << g.name << " takes " << g.inputs().size() << " inputs, given "
      << inputs.size();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const ir::Value& v = g.value(g.inputs()[k]);
    ORCHID_USER_CHECK(inputs[k].type() == v.type)
        << "input " << k << " (" << ir::print_value_name(v.name) << ") must be "
        << ir::type_str(v.type) << ", given " << ir::type_str(inputs[k].type());
  }
}

void eval_node(const ir::Graph& g, ir::NodeId id, Precision precision, std::vector<Buffer>& env) {
  const ir::Primitive& p = g.node(id);
  detail::NodeEval ne{g, id, precision, {}, {}};
  for (ir::ValueId in : p.inputs) {
    const Buffer& b = env[static_cast<size_t>(in.v)];
    ORCHID_CHECK(computed(b, g.type(in))) << ne.label() << " reads %" << g.value(in).name
                                       << " before it is computed";
    ne.in.push_back(&b);
  }
  for (ir::ValueId out : p.outputs) ne.out.push_back(detail::make_buffer(g.type(out)));
  bool float_linear = !p.outputs.empty() && ir::is_float(g.type(p.outputs[0]).dtype);
  switch (p.op) {
    case ir::PrimOp::View:
      ORCHID_CHECK(ne.in.size() == 1 && ne.out.size() == 1 &&
                   ne.in[0]->type.dtype == ne.out[0].type.dtype &&
                   ne.in[0]->numel() == ne.out[0].numel())
          << ne.label() << ": a view keeps the dtype and the element count";
      ne.out[0].f = ne.in[0]->f;  // the interpreter copies where kernels alias
      ne.out[0].i = ne.in[0]->i;
      break;
    case ir::PrimOp::MatMul:
      if (float_linear) detail::eval_matmul(ne); else detail::eval_generic(ne);
      break;
    case ir::PrimOp::Conv:
      if (float_linear) detail::eval_conv(ne); else detail::eval_generic(ne);
      break;
    case ir::PrimOp::Opaque: detail::eval_opaque(ne); break;
    case ir::PrimOp::Elementwise:
    case ir::PrimOp::Reduce:
    case ir::PrimOp::Broadcast:
    case ir::PrimOp::Layout: detail::eval_generic(ne); break;
  }
  for (size_t k = 0; k < p.outputs.size(); ++k)
    env[static_cast<size_t>(p.outputs[k].v)] = std::move(ne.out[k]);
}

// Evaluates the graph; with `keep_all` every value survives, else each node output is
// released after its last reader unless it is a graph output.
std::vector<Buffer> evaluate(const ir::Graph& g, const std::vector<ir::Tensor>& inputs,
                             Precision precision, bool keep_all) {
  check_inputs(g, inputs);
  std::vector<Buffer> env(static_cast<size_t>(g.num_values()));
  for (size_t k = 0; k < inputs.size(); ++k)
    env[static_cast<size_t>(g.inputs()[k].v)] = detail::buffer_from_tensor(inputs[k]);
  std::vector<int32_t> last_use = ir::last_uses(g);
  for (int32_t v = 0; v < g.num_values(); ++v) {
    const ir::Value& val = g.value(ir::ValueId(v));
    if (val.origin == ir::ValueOrigin::Constant)
      env[static_cast<size_t>(v)] = detail::buffer_from_tensor(g.constant(ir::ValueId(v)));
  }
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    eval_node(g, ir::NodeId(n), precision, env);
    if (keep_all) continue;
    const ir::Primitive& p = g.node(ir::NodeId(n));
    for (ir::ValueId v : p.inputs)
      if (last_use[static_cast<size_t>(v.v)] == n) env[static_cast<size_t>(v.v)] = Buffer{};
    for (ir::ValueId v : p.outputs)
      if (last_use[static_cast<size_t>(v.v)] < n) env[static_cast<size_t>(v.v)] = Buffer{};
  }
  return env;
}

}  // namespace

std::vector<ir::Tensor> run(const ir::Graph& g, const std::vector<ir::Tensor>& inputs,
                            const Options& opts) {
  std::vector<Buffer> env = evaluate(g, inputs, opts.precision, false);
  std::vector<ir::Tensor> out;
  for (ir::ValueId v : g.outputs()) {
    ORCHID_CHECK(v.valid() && v.v < g.num_values()) << "graph output " << v.v << " undefined";
    const Buffer& b = env[static_cast<size_t>(v.v)];
    ORCHID_CHECK(computed(b, g.type(v))) << "graph output %" << g.value(v).name << " never computed";
    out.push_back(detail::tensor_from_buffer(b, opts.f64_outputs));
  }
  return out;
}

std::vector<ir::Tensor> run_all(const ir::Graph& g, const std::vector<ir::Tensor>& inputs,
                                const Options& opts) {
  std::vector<Buffer> env = evaluate(g, inputs, opts.precision, true);
  std::vector<ir::Tensor> out;
  for (int32_t v = 0; v < g.num_values(); ++v) {
    const Buffer& b = env[static_cast<size_t>(v)];
    ORCHID_CHECK(computed(b, g.type(ir::ValueId(v))))
        << "%" << g.value(ir::ValueId(v)).name << " never computed";
    out.push_back(detail::tensor_from_buffer(b, opts.f64_outputs));
  }
  return out;
}

}  // namespace orchid::interp
