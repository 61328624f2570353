#include "model_options.h"

#include "frontend/onnx_loader.h"
#include "ir/npy.h"
#include "support/error.h"

namespace orchid::cli {

void add_model_options(CLI::App* cmd, ModelOptions& m) {
  cmd->add_option("model", m.file, "the .onnx file")->required();
  cmd->add_option("--shape", m.shapes, "name=1x3x224x224: fix the dynamic dims of an input");
  cmd->add_option("--bind", m.binds,
                  "name=file.npy: bind an input to a value at compile time (e.g. a shape tensor)");
  cmd->add_option("--max-nodes", m.max_nodes, "refuse models of more nodes than this")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

frontend::ImportOptions import_options(const ModelOptions& m) {
  frontend::ImportOptions opts;
  opts.max_nodes = m.max_nodes;
  for (const std::string& spec : m.shapes) {
    size_t eq = spec.find('=');
    ORCHID_USER_CHECK(eq != std::string::npos && eq > 0)
        << "--shape '" << spec << "': expected name=dims, e.g. input=1x3x224x224";
    std::string name = spec.substr(0, eq);
    ORCHID_USER_CHECK(!opts.shapes.count(name)) << "--shape: input '" << name << "' given twice";
    opts.shapes[name] = frontend::parse_dims(spec.substr(eq + 1), "--shape " + name);
  }
  for (const std::string& spec : m.binds) {
    size_t eq = spec.find('=');
    ORCHID_USER_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size())
        << "--bind '" << spec << "': expected name=file.npy";
    std::string name = spec.substr(0, eq);
    ORCHID_USER_CHECK(!opts.bind.count(name)) << "--bind: input '" << name << "' given twice";
    opts.bind.emplace(name, ir::read_npy(spec.substr(eq + 1)));
  }
  return opts;
}

frontend::OpGraph load_model(const ModelOptions& m) { return frontend::load_onnx(m.file, import_options(m)); }

}  // namespace orchid::cli
