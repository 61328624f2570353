// JSON form of plans (plan.h). Plans are read from artifact directories a user may copy, edit
// or truncate, so every key, type and range is checked and a bad one is a UserError naming
// the file and the field (e.g. "plan.json: steps[2].args[1]: ..."). Unknown keys are errors
// too: a misspelt optional key must not be silently ignored.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "runtime/checksum.h"
#include "runtime/plan.h"
#include "support/error.h"

namespace orchid::runtime {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

// A JSON object being read, with its path for messages; `allowed` lists its keys.
class Reader {
 public:
  Reader(const json& j, std::string where, const std::string& source,
         std::initializer_list<const char*> allowed)
      : j_(j), where_(std::move(where)), source_(source) {
    ORCHID_USER_CHECK(j_.is_object()) << source_ << ": " << (where_.empty() ? "top level" : where_)
                                      << ": expected a JSON object";
    std::set<std::string, std::less<>> keys(allowed.begin(), allowed.end());
    for (auto it = j_.begin(); it != j_.end(); ++it)
      ORCHID_USER_CHECK(keys.count(it.key()))
          << source_ << ": " << at(it.key()) << ": unknown key for this version of the format";
  }

  bool has(const char* key) const { return j_.contains(key); }
  std::string at(std::string_view key) const {
    return where_.empty() ? std::string(key) : where_ + "." + std::string(key);
  }
  const json& raw(const char* key) const {
    auto it = j_.find(key);
    ORCHID_USER_CHECK(it != j_.end()) << source_ << ": " << at(key) << ": missing";
    return *it;
  }
  std::string str(const char* key) const { return as_string(raw(key), at(key)); }
  bool boolean(const char* key) const {
    const json& v = raw(key);
    ORCHID_USER_CHECK(v.is_boolean()) << source_ << ": " << at(key) << ": expected true or false";
    return v.get<bool>();
  }
  int64_t integer(const char* key, int64_t lo = std::numeric_limits<int64_t>::min(),
                  int64_t hi = std::numeric_limits<int64_t>::max()) const {
    return as_int(raw(key), at(key), lo, hi);
  }
  std::vector<int64_t> ints(const char* key, int64_t lo, int64_t hi) const {
    const json& a = array(key);
    std::vector<int64_t> out;
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(as_int(a[i], at(key) + "[" + std::to_string(i) + "]", lo, hi));
    return out;
  }
  std::vector<std::string> strings(const char* key) const {
    const json& a = array(key);
    std::vector<std::string> out;
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(as_string(a[i], at(key) + "[" + std::to_string(i) + "]"));
    return out;
  }
  const json& array(const char* key) const {
    const json& a = raw(key);
    ORCHID_USER_CHECK(a.is_array()) << source_ << ": " << at(key) << ": expected an array";
    return a;
  }
  uint64_t checksum(const char* key) const {
    std::string s = str(key);
    auto v = parse_checksum_hex(s);
    ORCHID_USER_CHECK(v) << source_ << ": " << at(key) << ": '" << s
                         << "' is not a checksum (16 hex digits)";
    return *v;
  }
  const std::string& source() const { return source_; }

 private:
  std::string as_string(const json& v, const std::string& where) const {
    ORCHID_USER_CHECK(v.is_string()) << source_ << ": " << where << ": expected a string";
    return v.get<std::string>();
  }
  int64_t as_int(const json& v, const std::string& where, int64_t lo, int64_t hi) const {
    ORCHID_USER_CHECK(v.is_number_integer()) << source_ << ": " << where << ": expected an integer";
    ORCHID_USER_CHECK(!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t(hi))
        << source_ << ": " << where << ": " << v.dump() << " is out of range";
    int64_t x = v.get<int64_t>();
    ORCHID_USER_CHECK(x >= lo && x <= hi) << source_ << ": " << where << ": " << x
                                          << " is out of range [" << lo << ", " << hi << "]";
    return x;
  }

