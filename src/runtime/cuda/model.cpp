#include "runtime/cuda/model.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "ir/parser.h"
#include "orchid/cuda_abi.h"
#include "runtime/checksum.h"
#include "runtime/cuda/descriptor.h"
#include "runtime/cuda/dnn_step.h"
#include "runtime/cuda/lt_step.h"
#include "runtime/weights.h"
#include "support/error.h"

namespace orchid::runtime::cuda {

namespace {

std::string join(const std::string& dir, const std::string& file) {
  return (std::filesystem::path(dir) / file).string();
}


}  // namespace

std::unique_ptr<CudaModel> CudaModel::load(const std::string& dir, const CudaLoadOptions& options) {
  std::unique_ptr<CudaModel> m(new CudaModel());
  m->dir_ = std::filesystem::absolute(dir).lexically_normal().string();
  std::string source = join(m->dir_, kPlanFileName);
  m->plan_ = read_plan(m->dir_);
  ORCHID_USER_CHECK(m->plan_.device == PlanDevice::Cuda)
      << source << ": the artifact is built for the CPU (device cpu), not for a GPU";
  // Every file is checked before a GPU is asked for: a damaged artifact says so anywhere.
  std::vector<std::vector<char>> cubins;
  for (const PlanLibrary& l : m->plan_.libraries) cubins.push_back(read_checked_file(join(m->dir_, l.file), l.checksum));
  const PlanWeights& w = m->plan_.weights;
  AlignedBuffer host = read_weights(join(m->dir_, w.file), w.bytes, w.checksum);
  const Device& dev = Device::get();
  bool kernels = std::any_of(m->plan_.steps.begin(), m->plan_.steps.end(),
                             [](const PlanStep& s) { return s.impl == StepImpl::Cuda; });
  if (kernels) m->load_module(cubins, source);
  for (const PlanStep& s : m->plan_.steps)
    m->functions_.push_back(s.impl == StepImpl::Cuda ? m->module_.function(cuda_function_name(s.kernel)) : nullptr);
  m->weights_ = dev.alloc(static_cast<size_t>(w.bytes));
  dev.upload(m->weights_, host.data(), static_cast<size_t>(w.bytes));
  m->allocate();
  m->make_library_calls(source, options.time_library_algorithms);
  m->stream_ = dev.stream();
  m->capture();
  if (options.time_library_algorithms)
    m->keep_faster_algorithms();
  else
    m->algorithms_ = AlgorithmChoice::Heuristic;
  return m;
}

// The CUBIN for this GPU's architecture, its kernels checked against the steps.
void CudaModel::load_module(const std::vector<std::vector<char>>& cubins, const std::string& source) {
  const Device& dev = Device::get();
  size_t cubin = cubins.size();
  std::string archs;
  for (size_t i = 0; i < plan_.libraries.size(); ++i) {
    if (plan_.libraries[i].arch == dev.arch()) cubin = i;
    archs += (archs.empty() ? "" : ", ") + plan_.libraries[i].arch;
  }
  ORCHID_USER_CHECK(cubin < cubins.size()) << source << ": no code for this GPU (" << dev.name()
                                           << ", compute capability " << dev.major() << "." << dev.minor()
                                           << "); the artifact has " << (archs.empty() ? "none" : archs);
  module_ = dev.load(cubins[cubin]);
  check_steps(source);
}

// Every step launches its kernel as the kernel was generated for (descriptor.h).
void CudaModel::check_steps(const std::string& source) const {
  std::vector<char> bytes = module_.global(ORCHID_CUDA_MODULE_DESCRIPTOR);
  std::vector<int64_t> d(bytes.size() / sizeof(int64_t));
  std::memcpy(d.data(), bytes.data(), d.size() * sizeof(int64_t));
  check_cuda_steps(d, plan_, source);
}

// The arena, the caller's inputs and outputs on the device, an error word and global scratch
// per step, and every step's parameters (their addresses fixed for the model's life).
void CudaModel::allocate() {
  const Device& dev = Device::get();
  memory_ = plan_memory(plan_);
  arena_ = dev.alloc(static_cast<size_t>(memory_.arena_bytes));
  for (int32_t b : plan_.inputs) inputs_.push_back(dev.alloc(static_cast<size_t>(plan_.buffers[b].type.bytes())));
  for (int32_t b : plan_.outputs) outputs_.push_back(dev.alloc(static_cast<size_t>(plan_.buffers[b].type.bytes())));
  errors_ = dev.alloc(plan_.steps.size() * sizeof(int64_t));
  int64_t scratch = 0;
  std::vector<int64_t> scratch_offset;  // per step, into scratch_
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const PlanStep& s = plan_.steps[i];
    scratch_offset.push_back(scratch);
    int64_t bytes = 0;
    ORCHID_USER_CHECK(!__builtin_mul_overflow(s.scratch_bytes, s.tasks, &bytes) && bytes <= (int64_t{1} << 40) &&
                      !__builtin_add_overflow(scratch, (bytes + 255) / 256 * 256, &scratch))
        << dir_ << ": steps[" << i << "] ('" << s.name << "'): " << s.scratch_bytes << " bytes of scratch for each of "
        << s.tasks << " blocks is more than a GPU has";
  }
  scratch_ = dev.alloc(static_cast<size_t>(scratch));
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const PlanStep& s = plan_.steps[i];
    std::vector<uint64_t> p;
    for (int32_t a : s.args) p.push_back(address(memory_.home[static_cast<size_t>(a)]));
    p.push_back(errors_.ptr() + i * sizeof(int64_t));
    p.push_back(s.scratch_bytes > 0 ? scratch_.ptr() + static_cast<uint64_t>(scratch_offset[i]) : 0);
    params_.push_back(std::move(p));
  }
  for (std::vector<uint64_t>& p : params_) {
    std::vector<void*> ptrs;
    for (uint64_t& v : p) ptrs.push_back(&v);
    param_ptrs_.push_back(std::move(ptrs));
  }
}

