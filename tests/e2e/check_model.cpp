// Checks Orchid's reference pipeline on an exported model against the framework's own
// output: DIR/model.onnx run on DIR/input.npy must match DIR/output.npy.
//
//   orchid_check_model DIR [--rtol R] [--atol A] [--compiled STRATEGY] [--store bf16|fp16]
// Prints the time of import + fission and of the interpreter run, and the relative L2 error.
// With --compiled, the model is also compiled (`orchid compile --orchestrate STRATEGY`, whose
// own check against the interpreter must pass) and the artifact's output is held to the
// framework's output as well. With --store, the cleaned-up graph with its f32 values stored in
// that dtype (what `--precision bf16|fp16` compiles, rewrite/store_precision.h) is run in the
// interpreter's own precision, every value rounded as stored, and its relative L2 error
// against the framework's f32 output must be within that precision's default tolerance.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "driver/artifact.h"
#include "driver/pipeline.h"
#include "fission/fission.h"
#include "runtime/model.h"
#include "runtime/session.h"
#include "frontend/onnx_loader.h"
#include "interp/compare.h"
#include "interp/interp.h"
#include "ir/npy.h"
#include "rewrite/store_precision.h"
#include "runtime/plan.h"
#include "support/error.h"

using namespace orchid;

namespace {
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The artifact check's measure (driver/artifact.h), for the printed error.
double relative_l2(const ir::Tensor& got, const ir::Tensor& want) { return interp::relative_l2(got, want, nullptr); }

// Compiles g into DIR/orchid-STRATEGY and compares the artifact's output with `want`.
int check_compiled(const ir::Graph& g, const std::string& dir, const std::string& strategy, const ir::Tensor& x,
                   const ir::Tensor& want, double rtol, double atol) {
  driver::CompileOptions o;
  o.model_path = dir + "/model.onnx";
  auto s = orchestrate::parse_strategy(strategy);
  if (!s) throw std::runtime_error("unknown strategy " + strategy);
  o.strategy = *s;
  o.out_dir = dir + "/orchid-" + strategy;
  o.build.compiler.cache_dir = dir + "/orchid-objects";
  o.build.cores = 2;
  o.measure_seconds = 0;
  auto t0 = std::chrono::steady_clock::now();
  driver::CompileResult r = driver::compile_graph(g, o);
  double compile_s = seconds_since(t0);
  runtime::Session session(runtime::Model::load(o.out_dir));
  std::map<std::string, ir::Tensor, std::less<>> in{{g.value(g.inputs()[0]).name, x}};
  auto t1 = std::chrono::steady_clock::now();
  std::vector<ir::Tensor> outs = session.run(in);
  double run_s = seconds_since(t1);
  std::string diff = interp::compare_tensors(outs.at(0), want, rtol, atol);
  std::printf("%s compiled (%s): compile %.2f s (verified: %s), first run %.3f s; relative L2 error %.3g; %s\n",
              dir.c_str(), strategy.c_str(), compile_s, r.verified ? "yes" : "no", run_s, relative_l2(outs[0], want),
              diff.empty() ? "matches" : ("MISMATCH: " + diff).c_str());
  return diff.empty() ? 0 : 1;
}

// The model with its values stored in 16 bits against the framework's output.
int check_stored(const ir::Graph& g, const std::string& dir, const std::string& store, const ir::Tensor& x,
                 const ir::Tensor& want) {
  std::optional<runtime::PlanPrecision> p = runtime::parse_plan_precision(store);
  std::optional<ir::DType> stored = p ? runtime::storage_dtype(*p) : std::nullopt;
  if (!stored) throw std::runtime_error("--store takes bf16 or fp16, not " + store);
  ir::Graph h = rewrite::store_floats_as(driver::clean_up(g), *stored);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<ir::Tensor> outs = interp::run(h, {x}, {interp::Precision::Own});
  double run_s = seconds_since(t0);
  double err = relative_l2(outs.at(0), want), tolerance = runtime::default_tolerance(*p);
  bool ok = std::isfinite(err) && err <= tolerance;
  std::printf("%s stored in %s: interpreter (own precision) %.2f s; relative L2 error %.3g (tolerance %.0e); %s\n",
              dir.c_str(), store.c_str(), run_s, err, tolerance, ok ? "within" : "ABOVE THE TOLERANCE");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: orchid_check_model DIR [--rtol R] [--atol A] [--compiled STRATEGY] [--store bf16|fp16]\n");
    return 2;
  }
  std::string dir = argv[1];
  double rtol = 1e-3, atol = 1e-5;
  std::string strategy, store;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--rtol") rtol = std::stod(argv[i + 1]);
    if (std::string(argv[i]) == "--atol") atol = std::stod(argv[i + 1]);
    if (std::string(argv[i]) == "--compiled") strategy = argv[i + 1];
    if (std::string(argv[i]) == "--store") store = argv[i + 1];
  }
  try {
    auto t0 = std::chrono::steady_clock::now();
    ir::Graph g = fission::fission(frontend::load_onnx(dir + "/model.onnx"));
    double import_s = seconds_since(t0);
    ir::Tensor x = ir::read_npy(dir + "/input.npy"), want = ir::read_npy(dir + "/output.npy");
    auto t1 = std::chrono::steady_clock::now();
    std::vector<ir::Tensor> outs = interp::run(g, {x});
    double run_s = seconds_since(t1);
    std::string diff = interp::compare_tensors(outs.at(0), want, rtol, atol);
    std::printf("%s: %d primitives; import+fission %.2f s, interpreter %.2f s; relative L2 error %.3g; %s\n",
                dir.c_str(), g.num_nodes(), import_s, run_s, relative_l2(outs[0], want),
                diff.empty() ? "matches" : ("MISMATCH: " + diff).c_str());
    if (!diff.empty()) return 1;
    if (!store.empty() && check_stored(g, dir, store, x, want) != 0) return 1;
    return strategy.empty() ? 0 : check_compiled(g, dir, strategy, x, want, rtol, atol);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", dir.c_str(), e.what());
    return 1;
  }
}
