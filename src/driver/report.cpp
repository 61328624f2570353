// Reports of an artifact (report.h).
#include "driver/report.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "interp/random_inputs.h"
#include "runtime/model.h"
#include "runtime/profile.h"
#include "runtime/session.h"
#include "support/subprocess.h"

namespace orchid::driver {

namespace fs = std::filesystem;

namespace {

// How a cuda plan's precision reads in the report.
std::string precision_said(runtime::PlanPrecision p) {
  switch (p) {
    case runtime::PlanPrecision::Fp32: return "fp32, no TF32";
    case runtime::PlanPrecision::Tf32: return "TF32 allowed";
    case runtime::PlanPrecision::Fp16:
    case runtime::PlanPrecision::Bf16: return std::string(runtime::plan_precision_name(p)) + " storage, f32 accumulation";
  }
  return "?";
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Median time of each step (ms), and of whole runs, on seeded random inputs.
struct Timing {
  std::vector<double> step_ms;
  double total_ms = 0;
  int threads = 0;
  runtime::TimingStats region;  // one empty parallel region of `threads` (seconds)
  int one_task_steps = 0;       // generated steps of one task: no parallel region
  int generated_steps = 0;
};

Timing measure(const std::string& dir, const ir::Graph& g, double seconds) {
  Timing t;
  if (seconds <= 0) return t;
  runtime::Session session(runtime::Model::load(dir));
  std::vector<ir::Tensor> inputs = interp::random_inputs(g, 1);
  std::vector<ir::Tensor> outputs;
  for (ir::ValueId v : g.outputs()) outputs.emplace_back(g.type(v));
  std::vector<const void*> in;
  std::vector<void*> out;
  for (const ir::Tensor& x : inputs) in.push_back(x.data());
  for (ir::Tensor& x : outputs) out.push_back(x.data());
  runtime::ProfileOptions po;
  po.per_step = true;
  po.min_seconds = seconds;
  po.min_runs = 3;
  po.warmup_runs = 1;
  runtime::Profile p = runtime::profile_session(session, in, out, po);
  t.total_ms = p.total.median * 1e3;
  for (const runtime::StepProfile& s : p.steps) t.step_ms.push_back(s.stats.median * 1e3);
  t.threads = session.threads();
  t.region = runtime::parallel_region_stats(t.threads, std::min(seconds, 0.2));
  for (size_t i = 0; i < session.model().plan().steps.size(); ++i)
    if (const orchid_kernel_desc* k = session.model().kernel(i)) {
      ++t.generated_steps;
      t.one_task_steps += k->task_count <= 1;
    }
  return t;
}

std::string join_ops(const std::vector<std::string>& ops) {
  std::string s;
  for (size_t i = 0; i < ops.size() && i < 4; ++i) s += (i ? ", " : "") + ops[i];
  if (ops.size() > 4) s += ", … (" + std::to_string(ops.size()) + ")";
  return s;
}

std::string summary(const ReportInput& in, const Timing& t) {
  const runtime::Plan& plan = in.built->plan;
  int64_t flops = 0, bytes = 0;
  std::map<StepKind, int> counts;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    flops += plan.steps[i].flops;
    bytes += plan.steps[i].bytes;
    ++counts[in.built->steps[i].kind];
  }
  std::string s = "- model: " + markdown_cell(fs::path(in.model_path).filename().string()) + ", strategy " + in.strategy + "\n";
  auto count = [&](StepKind k) { return std::to_string(counts[k]); };
  std::string winograd = counts[StepKind::OneDnnWinograd] > 0 ? " (Winograd " + count(StepKind::OneDnnWinograd) + ")" : "";
  std::string libraries = plan.device == runtime::PlanDevice::Cuda
                              ? ", cuBLASLt " + count(StepKind::CublasLt) + ", cuDNN " + count(StepKind::Cudnn)
                              : ", oneDNN " + std::to_string(counts[StepKind::OneDnn] + counts[StepKind::OneDnnWinograd]) +
                                    winograd + ", reference " + count(StepKind::Reference);
  std::string ugraph = counts[StepKind::UGraph] > 0 ? ", steps of the superoptimizer's μGraphs " + count(StepKind::UGraph) : "";
  s += "- steps: " + std::to_string(plan.steps.size()) + " (generated " + count(StepKind::Generated) + ugraph + libraries +
       "), primitives " + std::to_string(in.graph->num_nodes()) + "\n";
  s += "- work: " + fmt("%.3g", static_cast<double>(flops)) + " FLOPs, " + fmt("%.3g", static_cast<double>(bytes)) +
       " bytes moved between steps\n";
  const LayoutSummary& l = in.built->layouts;
  if (l.blocked_buffers > 0) {
    std::string names;
    for (runtime::BufferLayout b : l.blocked_layouts) names += (names.empty() ? "" : " and ") + std::string(runtime::buffer_layout_name(b));
    s += "- layouts: " + std::to_string(l.blocked_buffers) + " buffers kept in " + names + " between oneDNN convolutions (" +
         std::to_string(l.reorders_avoided) + " reorders avoided)\n";
  }
  if (l.packed_weights > 0)
    s += "- weights: " + std::to_string(l.packed_weights) + " stored as GEMM B panels (packed when built, not per run)\n";
  if (t.total_ms > 0) {
    s += "- measured: " + fmt("%.3f", t.total_ms) + " ms per run (median)\n";
    s += "- threads: " + std::to_string(t.threads) + "; a parallel region (fork and join, as each generated step of several tasks opens) costs " +
         fmt("%.1f", t.region.median * 1e6) + " µs (median; p90 " + fmt("%.1f", t.region.p90 * 1e6) + " µs); " +
         std::to_string(t.one_task_steps) + " of " + std::to_string(t.generated_steps) +
         " generated steps have one task and open none\n";
  }
  if (plan.device == runtime::PlanDevice::Cuda) {
    std::string archs;
    for (const runtime::PlanLibrary& l : plan.libraries) archs += (archs.empty() ? "" : ", ") + l.arch;
    std::string gpu = in.gpu.empty() ? plan.target : in.gpu;
    std::string precision = precision_said(plan.precision);
    s += "- device: NVIDIA GPU (CUDA; CUBIN for " + archs + "), schedules for " + gpu +
         "; generated kernels under their default CUDA schedule, " + count(StepKind::CublasLt) +
         " matmuls through cuBLASLt and " + count(StepKind::Cudnn) + " convolutions through cuDNN (" + precision +
         "); none measured\n";
  }
  if (plan.flush_denormals)
    s += "- subnormal floats: read and written as zero while the plan runs (--flush-denormals: FTZ and DAZ)\n";
  s += std::string("- verified against the interpreter: ") +
       (in.verified ? "yes" : "no (" + (in.not_verified.empty() ? std::string("not run") : in.not_verified) + ")") + "\n";
  return s;
}

std::string markdown(const ReportInput& in, const Timing& t, const std::string& sum) {
  const runtime::Plan& plan = in.built->plan;
  std::string s = "# Orchid report\n\n" + sum + "\n## Verification\n\n";
  if (in.verified) s += "Seed " + std::to_string(in.verify->seed) + ":\n\n" + in.verify->summary() + "\n";
  if (!in.rewrites.empty()) {
    s += "## Rewrites\n\n";
    for (const std::string& c : in.rewrites) s += "- " + markdown_cell(c) + "\n";
    s += "\n";
  }
  if (!in.orchestration.empty()) {
    s += "## Orchestration\n\n";
    for (const std::string& c : in.orchestration) s += "- " + markdown_cell(c) + "\n";
    s += "\n";
  }
  if (!in.superopt.empty()) {
    s += "## Superoptimizer\n\n";
    for (const std::string& c : in.superopt) s += "- " + markdown_cell(c) + "\n";
    s += "\n";
  }
  if (!in.tuning.empty()) {
    s += "## Schedules tuned\n\n";
    for (const std::string& c : in.tuning) s += "- " + markdown_cell(c) + "\n";
    s += "\n";
  }
  if (!in.choices.empty()) {
    s += "## Implementations chosen by measuring\n\n";
    for (const std::string& c : in.choices) s += "- " + markdown_cell(c) + "\n";
    s += "\n";
  }
  s += "## Compile stages\n\n| stage | seconds |\n|---|---|\n";
  for (const StageTime& st : in.stages) s += "| " + st.stage + " | " + fmt("%.3f", st.seconds) + " |\n";
  s += "\n## Steps\n\n| # | impl | primitives | source ops | FLOPs | bytes | ms | schedule |\n|---|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const runtime::PlanStep& p = plan.steps[i];
    std::string impl = in.built->steps[i].kind == StepKind::UGraph ? "μgraph" : std::string(runtime::step_impl_name(p.impl));
    s += "| " + p.name + " | " + impl + " | " +
         std::to_string(in.built->steps[i].primitives) + " | " + markdown_cell(join_ops(p.source_ops)) + " | " +
         std::to_string(p.flops) + " | " + std::to_string(p.bytes) + " | " +
         (i < t.step_ms.size() ? fmt("%.4f", t.step_ms[i]) : "-") + " | " + in.built->steps[i].schedule + " |\n";
  }
  return s;
}

// The plan as a graph of steps (names and impls only: no model text reaches dot).
std::string plan_dot(const runtime::Plan& plan) {
  std::string s = "digraph plan {\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n";
  std::vector<int> writer(plan.buffers.size(), -1);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const runtime::PlanStep& p = plan.steps[i];
    s += "  s" + std::to_string(i) + " [label=\"" + p.name + "\\n" + std::string(runtime::step_impl_name(p.impl)) + "\"];\n";
    for (int32_t a = 0; a < p.num_inputs; ++a) {
      int32_t b = runtime::alias_root(plan, p.args[a]);
      if (writer[b] >= 0) s += "  s" + std::to_string(writer[b]) + " -> s" + std::to_string(i) + ";\n";
    }
    for (size_t a = p.num_inputs; a < p.args.size(); ++a) writer[p.args[a]] = static_cast<int>(i);
  }
  return s + "}\n";
}

std::string svg_of(const std::string& dot) {
  try {
    orchid::SubprocessOptions so;
    so.stdin_data = dot;
    so.timeout_s = 60;
    orchid::SubprocessResult r = orchid::run_subprocess({"dot", "-Tsvg"}, so);
    if (r.ok()) return r.out;
  } catch (const std::exception&) {
  }
  return "<p>(Graphviz `dot` is not installed: no picture.)</p>";
}

std::string html(const std::string& md_body, const std::string& svg) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Orchid report</title></head><body>\n<pre>\n" +
         html_escape(md_body) + "</pre>\n<h2>Plan</h2>\n" + svg + "\n</body></html>\n";
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

}  // namespace

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|' || c == '\\' || c == '`' || c == '*' || c == '_' || c == '<' || c == '>') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string write_reports(const std::string& dir, const ReportInput& in, double measure_seconds) {
  Timing t = measure(dir, *in.graph, measure_seconds);
  std::string sum = summary(in, t);
  std::string md = markdown(in, t, sum);
  write_file(fs::path(dir) / "report.md", md);
  write_file(fs::path(dir) / "report.html", html(md, svg_of(plan_dot(in.built->plan))));
  return sum;
}

}  // namespace orchid::driver
