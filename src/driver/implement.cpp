#include "driver/implement.h"

#include <algorithm>
#include <optional>

#include "ir/subgraph.h"
#include "runtime/library_step.h"
#include "support/error.h"

#ifdef ORCHID_HAVE_CUDA
#include "runtime/cuda/dnn_conv.h"
#include "runtime/cuda/lt_matmul.h"
#endif

namespace orchid::driver {

std::string_view step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::Generated: return "generated";
    case StepKind::OneDnn: return "onednn";
    case StepKind::Reference: return "reference";
    case StepKind::Alias: return "alias";
    case StepKind::CublasLt: return "cublaslt";
    case StepKind::Cudnn: return "cudnn";
    case StepKind::OneDnnWinograd: return "onednn_winograd";
    case StepKind::UGraph: return "ugraph";
  }
  return "?";
}

ir::Graph kernel_graph(const ir::Graph& g, const StepChoice& s) {
  return ir::extract_subgraph(g, s.kernel.nodes, s.inputs, s.kernel.outputs);
}

std::string cublaslt_refusal(const ir::Graph& kernel_graph) {
#ifdef ORCHID_HAVE_CUDA
  runtime::cuda::LtMatch m = runtime::cuda::match_lt_matmul(kernel_graph);
  if (!m.matmul) return m.reason;
  const runtime::cuda::LtMatmul& mm = *m.matmul;
  if (mm.batch * mm.m * mm.n * mm.k < kLtMinMultiplyAdds)
    return "cublaslt: fewer than " + std::to_string(kLtMinMultiplyAdds) + " multiply-adds";
  return "";
#else
  (void)kernel_graph;
  return "cublaslt: this build of Orchid has no CUDA runtime";
#endif
}

std::string cudnn_refusal(const ir::Graph& kernel_graph) {
#ifdef ORCHID_HAVE_CUDA
  runtime::cuda::DnnMatch m = runtime::cuda::match_dnn_conv(kernel_graph);
  if (!m.conv) return m.reason;
  if (m.conv->groups != 1) return "cudnn: a grouped convolution";
  int64_t taps = 1;
  for (size_t d = 2; d < m.conv->w_dims.size(); ++d) taps *= m.conv->w_dims[d];
  if (taps < kDnnMinKernelVolume) return "cudnn: fewer than " + std::to_string(kDnnMinKernelVolume) + " kernel taps";
  return "";
#else
  (void)kernel_graph;
  return "cudnn: this build of Orchid has no CUDA runtime";
#endif
}

bool is_library(StepKind k) {
  return k == StepKind::OneDnn || k == StepKind::OneDnnWinograd || k == StepKind::CublasLt || k == StepKind::Cudnn;
}