uint64_t CudaModel::address(const BufferHome& h) const {
  switch (h.storage) {
    case Storage::Arena: return arena_.ptr() + static_cast<uint64_t>(h.offset);
    case Storage::Weights: return weights_.ptr() + static_cast<uint64_t>(h.offset);
    case Storage::CallerInput: return inputs_[static_cast<size_t>(h.slot)].ptr();
    case Storage::CallerOutput: return outputs_[static_cast<size_t>(h.slot)].ptr();
  }
  return 0;
}

namespace {

// The library call of a cublaslt or cudnn step, from its graph (lt_matmul.h, dnn_conv.h).
std::unique_ptr<LibraryCall> library_call(const PlanStep& s, const ir::Graph& g, const std::vector<uint64_t>& args,
                                          uint64_t workspace, const LibraryOptions& o, const std::string& where) {
  LibrarySpec spec = library_spec(s.impl, g, where);
  if (const auto* mm = std::get_if<LtMatmul>(&spec)) return std::make_unique<LtStep>(*mm, args, workspace, o, where);
  return std::make_unique<DnnStep>(std::get<DnnConv>(spec), args, workspace, o, where);
}

}  // namespace

// Each library step's call at its arguments' addresses; the calls share one workspace.
void CudaModel::make_library_calls(const std::string& source, bool time_algorithms) {
  const Device& dev = Device::get();
  LibraryOptions options;
  options.tf32 = plan_.precision == PlanPrecision::Tf32;
  options.time_algorithms = time_algorithms;
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const PlanStep& s = plan_.steps[i];
    if (s.impl != StepImpl::CublasLt && s.impl != StepImpl::Cudnn) {
      calls_.emplace_back();
      continue;
    }
    std::string where = source + ": steps[" + std::to_string(i) + "] ('" + s.name + "')";
    ir::Graph g = ir::parse_graph(s.ir, where + ".ir");
    check_step_graph(plan_, s, g, where);
    if (workspace_.bytes() == 0) workspace_ = dev.alloc(kLibraryWorkspaceBytes);
    std::vector<uint64_t> args(params_[i].begin(), params_[i].begin() + static_cast<std::ptrdiff_t>(s.args.size()));
    calls_.push_back(library_call(s, g, args, workspace_.ptr(), options, where));
  }
}

void CudaModel::launch_step(size_t i) const {
  const PlanStep& s = plan_.steps[i];
  if (calls_[i]) {
    calls_[i]->enqueue(stream_.handle());
    return;
  }
  Device::get().launch(functions_[i], s.tasks, s.threads, s.shared_bytes,
                       const_cast<void**>(param_ptrs_[i].data()), stream_.handle());
}

void CudaModel::capture() {
  graph_ = Device::get().capture(stream_, [&] {
    for (size_t i = 0; i < plan_.steps.size(); ++i) launch_step(i);
  });
}

void CudaModel::choose_algorithms(AlgorithmChoice c) {
  for (const std::unique_ptr<LibraryCall>& call : calls_)
    if (call) call->choose(c);
  algorithms_ = c;
}

