// `orchid inspect model.onnx`: what the model is made of — operators by count, input and
// output types, parameter bytes, FLOPs (a multiply-add is 2) and primitives by kind.
#include <cstdio>
#include <map>

#include "commands.h"
#include "fission/fission.h"
#include "ir/stats.h"
#include "model_options.h"

namespace orchid::cli {

namespace {

std::string human(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T"};
  int p = 0;
  while (v >= 1000 && p < 4) v /= 1000, ++p;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefixes[p], unit);
  return buf;
}

int inspect(const ModelOptions& m) {
  frontend::OpGraph model = load_model(m);
  ir::Graph g = fission::fission(model);
  std::printf("model %s: graph '%s', opset %lld, %zu nodes\n", model.path.c_str(), model.name.c_str(),
              static_cast<long long>(model.opset), model.nodes.size());
  std::map<std::string, int> ops;
  for (const auto& n : model.nodes) ++ops[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
  std::printf("operators:\n");
  for (const auto& [op, count] : ops) std::printf("  %-28s %d\n", op.c_str(), count);
  std::printf("inputs:\n");
  for (ir::ValueId v : g.inputs())
    std::printf("  %-28s %s\n", g.value(v).name.c_str(), ir::type_str(g.type(v)).c_str());
  std::printf("outputs:\n");
  for (ir::ValueId v : g.outputs())
    std::printf("  %-28s %s\n", g.value(v).name.c_str(), ir::type_str(g.type(v)).c_str());
  ir::GraphStats s = ir::graph_stats(g);
  std::printf("parameters: %s (%lld bytes in %zu constants)\n", human(double(s.parameter_bytes), "B").c_str(),
              static_cast<long long>(s.parameter_bytes), g.constants().size());
  std::printf("FLOPs: %s (%lld)\n", human(double(s.flops), "FLOP").c_str(), static_cast<long long>(s.flops));
  std::printf("primitives: %d\n", g.num_nodes());
  for (size_t k = 0; k < s.primitives_by_kind.size(); ++k)
    std::printf("  %-28s %lld\n", std::string(ir::prim_kind_name(static_cast<ir::PrimKind>(k))).c_str(),
                static_cast<long long>(s.primitives_by_kind[k]));
  return 0;
}

}  // namespace

Command add_inspect(CLI::App& app) {
  auto opts = std::make_shared<ModelOptions>();
  CLI::App* cmd = app.add_subcommand("inspect", "Summarise an ONNX model: operators, shapes, parameters, FLOPs, primitives");
  add_model_options(cmd, *opts);
  return {cmd, [opts] { return inspect(*opts); }};
}

}  // namespace orchid::cli
