// The ONNX backend node-test conformance run: every node test shipped by libonnx-testdata
// goes import -> fission -> reference interpreter, and its outputs are compared with the
// expected ones (ONNX's tolerances: rtol 1e-3, atol 1e-7). Unsupported combinations are
// counted, not failed; a supported test that fails fails the run (exit code 1).
//
//   orchid_conformance [DATA_DIR] [--filter SUBSTRING] [--verbose] [--compiled] [--shard K/N]
//
// --compiled: every test the interpreter passes is also compiled (`greedy`, as `orchid
// compile` does, verification included) and the artifact's outputs are compared with the
// expected ones. --shard K/N runs the K-th of N interleaved parts of the test list.
#include <onnx/defs/schema.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "driver/pipeline.h"
#include "fission/fission.h"
#include "runtime/model.h"
#include "runtime/session.h"
#include "frontend/onnx_loader.h"
#include "frontend/tensor_proto.h"
#include "interp/interp.h"
#include "report.h"
#include "support/error.h"
#include "interp/compare.h"

namespace fs = std::filesystem;
using namespace orchid;

namespace {

struct Outcome {
  enum Kind { Passed, Failed, Unsupported, Deviation } kind;
  std::string detail;
};

// Tests whose expected data disagrees with the ONNX specification Orchid follows; each is
// run, and reported with its reason instead of failing (docs/ops.md lists them too).
struct Deviation {
  const char* test;
  const char* reason;
};
constexpr Deviation kDeviations[] = {
    {"test_cast_FLOAT_to_BFLOAT16",
     "libonnx-testdata 1.12 truncates f32 to bf16; Orchid rounds to nearest even (as ONNX "
     "Runtime does)"},
    {"test_castlike_BFLOAT16_to_FLOAT",
     "the test data gives input 'like' shape [1], the model declares [3,4]"},
    {"test_castlike_BFLOAT16_to_FLOAT_expanded",
     "the test data gives input 'like' shape [1], the model declares [3,4]"},
    {"test_castlike_FLOAT_to_BFLOAT16",
     "the test data gives input 'like' shape [1], the model declares [3,4]"},
    {"test_castlike_FLOAT_to_BFLOAT16_expanded",
     "the test data gives input 'like' shape [1], the model declares [3,4]"},
};

const char* deviation_reason(const std::string& test) {
  for (const Deviation& d : kDeviations)
    if (test == d.test) return d.reason;
  return nullptr;
}

std::string squash(std::string s) {
  std::string out;
  for (char c : s)
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The operator a test exercises: the longest ONNX op name that prefixes the test's name
// (test_reduce_sum_keepdims -> ReduceSum), as ONNX's own coverage report groups them.
std::string op_of_test(const std::string& test, const std::vector<std::string>& ops) {
  std::string t = squash(test.substr(5));
  // Test names that abbreviate their operator.
  static const std::pair<const char*, const char*> kAbbrev[] = {
      {"batchnorm", "BatchNormalization"}, {"instancenorm", "InstanceNormalization"},
      {"layernorm", "LayerNormalization"}, {"lrn", "LRN"}, {"convtranspose", "ConvTranspose"},
      {"greaterequal", "GreaterOrEqual"}, {"lessequal", "LessOrEqual"}, {"trainingdropout", "Dropout"},
      {"mvn", "MeanVarianceNormalization"}, {"nllloss", "NegativeLogLikelihoodLoss"},
      {"sce", "SoftmaxCrossEntropyLoss"}};
  for (const auto& [prefix, op] : kAbbrev)
    if (t.rfind(prefix, 0) == 0) return op;
  std::string best = "?";
  for (const auto& op : ops) {
    std::string o = squash(op);
    if (t.rfind(o, 0) == 0 && (best == "?" || o.size() > squash(best).size())) best = op;
  }
  return best;
}

std::vector<fs::path> sorted_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
    auto num = [](const fs::path& p) {
      std::string s = p.stem().string();
      return std::stoi(s.substr(s.find('_') + 1));
    };
    return num(a) < num(b);
  });
  return out;
}

// The node tests store bfloat16 data as UINT16 tensors (numpy has no bfloat16): read such
// a tensor as bf16 where the graph expects bf16.
ir::Tensor as_dtype(ir::Tensor t, ir::DType want) {
  if (t.dtype() == ir::DType::U16 && want == ir::DType::BF16)
    return ir::Tensor(ir::TensorType{want, t.shape()}, t.bytes());
  return t;
}

