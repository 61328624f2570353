#include "run_io.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "driver/memory_check.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/npy.h"
#include "summary.h"
#include "support/error.h"
#include "support/random.h"

namespace orchid::cli {

namespace {

// Splits "name=rest"; UserError naming the flag when malformed.
std::pair<std::string, std::string> split_spec(const std::string& spec, const char* flag, const char* form) {
  size_t eq = spec.find('=');
  ORCHID_USER_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size())
      << flag << " '" << spec << "': expected " << form;
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

size_t input_slot(const ir::Graph& g, const std::string& name, const char* flag) {
  for (size_t k = 0; k < g.inputs().size(); ++k)
    if (g.value(g.inputs()[k]).name == name) return k;
  ORCHID_USER_ERROR() << flag << ": the graph has no input named '" << name << "'";
  return 0;
}

void redraw(ir::Tensor& t, const std::string& range, const std::string& name, uint64_t seed) {
  size_t colon = range.find(':');
  double lo = 0, hi = 0;
  try {
    ORCHID_USER_CHECK(colon != std::string::npos) << "--input-range " << name << ": expected lo:hi";
    lo = std::stod(range.substr(0, colon));
    hi = std::stod(range.substr(colon + 1));
  } catch (const std::logic_error&) {
    ORCHID_USER_ERROR() << "--input-range " << name << ": expected numbers lo:hi, given '" << range << "'";
  }
  ORCHID_USER_CHECK(lo < hi) << "--input-range " << name << ": empty range " << range;
  Rng rng(seed ^ 0x5eed5eedull);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = rng.uniform(lo, hi);
    if (ir::is_float(t.dtype())) t.set_f64(i, v);
    else t.set_i64(i, ir::float_to_integral(std::floor(v), t.dtype()));
  }
}

}  // namespace

void write_outputs(const ir::Graph& g, const std::vector<ir::Tensor>& outs, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  ORCHID_USER_CHECK(!ec) << dir << ": cannot create directory: " << ec.message();
  std::set<std::string> used;
  for (size_t k = 0; k < outs.size(); ++k) {
    std::string stem = safe_file_stem(g.value(g.outputs()[k]).name);
    while (!used.insert(stem).second) stem += "_" + std::to_string(k);
    std::string path = (std::filesystem::path(dir) / (stem + ".npy")).string();
    ir::write_npy(path, outs[k]);
    std::printf("wrote %s\n", path.c_str());
  }
}

void add_run_io_options(CLI::App* cmd, RunIo& io) {
  cmd->add_option("--input", io.inputs, "name=file.npy; inputs not given are seeded random");
  cmd->add_option("--input-range", io.input_ranges,
                  "name=lo:hi; draw that random input uniformly in [lo, hi)");
  cmd->add_option("--output-dir", io.output_dir, "write each output as <name>.npy here");
  cmd->add_option("--seed", io.seed, "seed of the random inputs (default 0)");
  cmd->add_option("--precision", io.precision, "f64 (reference) or own (each dtype's own)")
      ->check(CLI::IsMember({"f64", "own"}));
}

std::vector<ir::Tensor> make_inputs(const ir::Graph& g, const RunIo& io) {
  std::vector<ir::Tensor> inputs = interp::random_inputs(g, io.seed);
  for (const std::string& spec : io.input_ranges) {
    auto [name, range] = split_spec(spec, "--input-range", "name=lo:hi");
    size_t slot = input_slot(g, name, "--input-range");
    redraw(inputs[slot], range, name, io.seed + slot);
  }
  std::set<std::string> seen;
  for (const std::string& spec : io.inputs) {
    auto [name, path] = split_spec(spec, "--input", "name=file.npy");
    ORCHID_USER_CHECK(seen.insert(name).second) << "--input: input '" << name << "' given twice";
    size_t slot = input_slot(g, name, "--input");
    ir::Tensor t = ir::read_npy(path);
    const ir::TensorType& want = g.type(g.inputs()[slot]);
    ORCHID_USER_CHECK(t.type() == want) << path << ": input '" << name << "' expects "
                                        << ir::type_str(want) << ", the file holds "
                                        << ir::type_str(t.type());
    inputs[slot] = std::move(t);
  }
  return inputs;
}

int run_and_report(const ir::Graph& g, const std::string& source, const RunIo& io) {
  driver::check_memory_fits(g, source, driver::Evaluator::Interpreter);
  std::vector<ir::Tensor> inputs = make_inputs(g, io);
  interp::Options opts;
  opts.precision = io.precision == "own" ? interp::Precision::Own : interp::Precision::F64;
  std::vector<ir::Tensor> outs = interp::run(g, inputs, opts);
  std::printf("graph @%s: %d primitives, %zu inputs, %zu outputs\n", g.name.c_str(), g.num_nodes(),
              g.inputs().size(), g.outputs().size());
  for (size_t k = 0; k < outs.size(); ++k)
    std::printf("  %s: %s\n", g.value(g.outputs()[k]).name.c_str(), summarize(outs[k]).c_str());
  if (!io.output_dir.empty()) write_outputs(g, outs, io.output_dir);
  return 0;
}

}  // namespace orchid::cli