  const json& j_;
  std::string where_;
  const std::string& source_;
};

constexpr int64_t kMaxI32 = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();

std::string item(const char* list, size_t i) { return std::string(list) + "[" + std::to_string(i) + "]"; }

std::vector<int32_t> ids(const Reader& r, const char* key) {
  std::vector<int32_t> out;
  for (int64_t v : r.ints(key, 0, kMaxI32)) out.push_back(static_cast<int32_t>(v));
  return out;
}

PlanBuffer read_buffer(const json& j, size_t index, const std::string& source) {
  Reader r(j, item("buffers", index), source,
           {"id", "name", "dtype", "shape", "kind", "weights_offset", "alias", "layout"});
  ORCHID_USER_CHECK(r.integer("id") == static_cast<int64_t>(index))
      << source << ": " << r.at("id") << ": must equal the buffer's position " << index;
  PlanBuffer b;
  b.name = r.str("name");
  std::string dtype = r.str("dtype");
  auto dt = ir::parse_dtype(dtype);
  ORCHID_USER_CHECK(dt) << source << ": " << r.at("dtype") << ": unknown dtype '" << dtype << "'";
  b.type.dtype = *dt;
  b.type.shape = r.ints("shape", 0, kMaxI64);
  ORCHID_USER_CHECK(ir::checked_numel(b.type.shape, b.type.dtype))
      << source << ": " << r.at("shape") << ": " << ir::dims_str(b.type.shape)
      << " is too large";
  std::string kind = r.str("kind");
  auto k = parse_buffer_kind(kind);
  ORCHID_USER_CHECK(k) << source << ": " << r.at("kind") << ": unknown kind '" << kind
                       << "' (expected input, output, constant or intermediate)";
  b.kind = *k;
  if (r.has("weights_offset")) b.weights_offset = r.integer("weights_offset", 0, kMaxI64);
  if (r.has("alias")) b.alias = static_cast<int32_t>(r.integer("alias", 0, kMaxI32));
  if (r.has("layout")) {
    std::string layout = r.str("layout");
    auto l = parse_buffer_layout(layout);
    ORCHID_USER_CHECK(l) << source << ": " << r.at("layout") << ": unknown layout '" << layout
                         << "' (expected plain, nChw8c, nChw16c, nhwc, panels16 or panels16t)";
    b.layout = *l;
  }
  ORCHID_USER_CHECK((b.kind == BufferKind::Constant) == r.has("weights_offset"))
      << source << ": " << r.at("weights_offset")
      << ": required for constants and only for them";
  return b;
}

PlanStep read_step(const json& j, size_t index, const std::string& source) {
  Reader r(j, item("steps", index), source,
           {"name", "impl", "args", "num_inputs", "library", "kernel", "tasks", "scratch_bytes",
            "threads", "shared_bytes", "ir", "checks", "source_ops", "flops", "bytes"});
  PlanStep s;
  s.name = r.str("name");
  std::string impl = r.str("impl");
  auto i = parse_step_impl(impl);
  ORCHID_USER_CHECK(i) << source << ": " << r.at("impl") << ": unknown impl '" << impl
                       << "' (expected generated, onednn, onednn_winograd, reference, cuda, cublaslt or cudnn)";
  s.impl = *i;
  s.args = ids(r, "args");
  s.num_inputs = static_cast<int32_t>(r.integer("num_inputs", 0, kMaxI32));
  if (s.impl == StepImpl::Cuda) {
    s.kernel = static_cast<int32_t>(r.integer("kernel", 0, kMaxI32));
    s.tasks = r.integer("tasks", 0, kMaxI32);
    s.threads = static_cast<int32_t>(r.integer("threads", 0, 1024));
    s.shared_bytes = r.integer("shared_bytes", 0, kMaxI32);
    s.scratch_bytes = r.integer("scratch_bytes", 0, kMaxI64);
    for (const char* key : {"library", "ir"})
      ORCHID_USER_CHECK(!r.has(key)) << source << ": " << r.at(key) << ": not allowed for impl " << impl;
  } else if (s.impl == StepImpl::Generated) {
    s.library = static_cast<int32_t>(r.integer("library", 0, kMaxI32));
    s.kernel = static_cast<int32_t>(r.integer("kernel", 0, kMaxI32));
    s.tasks = r.integer("tasks", 0, kMaxI64);
    s.scratch_bytes = r.integer("scratch_bytes", 0, kMaxI64);
    for (const char* key : {"ir", "threads", "shared_bytes"})
      ORCHID_USER_CHECK(!r.has(key)) << source << ": " << r.at(key) << ": not allowed for impl " << impl;
  } else {
    s.ir = r.str("ir");
    for (const char* key : {"library", "kernel", "tasks", "scratch_bytes", "threads", "shared_bytes"})
      ORCHID_USER_CHECK(!r.has(key)) << source << ": " << r.at(key) << ": not allowed for impl "
                                     << impl;
  }
  if (r.has("checks")) {
    ORCHID_USER_CHECK(s.impl == StepImpl::Generated || s.impl == StepImpl::Cuda)
        << source << ": " << r.at("checks") << ": not allowed for impl " << impl;
    s.checks = r.strings("checks");
  }
  s.source_ops = r.strings("source_ops");
  s.flops = r.integer("flops", 0, kMaxI64);
  s.bytes = r.integer("bytes", 0, kMaxI64);
  return s;
}

PlanLibrary read_library(const json& j, size_t index, const std::string& source) {
  Reader r(j, item("libraries", index), source, {"file", "checksum", "arch"});
  return PlanLibrary{r.str("file"), r.checksum("checksum"), r.has("arch") ? r.str("arch") : ""};
}

PlanWeights read_weights(const json& j, const std::string& source) {
  Reader r(j, "weights", source, {"file", "bytes", "checksum"});
  return PlanWeights{r.str("file"), r.integer("bytes", 0, kMaxI64), r.checksum("checksum")};
}

template <class T, class F>
std::vector<T> read_list(const Reader& top, const char* key, F read_one) {
  const json& a = top.array(key);
  std::vector<T> out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back(read_one(a[i], i, top.source()));
  return out;
}

Plan read_top(const json& j, const std::string& source) {
  Reader r(j, "", source,
           {"format", "version", "device", "precision", "flush_denormals", "graph", "target", "isa", "buffers", "inputs", "outputs",
            "libraries", "steps", "weights"});
  std::string format = r.str("format");
  ORCHID_USER_CHECK(format == kPlanFormat)
      << source << ": format: '" << format << "' is not an Orchid plan (expected '"
      << kPlanFormat << "')";
  int64_t version = r.integer("version");
  ORCHID_USER_CHECK(version == kPlanVersion)
      << source << ": version: " << version << " is not supported (this runtime reads version "
      << kPlanVersion << ")";
  Plan p;
  if (r.has("device")) {
    std::string device = r.str("device");
    auto d = parse_plan_device(device);
    ORCHID_USER_CHECK(d) << source << ": device: unknown device '" << device << "' (expected cpu or cuda)";
    p.device = *d;
  }
  if (r.has("precision")) {
    std::string precision = r.str("precision");
    auto pr = parse_plan_precision(precision);
    ORCHID_USER_CHECK(pr) << source << ": precision: unknown precision '" << precision << "' (expected "
                        << plan_precision_names() << ")";
    p.precision = *pr;
  }
  if (r.has("flush_denormals")) p.flush_denormals = r.boolean("flush_denormals");
  p.graph_name = r.str("graph");
  p.target = r.str("target");
  p.isa = r.strings("isa");
  p.buffers = read_list<PlanBuffer>(r, "buffers", read_buffer);
  p.inputs = ids(r, "inputs");
  p.outputs = ids(r, "outputs");
  p.libraries = read_list<PlanLibrary>(r, "libraries", read_library);
  p.steps = read_list<PlanStep>(r, "steps", read_step);
  p.weights = read_weights(r.raw("weights"), source);
  return p;
}

ojson buffer_json(const PlanBuffer& b, size_t id) {
  ojson j{{"id", id},
          {"name", b.name},
          {"dtype", std::string(ir::dtype_name(b.type.dtype))},
          {"shape", b.type.shape},
          {"kind", std::string(buffer_kind_name(b.kind))}};
  if (b.kind == BufferKind::Constant) j["weights_offset"] = b.weights_offset;
  if (b.alias >= 0) j["alias"] = b.alias;
  if (b.layout != BufferLayout::Plain) j["layout"] = std::string(buffer_layout_name(b.layout));
  return j;
}

ojson step_json(const PlanStep& s) {
  ojson j{{"name", s.name},
          {"impl", std::string(step_impl_name(s.impl))},
          {"args", s.args},
          {"num_inputs", s.num_inputs}};
  if (s.impl == StepImpl::Cuda) {
    j["kernel"] = s.kernel;
    j["tasks"] = s.tasks;
    j["threads"] = s.threads;
    j["shared_bytes"] = s.shared_bytes;
    j["scratch_bytes"] = s.scratch_bytes;
  } else if (s.impl == StepImpl::Generated) {
    j["library"] = s.library;
    j["kernel"] = s.kernel;
    j["tasks"] = s.tasks;
    j["scratch_bytes"] = s.scratch_bytes;
  } else {
    j["ir"] = s.ir;
  }
  if (!s.checks.empty()) j["checks"] = s.checks;
  j["source_ops"] = s.source_ops;
  j["flops"] = s.flops;
  j["bytes"] = s.bytes;
  return j;
}

}  // namespace