std::vector<ir::Tensor> read_inputs(const fs::path& set) {
  std::vector<ir::Tensor> inputs;
  for (const auto& f : sorted_files(set, "input_")) inputs.push_back(frontend::read_tensor_pb(f.string()));
  return inputs;
}

// Orchid computes every shape itself; where ONNX's shape inference determined a value's type
// completely, the two must agree.
void check_inferred_types(const frontend::OpGraph& model, const ir::Graph& g) {
  for (const auto& [name, type] : model.inferred) {
    auto v = g.find_value(name);
    if (v && g.type(*v) != type)
      throw std::runtime_error("value '" + name + "' is " + ir::type_str(g.type(*v)) +
                               ", ONNX shape inference says " + ir::type_str(type));
  }
}

// Imports the model and reads a data set's inputs. When a valid model is unsupported only
// because a shape depends on an input (a Reshape's shape, a Resize's scales fed as inputs),
// binds such inputs to this data set's values at compile time (as `orchid run --bind` does).
ir::Graph import_for(const fs::path& dir, const fs::path& set, std::vector<ir::Tensor>& inputs, bool* bound) {
  std::string path = (dir / "model.onnx").string();
  *bound = false;
  try {
    frontend::ImportOptions with_inference;
    with_inference.onnx_shape_inference = true;
    frontend::OpGraph model = frontend::load_onnx(path, with_inference);
    ir::Graph g = fission::fission(model);
    check_inferred_types(model, g);
    inputs = read_inputs(set);
    return g;
  } catch (const UnsupportedError&) {
    frontend::OpGraph probe = frontend::load_onnx(path);
    std::vector<ir::Tensor> all = read_inputs(set);
    // First the integer inputs (shapes, axes, indices of Slice); then every input (float
    // scales of Resize, Range's bounds: the whole node folds at compile time).
    for (int attempt = 0; attempt < 2; ++attempt) {
      frontend::ImportOptions opts;
      inputs.clear();
      for (size_t k = 0; k < probe.inputs.size() && k < all.size(); ++k) {
        bool bind = attempt == 1 || ir::is_int(probe.inputs[k].second.dtype);
        if (bind) opts.bind.emplace(probe.inputs[k].first, all[k]);
        else inputs.push_back(all[k]);
      }
      if (opts.bind.empty()) continue;
      try {
        *bound = true;
        return fission::fission(frontend::load_onnx(path, opts));
      } catch (const UnsupportedError& e) {  // still unsupported once bound: that reason
        if (attempt == 1) throw;            // (an If folded to a branch of sequences, say)
      } catch (const UserError&) {          // the data does not fit the model
      }
    }
    throw;  // the original UnsupportedError
  }
}

struct RunMode {
  bool compiled = false;
  fs::path work;  // artifacts and the object cache of compiled mode
};

// The graph compiled with `greedy` into an artifact, run on the data set's inputs.
std::vector<ir::Tensor> run_compiled(const ir::Graph& g, const std::vector<ir::Tensor>& inputs, const RunMode& mode,
                                     const std::string& name) {
  driver::CompileOptions o;
  o.model_path = name;
  o.strategy = orchestrate::Strategy::Greedy;
  o.out_dir = (mode.work / name).string();
  o.build.compiler.cache_dir = mode.work / "objects";
  o.build.cores = 2;
  o.measure_seconds = 0;
  driver::compile_graph(g, o);
  runtime::Session session(runtime::Model::load(o.out_dir));
  std::map<std::string, ir::Tensor, std::less<>> by_name;
  for (size_t k = 0; k < inputs.size(); ++k) by_name[g.value(g.inputs()[k]).name] = inputs[k];
  std::vector<ir::Tensor> outs = session.run(by_name);
  fs::remove_all(o.out_dir);
  return outs;
}

// The interpreter's precision for a test: f64 (floats unrounded), but each dtype's own where
// an output is an integer computed from floats (a quantization: its f32 intermediates, such
// as the scale of DynamicQuantizeLinear, decide how the result rounds).
interp::Precision reference_precision(const ir::Graph& g) {
  for (ir::ValueId v : g.outputs())
    if (!ir::is_float(g.type(v).dtype) && g.type(v).dtype != ir::DType::Bool) return interp::Precision::Own;
  return interp::Precision::F64;
}

