// f32 GEMM through Orchid's runtime against OpenBLAS: C = A [M, K] x B [K, N], square and
// skinny shapes, 2 threads (or --threads). Orchid runs one-step artifacts built from the same
// primitive graph: a generated kernel on the packed GEMM micro-kernel (gemm.inc) and the
// oneDNN matmul step; B is a run-time input (packed on every run) or constant weights (the
// micro-kernel's panels stored in the artifact; oneDNN packs them once at load). Fused shapes
// add a bias and a relu: one generated kernel against oneDNN's matmul followed by a separate
// generated epilogue step. Scores rows add a softmax over each row: one generated kernel
// (the tile's rows reduced while it is in cache) against the matmul and the softmax as two
// steps, oneDNN's or generated matmul first. Medians of runs after a warm-up, each configuration in turn for
// several rounds (a shared machine's load hits all alike). Performance is measured here and
// never asserted by tests: gemm_bench [--threads N] [--min-time S] [--markdown FILE]
// [--only MxNxK: the rows of that shape alone].
#include <cblas.h>

#include <fstream>

#include "micro_common.h"

namespace {

using namespace orchid::bench;

struct Shape {
  int64_t m, n, k;
};

std::string dims(int64_t a, int64_t b) { return "[" + std::to_string(a) + "," + std::to_string(b) + "]"; }

// matmul(a, b) (+ bias, relu when fused); b an input or a seeded constant.
Graph gemm_graph(const Shape& s, bool constant_b, bool fused) {
  std::string text = "graph @gemm {\n  input %a : f32" + dims(s.m, s.k) + "\n";
  text += constant_b ? "  const %b : f32" + dims(s.k, s.n) + " = splat(0.5)\n" : "  input %b : f32" + dims(s.k, s.n) + "\n";
  if (fused) text += "  input %c : f32[" + std::to_string(s.n) + "]\n";
  text += "  %y : f32" + dims(s.m, s.n) + " = matmul(%a, %b) {trans_a=false, trans_b=false}\n";
  if (fused) text += "  %z : f32" + dims(s.m, s.n) + " = elementwise(%y, %c) { max(add(%y[i0, i1], %c[i1]), 0:f32) }\n";
  text += fused ? "  output %z\n}\n" : "  output %y\n}\n";
  return orchid::ir::parse_graph(text);  // values do not matter for timing; tests check results
}

// softmax(a x b) over each row; a [M, K], b [K, N] inputs (attention scores).
Graph softmax_graph(const Shape& s) {
  std::string y = "f32" + dims(s.m, s.n), row = "f32" + dims(s.m, 1), n = std::to_string(s.n);
  std::string text = "graph @mm_softmax {\n  input %a : f32" + dims(s.m, s.k) + "\n  input %b : f32" + dims(s.k, s.n) + "\n";
  text += "  %y : " + y + " = matmul(%a, %b) {trans_a=false, trans_b=false}\n";
  text += "  %mx : " + row + " = reduce max(%y) over [" + n + "] { %y[i0, r0] }\n";
  text += "  %e : " + y + " = elementwise(%y, %mx) { exp(sub(%y[i0, i1], %mx[i0, 0])) }\n";
  text += "  %s : " + row + " = reduce sum(%e) over [" + n + "] { %e[i0, r0] }\n";
  text += "  %z : " + y + " = elementwise(%e, %s) { div(%e[i0, i1], %s[i0, 0]) }\n  output %z\n}\n";
  return orchid::ir::parse_graph(text);
}

struct Row {
  std::string shape, what;
  std::vector<std::string> names;
  std::vector<double> ms;  // median of the rounds' medians
  double flops = 0;
};

Row bench_shape(const Shape& sh, bool constant_b, bool fused, const Options& opt, const fs::path& work) {
  Graph g = gemm_graph(sh, constant_b, fused);
  auto v = [&](const char* name) { return *g.find_value(name); };
  orchid::ir::ValueId out = v(fused ? "z" : "y");
  std::vector<NodeId> all;
  for (int32_t n = 0; n < g.num_nodes(); ++n) all.push_back(NodeId(n));
  auto generated = build(g, {step(g, all, out, StepKind::Generated)}, work / "generated", opt.threads);
  std::vector<StepChoice> dnn_steps = {step(g, {NodeId(0)}, v("y"), StepKind::OneDnn)};
  if (fused) dnn_steps.push_back(step(g, {NodeId(1)}, out, StepKind::Generated));
  auto onednn = build(g, dnn_steps, work / "onednn", opt.threads);
  AlignedInputs in = aligned_inputs(g, 1);
  const std::vector<const void*>& ptrs = in.ptrs;
  size_t out_bytes = static_cast<size_t>(sh.m * sh.n) * sizeof(float);
  Aligned c_gen(out_bytes), c_dnn(out_bytes), c_blas(out_bytes);
  orchid::runtime::SessionOptions so{opt.threads};
  orchid::runtime::Session s_gen(generated, so), s_dnn(onednn, so);
  std::vector<std::function<void()>> runs = {session_run(s_gen, ptrs, c_gen.get()), session_run(s_dnn, ptrs, c_dnn.get())};
  Row row{std::to_string(sh.m) + "×" + std::to_string(sh.n) + "×" + std::to_string(sh.k),
          std::string(constant_b ? "constant B" : "input B") + (fused ? ", + bias + relu" : ""),
          {"Orchid generated", fused ? "oneDNN + separate epilogue" : "oneDNN"}, {}, 2.0 * sh.m * sh.n * sh.k};
  if (!fused && !constant_b) {
    const auto* a = static_cast<const float*>(ptrs[0]);
    const auto* b = static_cast<const float*>(ptrs[1]);
    auto* c = static_cast<float*>(c_blas.get());
    runs.push_back([=] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(sh.m), static_cast<int>(sh.n),
                  static_cast<int>(sh.k), 1.0f, a, static_cast<int>(sh.k), b, static_cast<int>(sh.n), 0.0f, c,
                  static_cast<int>(sh.n));
    });
    row.names.push_back("OpenBLAS");
  }
  row.ms = rounds_of(runs, opt.min_time);
  return row;
}