std::string plan_to_json(const Plan& plan) {
  ojson j{{"format", kPlanFormat}, {"version", kPlanVersion}};
  if (plan.device != PlanDevice::Cpu) j["device"] = std::string(plan_device_name(plan.device));
  if (plan.precision != PlanPrecision::Fp32) j["precision"] = std::string(plan_precision_name(plan.precision));
  if (plan.flush_denormals) j["flush_denormals"] = true;
  j["graph"] = plan.graph_name;
  j["target"] = plan.target;
  j["isa"] = plan.isa;
  ojson buffers = ojson::array();
  for (size_t i = 0; i < plan.buffers.size(); ++i) buffers.push_back(buffer_json(plan.buffers[i], i));
  j["buffers"] = std::move(buffers);
  j["inputs"] = plan.inputs;
  j["outputs"] = plan.outputs;
  ojson libraries = ojson::array();
  for (const PlanLibrary& l : plan.libraries) {
    ojson lib{{"file", l.file}, {"checksum", checksum_hex(l.checksum)}};
    if (!l.arch.empty()) lib["arch"] = l.arch;
    libraries.push_back(std::move(lib));
  }
  j["libraries"] = std::move(libraries);
  ojson steps = ojson::array();
  for (const PlanStep& s : plan.steps) steps.push_back(step_json(s));
  j["steps"] = std::move(steps);
  j["weights"] = ojson{{"file", plan.weights.file},
                       {"bytes", plan.weights.bytes},
                       {"checksum", checksum_hex(plan.weights.checksum)}};
  return j.dump(2) + "\n";
}

Plan plan_from_json(std::string_view text, const std::string& source) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  ORCHID_USER_CHECK(!j.is_discarded()) << source << ": not valid JSON";
  Plan p = read_top(j, source);
  validate_plan(p, source);
  return p;
}

void write_plan(const Plan& plan, const std::string& dir) {
  validate_plan(plan, "plan to write");
  std::string path = (std::filesystem::path(dir) / kPlanFileName).string();
  std::ofstream out(path, std::ios::binary);
  ORCHID_USER_CHECK(out) << path << ": cannot write (" << std::strerror(errno) << ")";
  out << plan_to_json(plan);
  out.close();
  ORCHID_USER_CHECK(out) << path << ": write failed";
}

Plan read_plan(const std::string& dir) {
  std::string path = (std::filesystem::path(dir) / kPlanFileName).string();
  std::ifstream in(path, std::ios::binary);
  ORCHID_USER_CHECK(in) << path << ": cannot open (" << std::strerror(errno) << ")";
  std::stringstream text;
  text << in.rdbuf();
  return plan_from_json(text.str(), path);
}

}  // namespace orchid::runtime
