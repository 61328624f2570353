// `orchid ir-run file.oir`: runs a primitive graph in text form through the reference
// interpreter, on given .npy inputs or seeded random ones, and prints or writes the outputs.
#include <cstdio>
#include <filesystem>
#include <set>

#include "commands.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/npy.h"
#include "ir/parser.h"
#include "summary.h"
#include "support/error.h"

namespace orchid::cli {

namespace {

struct IrRunOptions {
  std::string file;
  std::vector<std::string> inputs;  // name=file.npy
  std::string output_dir;
  uint64_t seed = 0;
  std::string precision = "f64";
};

// Replaces the random inputs named by `--input name=file.npy`.
void apply_given_inputs(const ir::Graph& g, const std::vector<std::string>& specs,
                        std::vector<ir::Tensor>& inputs) {
  std::set<std::string> seen;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    ORCHID_USER_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size())
        << "--input '" << spec << "': expected name=file.npy";
    std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
    ORCHID_USER_CHECK(seen.insert(name).second) << "--input: input '" << name << "' given twice";
    size_t slot = 0;
    while (slot < g.inputs().size() && g.value(g.inputs()[slot]).name != name) ++slot;
    ORCHID_USER_CHECK(slot < g.inputs().size()) << "--input: the graph has no input named '"
                                                << name << "'";
    ir::Tensor t = ir::read_npy(path);
    const ir::TensorType& want = g.type(g.inputs()[slot]);
    ORCHID_USER_CHECK(t.type() == want) << path << ": input '" << name << "' expects "
                                        << ir::type_str(want) << ", the file holds "
                                        << ir::type_str(t.type());
    inputs[slot] = std::move(t);
  }
}

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

int run_ir(const IrRunOptions& o) {
  ir::Graph g = ir::parse_graph_file(o.file);
  std::vector<ir::Tensor> inputs = interp::random_inputs(g, o.seed);
  apply_given_inputs(g, o.inputs, inputs);
  interp::Options opts;
  opts.precision = o.precision == "own" ? interp::Precision::Own : interp::Precision::F64;
  std::vector<ir::Tensor> outs = interp::run(g, inputs, opts);
  std::printf("graph @%s: %d primitives, %zu inputs, %zu outputs\n", g.name.c_str(),
              g.num_nodes(), g.inputs().size(), g.outputs().size());
  for (size_t k = 0; k < outs.size(); ++k)
    std::printf("  %s: %s\n", g.value(g.outputs()[k]).name.c_str(), summarize(outs[k]).c_str());
  if (!o.output_dir.empty()) write_outputs(g, outs, o.output_dir);
  return 0;
}

}  // namespace

Command add_ir_run(CLI::App& app) {
  auto opts = std::make_shared<IrRunOptions>();
  CLI::App* cmd = app.add_subcommand("ir-run", "Run a primitive graph (.oir text IR) through the reference interpreter");
  cmd->add_option("file", opts->file, "the .oir file")->required();
  cmd->add_option("--input", opts->inputs, "name=file.npy; inputs not given are seeded random");
  cmd->add_option("--output-dir", opts->output_dir, "write each output as <name>.npy here");
  cmd->add_option("--seed", opts->seed, "seed of the random inputs (default 0)");
  cmd->add_option("--precision", opts->precision, "f64 (reference) or own (each dtype's own)")
      ->check(CLI::IsMember({"f64", "own"}));
  return {cmd, [opts] { return run_ir(*opts); }};
}

}  // namespace orchid::cli