// Matmul + softmax as one generated kernel, against the pair as two steps: the generated
// matmul then the generated softmax, and oneDNN's matmul then the generated softmax.
Row bench_softmax(const Shape& sh, const Options& opt, const fs::path& work) {
  Graph g = softmax_graph(sh);
  orchid::ir::ValueId y = *g.find_value("y"), out = g.outputs()[0];
  std::vector<NodeId> all, rest;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    all.push_back(NodeId(n));
    if (n > 0) rest.push_back(NodeId(n));
  }
  auto fused = build(g, {step(g, all, out, StepKind::Generated)}, work / "fused", opt.threads);
  auto pair_gen = build(g, {step(g, {NodeId(0)}, y, StepKind::Generated), step(g, rest, out, StepKind::Generated)},
                        work / "pair-generated", opt.threads);
  auto pair_dnn = build(g, {step(g, {NodeId(0)}, y, StepKind::OneDnn), step(g, rest, out, StepKind::Generated)},
                        work / "pair-onednn", opt.threads);
  AlignedInputs in = aligned_inputs(g, 1);
  size_t out_bytes = static_cast<size_t>(sh.m * sh.n) * sizeof(float);
  Aligned o1(out_bytes), o2(out_bytes), o3(out_bytes);
  orchid::runtime::SessionOptions so{opt.threads};
  orchid::runtime::Session s1(fused, so), s2(pair_dnn, so), s3(pair_gen, so);
  Row row{std::to_string(sh.m) + "×" + std::to_string(sh.n) + "×" + std::to_string(sh.k), "input B, + softmax",
          {"Orchid generated, one kernel", "oneDNN + separate softmax", "Orchid generated, two steps"}, {},
          2.0 * sh.m * sh.n * sh.k};
  row.ms = rounds_of({session_run(s1, in.ptrs, o1.get()), session_run(s2, in.ptrs, o2.get()),
                      session_run(s3, in.ptrs, o3.get())},
                     opt.min_time);
  return row;
}

std::string table(const std::vector<Row>& rows) {
  std::string s = "| shape M×N×K | B | implementation | ms | GFLOP/s | vs oneDNN |\n|---|---|---|---:|---:|---:|\n";
  for (const Row& r : rows)
    for (size_t i = 0; i < r.ms.size(); ++i)
      s += "| " + r.shape + " | " + r.what + " | " + r.names[i] + " | " + fmt("%.3f", r.ms[i]) + " | " +
           fmt("%.1f", r.flops / r.ms[i] / 1e6) + " | " + fmt("%.2f", r.ms[1] / r.ms[i]) + " |\n";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--threads") opt.threads = std::stoi(argv[i + 1]);
    else if (flag == "--min-time") opt.min_time = std::stod(argv[i + 1]);
    else if (flag == "--markdown") opt.markdown = argv[i + 1];
    else if (flag == "--only") only = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: gemm_bench [--threads N] [--min-time S] [--markdown FILE] [--only MxNxK]\n");
      return 1;
    }
  }
  auto wanted = [&](const Shape& s) {
    return only.empty() || only == std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  };
  openblas_set_num_threads(opt.threads);
  fs::path work = fs::temp_directory_path() / "orchid-gemm-bench";
  const Shape square[] = {{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}};
  const Shape skinny[] = {{16, 4096, 4096}, {128, 3072, 768}, {197, 1536, 384}};
  // Few terms per output (a pointwise conv's 24 channels as a matmul over 56 x 56 pixels, a
  // projection from 64): the output's pass dominates, which a separate epilogue makes twice;
  // and an MLP's layer of 256 (a NeRF's), between those and the square shapes.
  const Shape wide[] = {{3136, 144, 24}, {4096, 1024, 64}, {4096, 256, 256}};
  const Shape scores[] = {{256, 256, 64}, {1024, 1024, 64}, {16384, 256, 32}, {128, 3072, 768}};
  std::vector<Row> rows;
  for (const Shape& s : square)
    if (wanted(s)) rows.push_back(bench_shape(s, false, false, opt, work));
  for (const Shape& s : skinny) {
    if (!wanted(s)) continue;
    rows.push_back(bench_shape(s, false, false, opt, work));
    rows.push_back(bench_shape(s, true, false, opt, work));
    rows.push_back(bench_shape(s, true, true, opt, work));
  }
  for (const Shape& s : wide) {
    if (!wanted(s)) continue;
    rows.push_back(bench_shape(s, true, false, opt, work));
    rows.push_back(bench_shape(s, true, true, opt, work));
  }
  for (const Shape& s : scores)
    if (wanted(s)) rows.push_back(bench_softmax(s, opt, work));
  fs::remove_all(work);
  std::string text = "# f32 GEMM: Orchid's micro-kernel, oneDNN and OpenBLAS (" + std::to_string(opt.threads) +
                     " threads; medians; vs oneDNN: its time over this one)\n\n" + table(rows);
  publish(text, opt);
  return 0;
}