Outcome run_test(const fs::path& dir, const RunMode& mode) {
  try {
    bool any_bound = false;
    for (const auto& set : fs::directory_iterator(dir)) {
      if (!set.is_directory()) continue;
      std::vector<ir::Tensor> inputs;
      bool bound = false;
      ir::Graph g = import_for(dir, set.path(), inputs, &bound);
      any_bound |= bound;
      for (size_t k = 0; k < inputs.size() && k < g.inputs().size(); ++k)
        inputs[k] = as_dtype(std::move(inputs[k]), g.type(g.inputs()[k]).dtype);
      std::vector<ir::Tensor> outs = mode.compiled ? run_compiled(g, inputs, mode, dir.filename().string())
                                                   : interp::run(g, inputs, {reference_precision(g)});
      std::vector<fs::path> expected = sorted_files(set.path(), "output_");
      if (expected.size() != outs.size())
        return {Outcome::Failed, std::to_string(outs.size()) + " outputs, expected " + std::to_string(expected.size())};
      for (size_t k = 0; k < outs.size(); ++k) {
        ir::Tensor want = as_dtype(frontend::read_tensor_pb(expected[k].string()), outs[k].dtype());
        std::string diff = interp::compare_tensors(outs[k], want, 1e-3, 1e-7);
        if (!diff.empty()) return {Outcome::Failed, set.path().filename().string() + " output " + std::to_string(k) + ": " + diff};
      }
    }
    return {Outcome::Passed, any_bound ? "inputs bound at compile time" : ""};
  } catch (const UnsupportedError& e) {
    std::string msg = e.what();
    size_t p = msg.find("not supported: ");
    return {Outcome::Unsupported, p == std::string::npos ? msg : msg.substr(p + 15)};
  } catch (const std::exception& e) {
    return {Outcome::Failed, e.what()};
  }
}

conformance::Results run_all(const std::string& data, const std::string& filter, bool verbose, const RunMode& mode,
                             int shard, int shards) {
  std::vector<std::string> ops;
  for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas()) ops.push_back(s.Name());
  std::vector<fs::path> tests;
  for (const auto& e : fs::directory_iterator(data))
    if (e.is_directory() && e.path().filename().string().find(filter) != std::string::npos) tests.push_back(e.path());
  std::sort(tests.begin(), tests.end());
  std::vector<fs::path> mine;
  for (size_t i = 0; i < tests.size(); ++i)
    if (static_cast<int>(i % shards) == shard) mine.push_back(tests[i]);
  tests = mine;
  conformance::Results r;
  r.tests = tests.size();
  for (const auto& t : tests) {
    std::string name = t.filename().string();
    Outcome o = run_test(t, mode);
    if (o.kind == Outcome::Failed && deviation_reason(name)) {
      o = {Outcome::Deviation, deviation_reason(name)};
      r.deviations.push_back(name + ": " + o.detail);
    }
    conformance::OpTally& op = r.tally[op_of_test(name, ops)];
    if (o.kind == Outcome::Passed) ++op.passed, op.bound += !o.detail.empty();
    if (o.kind == Outcome::Failed) ++op.failed, r.failures.push_back(name + ": " + o.detail);
    if (o.kind == Outcome::Unsupported) ++op.unsupported, ++op.reasons[o.detail];
    if (verbose) {
      static const char* kNames[] = {"ok", "FAIL", "unsupported", "deviation"};
      std::printf("%-60s %s %s\n", name.c_str(), kNames[o.kind], o.detail.c_str());
    }
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = "/usr/share/libonnx-testdata/data/node", filter, markdown;
  bool verbose = false;
  RunMode mode;
  int shard = 0, shards = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--filter" && i + 1 < argc) filter = argv[++i];
    else if (a == "--compiled") mode.compiled = true;
    else if (a == "--shard" && i + 1 < argc && std::sscanf(argv[i + 1], "%d/%d", &shard, &shards) == 2 && shards > 0 &&
             shard >= 0 && shard < shards) ++i;
    else if (a == "--markdown" && i + 1 < argc) markdown = argv[++i];
    else if (a == "--verbose") verbose = true;
    else data = a;
  }
  if (!fs::is_directory(data)) {
    std::fprintf(stderr, "conformance: %s not found (scripts/install-deps.sh installs libonnx-testdata)\n", data.c_str());
    return 1;
  }
  if (mode.compiled) {
    mode.work = fs::temp_directory_path() / ("orchid-conformance-" + std::to_string(shard) + "-of-" + std::to_string(shards));
    fs::create_directories(mode.work);
  }
  conformance::Results r = run_all(data, filter, verbose, mode, shard, shards);
  conformance::print_report(r);
  if (!markdown.empty()) conformance::write_markdown(r, markdown);
  return r.failures.empty() ? 0 : 1;
}
