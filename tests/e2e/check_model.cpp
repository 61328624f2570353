// Checks Orchid's reference pipeline on an exported model against the framework's own
// output: DIR/model.onnx run on DIR/input.npy must match DIR/output.npy.
//
//   orchid_check_model DIR [--rtol R] [--atol A]
// Prints the time of import + fission and of the interpreter run, and the relative L2 error.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "fission/fission.h"
#include "frontend/onnx_loader.h"
#include "interp/compare.h"
#include "interp/interp.h"
#include "ir/npy.h"
#include "support/error.h"

using namespace orchid;

namespace {
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double relative_l2(const ir::Tensor& got, const ir::Tensor& want) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double d = got.get_as_double(i) - want.get_as_double(i);
    num += d * d;
    den += want.get_as_double(i) * want.get_as_double(i);
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: orchid_check_model DIR [--rtol R] [--atol A]\n");
    return 2;
  }
  std::string dir = argv[1];
  double rtol = 1e-3, atol = 1e-5;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--rtol") rtol = std::stod(argv[i + 1]);
    if (std::string(argv[i]) == "--atol") atol = std::stod(argv[i + 1]);
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
    return diff.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", dir.c_str(), e.what());
    return 1;
  }
}
