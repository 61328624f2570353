// A convolution step graph as one cuDNN call (dnn_conv.h).
#include "runtime/cuda/dnn_conv.h"

#include <sstream>

#include "runtime/onednn_pattern.h"

namespace orchid::runtime::cuda {

namespace {

std::string match(const onednn::LinearPattern& p, const ir::Graph& g, DnnConv& c) {
  if (p.op != ir::PrimOp::Conv) return "a matmul (only convolutions)";
  if (p.bias || !p.post_ops.empty()) return "a bias or post-op after the convolution (it is generated)";
  if (!p.out_strides.empty()) return "the result is written through a permutation";
  if (p.a.input < 0 || p.b.input < 0) return "an operand that is a constant of the step graph";
  if (!p.a.strides.empty() || !p.b.strides.empty()) return "an operand read through a view with strides";
  const auto& attrs = std::get<ir::ConvAttrs>(p.attrs);
  size_t spatial = attrs.strides.size();
  if (spatial != 2 && spatial != 3) return std::to_string(spatial) + " spatial dims (cuDNN takes 2 or 3)";
  if (attrs.pads_begin != attrs.pads_end) return "padding that differs at the two ends of a dim";
  if (g.type(g.outputs()[0]).numel() == 0) return "an empty output";
  c.x = p.a.input;
  c.w = p.b.input;
  c.y = static_cast<int32_t>(g.inputs().size());
  c.x_dims = p.a.shape;
  c.w_dims = p.b.shape;
  c.y_dims = p.out;
  c.pads = attrs.pads_begin;
  c.strides = attrs.strides;
  c.dilations = attrs.dilations;
  c.groups = attrs.groups;
  c.dtype = p.dtype;
  return "";
}

}  // namespace

DnnMatch match_dnn_conv(const ir::Graph& g) {
  DnnConv c;
  std::string why = onednn::match_for("cudnn", g, [&](const onednn::LinearPattern& p) { return match(p, g, c); });
  if (!why.empty()) return {std::nullopt, why};
  return {c, ""};
}

std::string describe(const DnnConv& c) {
  std::ostringstream os;
  os << "cudnn conv " << ir::dtype_name(c.dtype) << " " << ir::dims_str(c.x_dims) << " * " << ir::dims_str(c.w_dims) << ", strides "
     << ir::dims_str(c.strides) << ", pads " << ir::dims_str(c.pads);
  bool dilated = false;
  for (int64_t d : c.dilations) dilated |= d != 1;
  if (dilated) os << ", dilations " << ir::dims_str(c.dilations);
  if (c.groups != 1) os << ", groups " << c.groups;
  return os.str();
}

}  // namespace orchid::runtime::cuda