namespace {

// The libraries that run linear kernels: oneDNN (the CPU), cuBLASLt and cuDNN (a GPU), or none.
enum class Libraries { OneDnn, Gpu, None };

StepKind choose(const ir::Graph& g, const StepChoice& s, Libraries libs) {
  int linear = 0;
  for (ir::NodeId n : s.kernel.nodes) {
    ir::PrimKind k = g.node(n).kind();
    if (k == ir::PrimKind::Opaque) return StepKind::Reference;
    linear += k == ir::PrimKind::Linear;
  }
  if (s.kernel.nodes.size() == 1 && g.node(s.kernel.nodes[0]).op == ir::PrimOp::View) return StepKind::Alias;
  if (libs == Libraries::OneDnn && linear == 1 && runtime::library_step_unsupported("onednn", kernel_graph(g, s)).empty())
    return StepKind::OneDnn;
  if (libs == Libraries::Gpu && linear == 1) {
    bool conv = false;
    for (ir::NodeId n : s.kernel.nodes) conv |= g.node(n).op == ir::PrimOp::Conv;
    ir::Graph kg = kernel_graph(g, s);
    if ((conv ? cudnn_refusal(kg) : cublaslt_refusal(kg)).empty()) return conv ? StepKind::Cudnn : StepKind::CublasLt;
  }
  return StepKind::Generated;
}

StepChoice make_choice(const ir::Graph& g, tile::Kernel k, Libraries libs = Libraries::OneDnn) {
  StepChoice s;
  s.kernel = std::move(k);
  std::sort(s.kernel.nodes.begin(), s.kernel.nodes.end());
  s.inputs = tile::kernel_inputs(g, s.kernel);
  s.kind = choose(g, s, libs);
  return s;
}

// The values of `part` that `rest` reads, with the kernel's own outputs produced in `part`.
std::vector<ir::ValueId> part_outputs(const ir::Graph& g, const std::vector<ir::NodeId>& part,
                                      const std::vector<ir::NodeId>& rest, const std::vector<ir::ValueId>& outputs) {
  std::vector<ir::ValueId> out;
  for (ir::NodeId n : part)
    for (ir::ValueId v : g.node(n).outputs) {
      bool needed = std::find(outputs.begin(), outputs.end(), v) != outputs.end();
      for (ir::NodeId r : rest)
        for (ir::ValueId i : g.node(r).inputs) needed |= i == v;
      if (needed && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
  return out;
}

std::vector<StepChoice> split_linear(const ir::Graph& g, const StepChoice& s, Libraries libs);

// On a GPU, a kernel whose linear primitive has a prologue (a transpose, a normalization): the
// prologue as a generated kernel of its own where the rest then begins with a library step
// (split_linear), else the kernel whole. The prologue's result is written once; a library
// product or convolution is worth that on a GPU, where the generated ones are far slower.
std::vector<StepChoice> split_prologue(const ir::Graph& g, const StepChoice& s, const std::vector<ir::NodeId>& nodes,
                                       size_t at, Libraries libs) {
  std::vector<ir::NodeId> prologue(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(at)),
      rest(nodes.begin() + static_cast<std::ptrdiff_t>(at), nodes.end());
  std::vector<ir::ValueId> pro_outs = part_outputs(g, prologue, rest, s.kernel.outputs);
  std::vector<ir::ValueId> rest_outs = part_outputs(g, rest, {}, s.kernel.outputs);
  if (rest_outs.empty()) return {s};
  std::vector<StepChoice> tail = split_linear(g, make_choice(g, tile::Kernel{rest, rest_outs}, libs), libs);
  if (!is_library(tail.front().kind)) return {s};
  std::vector<StepChoice> out{make_choice(g, tile::Kernel{prologue, pro_outs}, libs)};
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

// A linear kernel that the library cannot run whole: the linear primitive with the longest
// run of the nodes after it that the library can take as post-ops, then the rest as its own
// kernel. A kernel with a prologue stays whole on the CPU, and is split on a GPU
// (split_prologue).
std::vector<StepChoice> split_linear(const ir::Graph& g, const StepChoice& s, Libraries libs) {
  std::vector<ir::NodeId> nodes = s.kernel.nodes;
  std::sort(nodes.begin(), nodes.end());
  size_t at = 0;
  while (at < nodes.size() && g.node(nodes[at]).kind() != ir::PrimKind::Linear) ++at;
  if (at == nodes.size() || nodes.size() < 2) return {s};
  if (at != 0) return libs == Libraries::Gpu ? split_prologue(g, s, nodes, at, libs) : std::vector{s};
  for (size_t cut = nodes.size() - 1; cut >= 1; --cut) {
    std::vector<ir::NodeId> part(nodes.begin(), nodes.begin() + cut), rest(nodes.begin() + cut, nodes.end());
    tile::Kernel a{part, part_outputs(g, part, rest, s.kernel.outputs)};
    StepChoice first = make_choice(g, a, libs);
    if (!is_library(first.kind)) continue;
    std::vector<ir::ValueId> rest_outs;
    for (ir::ValueId v : s.kernel.outputs)
      if (std::find(a.outputs.begin(), a.outputs.end(), v) == a.outputs.end()) rest_outs.push_back(v);
    if (rest_outs.empty()) return {first};
    return {first, make_choice(g, tile::Kernel{rest, rest_outs}, libs)};
  }
  return {s};
}

// The position in s's nodes of a view that s computes as an output, read by none of its other
// nodes, of a value s computes; none when there is no such view.
std::optional<size_t> trailing_view(const ir::Graph& g, const StepChoice& s) {
  const std::vector<ir::ValueId>& outs = s.kernel.outputs;
  for (size_t i = 0; i < s.kernel.nodes.size(); ++i) {
    const ir::Primitive& p = g.node(s.kernel.nodes[i]);
    if (p.op != ir::PrimOp::View || std::find(outs.begin(), outs.end(), p.outputs[0]) == outs.end()) continue;
    bool source_inside = false, read_inside = false;
    for (ir::NodeId n : s.kernel.nodes) {
      for (ir::ValueId o : g.node(n).outputs) source_inside |= o == p.inputs[0];
      for (ir::ValueId v : g.node(n).inputs) read_inside |= v == p.outputs[0];
    }
    if (source_inside && !read_inside) return i;
  }
  return std::nullopt;
}

// Such views (trailing_view) become alias steps after the kernel, which writes their sources
// instead. Computed, a view costs a copy with index arithmetic (a reshape's divisions) per
// element; as an alias it costs nothing. The rest is implemented anew (a matmul and its
// post-ops without the view may go to oneDNN).
std::vector<StepChoice> split_trailing_views(const ir::Graph& g, StepChoice s, Libraries libs) {
  std::vector<StepChoice> after;
  while (s.kernel.nodes.size() > 1) {
    std::optional<size_t> i = trailing_view(g, s);
    if (!i) break;
    ir::NodeId node = s.kernel.nodes[*i];
    ir::ValueId view = g.node(node).outputs[0], source = g.node(node).inputs[0];
    after.insert(after.begin(), make_choice(g, tile::Kernel{{node}, {view}}, libs));
    std::vector<ir::NodeId> nodes = s.kernel.nodes;
    nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(*i));
    std::vector<ir::ValueId> kept;
    for (ir::ValueId o : s.kernel.outputs)
      if (o != view && std::find(kept.begin(), kept.end(), o) == kept.end()) kept.push_back(o);
    if (std::find(kept.begin(), kept.end(), source) == kept.end()) kept.push_back(source);
    s = make_choice(g, tile::Kernel{nodes, kept}, libs);
  }
  std::vector<StepChoice> out{s};
  out.insert(out.end(), after.begin(), after.end());
  return out;
}

// A kernel with an opaque primitive runs in the interpreter, on the CPU only.
void refuse_opaque_on_gpu(const ir::Graph& g, const StepChoice& s) {
  for (ir::NodeId n : s.kernel.nodes)
    ORCHID_SUPPORTED(g.node(n).kind() != ir::PrimKind::Opaque)
        << "node '" << g.node(n).name << "': routine "
        << ir::opaque_routine_name(std::get<ir::OpaqueAttrs>(g.node(n).attrs).routine)
        << " has no CUDA implementation yet (it runs on the CPU only)";
}

}  // namespace

std::vector<StepChoice> implement_generated(const ir::Graph& g, const tile::Kernel& k) {
  StepChoice s = make_choice(g, k, Libraries::None);
  return s.kind == StepKind::Generated ? split_trailing_views(g, std::move(s), Libraries::None) : std::vector{s};
}

std::vector<std::vector<StepChoice>> implement_each(const ir::Graph& g, const std::vector<tile::Kernel>& kernels,
                                                    runtime::PlanDevice device, bool gpu_libraries) {
  bool cpu = device == runtime::PlanDevice::Cpu;
  Libraries libs = cpu ? Libraries::OneDnn : gpu_libraries ? Libraries::Gpu : Libraries::None;
  std::vector<std::vector<StepChoice>> out;
  for (const tile::Kernel& k : kernels) {
    StepChoice s = make_choice(g, k, libs);
    if (!cpu && s.kind == StepKind::Reference) refuse_opaque_on_gpu(g, s);
    int linear = 0;
    for (ir::NodeId n : s.kernel.nodes) linear += g.node(n).kind() == ir::PrimKind::Linear;
    // A kernel of several products (orchestrate/chains.h) was proposed to keep what passes
    // between them in cache: it is generated whole.
    std::vector<StepChoice> parts = libs != Libraries::None && s.kind == StepKind::Generated && linear == 1
                                        ? split_linear(g, s, libs)
                                        : std::vector{s};
    std::vector<StepChoice>& steps = out.emplace_back();
    for (StepChoice& p : parts) {
      std::vector<StepChoice> more =
          p.kind == StepKind::Generated ? split_trailing_views(g, std::move(p), libs) : std::vector{p};
      for (StepChoice& q : more) steps.push_back(std::move(q));
    }
  }
  return out;
}

std::vector<StepChoice> joined(const std::vector<std::vector<StepChoice>>& each) {
  std::vector<StepChoice> out;
  for (const std::vector<StepChoice>& steps : each) out.insert(out.end(), steps.begin(), steps.end());
  return out;
}

std::vector<StepChoice> implement(const ir::Graph& g, const std::vector<tile::Kernel>& kernels,
                                  runtime::PlanDevice device, bool gpu_libraries) {
  return joined(implement_each(g, kernels, device, gpu_libraries));
}

}  // namespace orchid::driver