// The library calls' timed algorithms against their heuristics' over the whole model: the
// model's graph captured with each, timed alternately (kChoiceRounds rounds, the least median
// counts); the heuristic's stay unless the timed ones take less than kFasterBy of their time
// (fastest_of). A call timed alone at load can run slower among the model's other steps.
void CudaModel::keep_faster_algorithms() {
  if (std::none_of(calls_.begin(), calls_.end(), [](const auto& c) { return c && c->algorithms_differ(); })) return;
  Graph timed = std::move(graph_);
  choose_algorithms(AlgorithmChoice::Heuristic);
  capture();
  Graph heuristic = std::move(graph_);
  double timed_ms = std::numeric_limits<double>::infinity(), heuristic_ms = timed_ms;
  for (int round = 0; round < kChoiceRounds; ++round) {
    timed_ms = std::min(timed_ms, graph_ms(timed, 3, 10));
    heuristic_ms = std::min(heuristic_ms, graph_ms(heuristic, 3, 10));
  }
  bool keep_timed = fastest_of({heuristic_ms, timed_ms}) == 1;
  choose_algorithms(keep_timed ? AlgorithmChoice::Timed : AlgorithmChoice::Heuristic);
  graph_ = std::move(keep_timed ? timed : heuristic);
}

std::vector<ir::Tensor> CudaModel::run(const std::vector<ir::Tensor>& inputs) {
  const Device& dev = Device::get();
  ORCHID_USER_CHECK(inputs.size() == plan_.inputs.size())
      << plan_.graph_name << ": expected " << plan_.inputs.size() << " inputs, got " << inputs.size();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const PlanBuffer& b = plan_.buffers[static_cast<size_t>(plan_.inputs[i])];
    ORCHID_USER_CHECK(inputs[i].type() == b.type) << plan_.graph_name << ": input '" << b.name << "' must be "
                                                  << ir::type_str(b.type) << ", got " << ir::type_str(inputs[i].type());
    dev.upload(inputs_[i], inputs[i].data(), inputs[i].bytes().size());
  }
  std::vector<int64_t> zero(plan_.steps.size(), 0);
  dev.upload(errors_, zero.data(), zero.size() * sizeof(int64_t));
  dev.synchronize();  // the copies are done before the graph's stream reads them
  dev.launch(graph_, stream_);
  dev.synchronize();
  std::vector<int64_t> errors(plan_.steps.size());
  dev.download(errors.data(), errors_, errors.size() * sizeof(int64_t));
  for (size_t i = 0; i < errors.size(); ++i)
    ORCHID_USER_CHECK(errors[i] == 0) << index_check_failure(plan_, i, errors[i], std::nullopt);
  // Outputs computed in place are read from the caller's output buffers; the others from
  // where they live (an input, a constant, the arena).
  std::vector<ir::Tensor> out;
  for (int32_t b : plan_.outputs) out.emplace_back(plan_.buffers[static_cast<size_t>(b)].type);
  std::vector<bool> copied(out.size(), false);
  for (const OutputCopy& c : memory_.copy_out) {
    ir::Tensor& t = out[static_cast<size_t>(c.output)];
    dev.download_from(t.data(), address(c.from), t.bytes().size());
    copied[static_cast<size_t>(c.output)] = true;
  }
  for (size_t o = 0; o < out.size(); ++o)
    if (!copied[o]) dev.download(out[o].data(), outputs_[o], out[o].bytes().size());
  return out;
}

double CudaModel::median_ms(int repeats, const std::function<void()>& launches) const {
  const Device& dev = Device::get();
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) t.push_back(dev.time_ms(launches, stream_.handle()));
  std::sort(t.begin(), t.end());
  return t.empty() ? 0 : t[t.size() / 2];
}

double CudaModel::graph_ms(const Graph& graph, int warmup, int repeats) const {
  const Device& dev = Device::get();
  for (int i = 0; i < warmup; ++i) dev.launch(graph, stream_);
  dev.synchronize();
  return median_ms(repeats, [&] { dev.launch(graph, stream_); });
}

double CudaModel::time_ms(int warmup, int repeats) { return graph_ms(graph_, warmup, repeats); }

std::vector<double> CudaModel::step_times_ms(int repeats) {
  const Device& dev = Device::get();
  std::vector<double> out;
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    auto launch = [&] { launch_step(i); };
    launch();
    dev.synchronize();
    out.push_back(median_ms(repeats, launch));
  }
  return out;
}

}  // namespace orchid::runtime::cuda
