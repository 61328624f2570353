// f32 convolutions through Orchid's runtime: the generated implicit-GEMM kernel (the packed
// micro-kernel of gemm.inc over the conv's window, codegen/cpu/emit_gemm.cpp) against the
// oneDNN convolution step, on the conv shapes of resnet18, mobilenet_v2 and candy, 2 threads
// (or --threads). Weights are constants, as in models. Fused rows add a bias and a relu: one
// generated kernel against oneDNN's conv with the same post-ops in one step; the padded rows
// read an input reflect-padded by a layout primitive: one generated kernel that pads while
// packing against a pad step followed by oneDNN's conv. Medians of alternating rounds; never
// asserted by tests: conv_bench [--threads N] [--min-time S] [--markdown FILE] [--only NAME]
// [--ir FILE: any one-kernel graph in text IR instead].
#include <fstream>

#include "micro_common.h"

namespace {

using namespace orchid::bench;

struct Conv {
  const char* name;
  int64_t ci, co, h, w, k, stride, pad;
};

enum class Variant { Plain, BiasRelu, ReflectPad };

std::string dims(std::vector<int64_t> d) {
  std::string s;
  for (int64_t e : d) s += (s.empty() ? "" : ",") + std::to_string(e);
  return "[" + s + "]";
}

int64_t out_size(int64_t in, const Conv& c, int64_t pad) { return (in + 2 * pad - c.k) / c.stride + 1; }

// conv(x, w) with constant w; + bias, relu (BiasRelu); x reflect-padded by c.pad first, the
// conv then unpadded (ReflectPad, as ONNX exports of style-transfer networks have it). Bias
// and relu are two primitives, as fission makes them.
Graph conv_graph(const Conv& c, Variant v) {
  bool reflect = v == Variant::ReflectPad;
  int64_t pad = reflect ? 0 : c.pad, h = c.h + (reflect ? 2 * c.pad : 0), w = c.w + (reflect ? 2 * c.pad : 0);
  int64_t oh = out_size(h, c, pad), ow = out_size(w, c, pad);
  std::string text = "graph @conv {\n  input %x : f32" + dims({1, c.ci, c.h, c.w}) + "\n";
  text += "  const %w : f32" + dims({c.co, c.ci, c.k, c.k}) + " = splat(0.01)\n";
  std::string x = "%x";
  if (reflect) {
    auto idx = [&](const char* i, int64_t n) {
      std::string p = std::to_string(c.pad), last = std::to_string(n + c.pad - 1);
      return "select(lt(" + std::string(i) + ", " + p + "), sub(" + p + ", " + i + "), select(gt(" + i + ", " + last +
             "), sub(" + std::to_string(2 * (n - 1) + c.pad) + ", " + i + "), sub(" + i + ", " + p + ")))";
    };
    text += "  %p : f32" + dims({1, c.ci, h, w}) + " = layout(%x) { %x[i0, i1, " + idx("i2", c.h) + ", " +
            idx("i3", c.w) + "] }\n";
    x = "%p";
  }
  std::string p = std::to_string(pad), s = std::to_string(c.stride);
  std::string out = dims({1, c.co, oh, ow});
  text += "  %y : f32" + out + " = conv(" + x + ", %w) {strides=[" + s + "," + s + "], dilations=[1,1], pads_begin=[" +
          p + "," + p + "], pads_end=[" + p + "," + p + "], groups=1}\n";
  if (v == Variant::BiasRelu) {
    text += "  const %b : f32" + dims({c.co, 1, 1}) + " = splat(0.1)\n";
    text += "  %a : f32" + out + " = elementwise(%y, %b) { add(%y[i0, i1, i2, i3], %b[i1, 0, 0]) }\n";
    text += "  %z : f32" + out + " = elementwise(%a) { max(%a[i0, i1, i2, i3], 0:f32) }\n";
    return orchid::ir::parse_graph(text + "  output %z\n}\n");
  }
  return orchid::ir::parse_graph(text + "  output %y\n}\n");
}

struct Row {
  std::string shape, what;
  double flops = 0;
  std::vector<double> ms;  // generated, oneDNN
};

// All of g as one generated kernel against `dnn_steps` (oneDNN's): median ms of each.
std::vector<double> bench_steps(const Graph& g, const std::vector<StepChoice>& dnn_steps, const Options& opt,
                                const fs::path& work) {
  orchid::ir::ValueId out = g.outputs()[0];
  std::vector<NodeId> all;
  for (int32_t n = 0; n < g.num_nodes(); ++n) all.push_back(NodeId(n));
  auto generated = build(g, {step(g, all, out, StepKind::Generated)}, work / "generated", opt.threads);
  auto onednn = build(g, dnn_steps, work / "onednn", opt.threads);
  AlignedInputs in = aligned_inputs(g, 1);
  size_t out_bytes = static_cast<size_t>(g.type(out).numel()) * sizeof(float);
  Aligned y_gen(out_bytes), y_dnn(out_bytes);
  orchid::runtime::SessionOptions so{opt.threads};
  orchid::runtime::Session s_gen(generated, so), s_dnn(onednn, so);
  return rounds_of({session_run(s_gen, in.ptrs, y_gen.get()), session_run(s_dnn, in.ptrs, y_dnn.get())}, opt.min_time);
}

// Generated kernel against oneDNN (with its post-ops) on a one-kernel graph.
std::vector<double> bench_graph(const Graph& g, const Options& opt, const fs::path& work) {
  std::vector<NodeId> all;
  for (int32_t n = 0; n < g.num_nodes(); ++n) all.push_back(NodeId(n));
  return bench_steps(g, {step(g, all, g.outputs()[0], StepKind::OneDnn)}, opt, work);
}

Row bench_conv(const Conv& c, Variant v, const Options& opt, const fs::path& work) {
  Graph g = conv_graph(c, v);
  orchid::ir::ValueId out = g.outputs()[0];
  Row row;
  if (v == Variant::ReflectPad)  // the pad as its own generated step, then oneDNN's conv
    row.ms = bench_steps(g,
                         {step(g, {NodeId(0)}, *g.find_value("p"), StepKind::Generated),
                          step(g, {NodeId(1)}, out, StepKind::OneDnn)},
                         opt, work);
  else
    row.ms = bench_graph(g, opt, work);  // the bias and relu as oneDNN's post-ops
  const orchid::ir::Dims& o = g.type(out).shape;
  row.shape = std::string(c.name) + " " + std::to_string(c.ci) + "→" + std::to_string(c.co) + " " +
              std::to_string(c.k) + "×" + std::to_string(c.k) + (c.stride > 1 ? " s" + std::to_string(c.stride) : "") +
              " → " + std::to_string(o[2]) + "×" + std::to_string(o[3]);
  row.what = v == Variant::Plain ? "conv" : v == Variant::BiasRelu ? "+ bias + relu" : "reflect pad +";
  row.flops = 2.0 * static_cast<double>(g.type(out).numel()) * static_cast<double>(c.ci * c.k * c.k);
  return row;
}

std::string table(const std::vector<Row>& rows) {
  std::string s = "| conv | variant | Orchid generated ms | GFLOP/s | oneDNN ms | GFLOP/s | oneDNN / generated |\n"
                  "|---|---|---:|---:|---:|---:|---:|\n";
  for (const Row& r : rows)
    s += "| " + r.shape + " | " + r.what + " | " + fmt("%.3f", r.ms[0]) + " | " + fmt("%.1f", r.flops / r.ms[0] / 1e6) +
         " | " + fmt("%.3f", r.ms[1]) + " | " + fmt("%.1f", r.flops / r.ms[1] / 1e6) + " | " +
         fmt("%.2f", r.ms[1] / r.ms[0]) + " |\n";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::string only;     // convs whose name contains this
  std::string ir_file;  // a one-kernel graph instead (text IR; its first output is timed)
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--threads") opt.threads = std::stoi(argv[i + 1]);
    else if (flag == "--min-time") opt.min_time = std::stod(argv[i + 1]);
    else if (flag == "--markdown") opt.markdown = argv[i + 1];
    else if (flag == "--only") only = argv[i + 1];
    else if (flag == "--ir") ir_file = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: conv_bench [--threads N] [--min-time S] [--markdown FILE] [--only NAME] [--ir FILE]\n");
      return 1;
    }
  }
  fs::path work = fs::temp_directory_path() / "orchid-conv-bench";
  if (!ir_file.empty()) {
    std::ifstream f(ir_file);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<double> ms = bench_graph(orchid::ir::parse_graph(text), opt, work);
    std::printf("%s: generated %.3f ms, oneDNN %.3f ms\n", ir_file.c_str(), ms[0], ms[1]);
    return 0;
  }
  const Conv convs[] = {
      {"resnet18 stem", 3, 64, 224, 224, 7, 2, 3},    {"resnet18", 64, 64, 56, 56, 3, 1, 1},
      {"resnet18", 64, 128, 56, 56, 3, 2, 1},         {"resnet18", 128, 128, 28, 28, 3, 1, 1},
      {"resnet18", 256, 256, 14, 14, 3, 1, 1},        {"mobilenet_v2 expand", 24, 144, 56, 56, 1, 1, 0},
      {"mobilenet_v2 project", 144, 24, 56, 56, 1, 1, 0}, {"candy", 3, 32, 224, 224, 9, 1, 4},
      {"candy", 128, 128, 56, 56, 3, 1, 1},           {"candy output", 32, 3, 224, 224, 9, 1, 4},
  };
  std::vector<Row> rows;
  for (const Conv& c : convs) {
    if (std::string(c.name).find(only) == std::string::npos) continue;
    rows.push_back(bench_conv(c, Variant::Plain, opt, work));
    rows.push_back(bench_conv(c, Variant::BiasRelu, opt, work));
  }
  for (size_t i = std::size(convs) - 3; i < std::size(convs); ++i)
    if (std::string(convs[i].name).find(only) != std::string::npos) rows.push_back(bench_conv(convs[i], Variant::ReflectPad, opt, work));
  fs::remove_all(work);
  std::string text = "# f32 convolutions: Orchid's implicit GEMM and oneDNN (" + std::to_string(opt.threads) +
                     " threads; medians of alternating rounds)\n\n" + table(rows);
  publish(text, opt);
  return 0;
}
