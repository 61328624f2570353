// The error of 16-bit storage (`orchid compile --precision bf16|fp16`) on benchmark models,
// measured without a GPU: each model's cleaned-up graph with its f32 values stored in bf16 and
// in f16 (rewrite::store_floats_as) run by the reference interpreter in its own precision
// (every value rounded to its dtype after each operation: coarser than generated kernels,
// which round only what they store), against the f32 graph in f64, on the model's own inputs
// (the benchmark cache's inputs/NAME.npy). Prints a markdown table: the largest relative L2
// error over each model's outputs, against the precision's default tolerance.
//   storage_error [--max-gflop G] MODEL_DIR...
// A model of more than G GFLOP (default 40) is listed as skipped: the interpreter is slow.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "driver/pipeline.h"
#include "fission/fission.h"
#include "frontend/onnx_loader.h"
#include "interp/compare.h"
#include "interp/interp.h"
#include "ir/npy.h"
#include "ir/stats.h"
#include "rewrite/store_precision.h"
#include "runtime/plan.h"

using namespace orchid;
namespace fs = std::filesystem;

namespace {

// The largest relative L2 error over the outputs (NaN or infinity where one is not finite).
double worst_error(const std::vector<ir::Tensor>& got, const std::vector<ir::Tensor>& want) {
  double worst = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    double e = interp::relative_l2(got[k], want[k], nullptr);
    if (!std::isfinite(e)) return e;
    worst = std::max(worst, e);
  }
  return worst;
}

std::string cell(double err, double tolerance) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2e%s", err, std::isfinite(err) && err <= tolerance ? "" : " (above)");
  return buf;
}

void measure(const fs::path& dir, double max_gflop) {
  std::string name = dir.filename().string();
  ir::Graph g = driver::clean_up(fission::fission(frontend::load_onnx((dir / "model.onnx").string())));
  double gflop = ir::graph_stats(g).flops * 1e-9;
  if (gflop > max_gflop) {
    std::printf("| %s | %.1f | skipped | | |\n", name.c_str(), gflop);
    return;
  }
  std::vector<ir::Tensor> inputs;
  for (ir::ValueId v : g.inputs())
    inputs.push_back(ir::read_npy((dir / "inputs" / (g.value(v).name + ".npy")).string()));
  auto t0 = std::chrono::steady_clock::now();
  std::vector<ir::Tensor> want = interp::run(g, inputs);
  std::string cells;
  for (runtime::PlanPrecision precision : {runtime::PlanPrecision::Bf16, runtime::PlanPrecision::Fp16}) {
    ir::Graph h = rewrite::store_floats_as(g, *runtime::storage_dtype(precision));
    cells += " " + cell(worst_error(interp::run(h, inputs, {interp::Precision::Own}), want),
                        runtime::default_tolerance(precision)) + " |";
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("| %s | %.1f |%s %.0f |\n", name.c_str(), gflop, cells.c_str(), s);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  double max_gflop = 40;
  std::vector<fs::path> dirs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--max-gflop") {
      char* end = nullptr;
      max_gflop = i + 1 < argc ? std::strtod(argv[++i], &end) : 0;
      if (end == nullptr || *end != '\0' || !(max_gflop > 0)) {
        std::fprintf(stderr, "storage_error: --max-gflop takes a positive number of GFLOP\n");
        return 2;
      }
    } else {
      dirs.emplace_back(a);
    }
  }
  if (dirs.empty()) {
    std::fprintf(stderr, "usage: storage_error [--max-gflop G] MODEL_DIR...\n");
    return 2;
  }
  std::printf("| model | GFLOP | bf16 storage (tolerance %.0e) | fp16 storage (tolerance %.0e) | interpreter s |\n",
              runtime::default_tolerance(runtime::PlanPrecision::Bf16),
              runtime::default_tolerance(runtime::PlanPrecision::Fp16));
  std::printf("|---|---:|---:|---:|---:|\n");
  int status = 0;
  for (const fs::path& d : dirs) {
    try {
      measure(d, max_gflop);
    } catch (const std::exception& e) {
      std::printf("| %s | | error: %s | | |\n", d.filename().string().c_str(), e.what());
      status = 1;
    }
  }
  return status;
}
