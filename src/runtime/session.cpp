#include "runtime/session.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "runtime/denormals.h"
#include "runtime/kernel_timing.h"
#include "support/error.h"

namespace orchid::runtime {

namespace {

bool misaligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % ORCHID_ALIGN != 0; }

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Sets the calling thread's OpenMP thread count (which oneDNN reads) for one library step.
class OmpThreads {
 public:
  explicit OmpThreads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~OmpThreads() { omp_set_num_threads(saved_); }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int saved_;
};

const PlanBuffer& buffer(const Plan& p, int32_t b) { return p.buffers[static_cast<size_t>(b)]; }

}  // namespace

Session::Session(std::shared_ptr<const Model> model, const SessionOptions& options)
    : model_(std::move(model)),
      threads_(options.threads > 0 ? options.threads : omp_get_max_threads()) {
  ORCHID_CHECK(model_ != nullptr) << "a session needs a model";
  const Plan& plan = model_->plan();
  memory_ = plan_memory(plan);
  arena_ = AlignedBuffer(memory_.arena_bytes);
  scratch_stride_ = round_up(model_->max_scratch_bytes(), ORCHID_ALIGN);
  scratch_ = AlignedBuffer(scratch_stride_ * threads_);
  ptrs_.resize(plan.buffers.size());
  for (const PlanStep& s : plan.steps) {
    args_begin_.push_back(args_.size());
    args_.resize(args_.size() + s.args.size());
  }
}

void* Session::scratch(int thread) { return scratch_.data() + scratch_stride_ * thread; }

void Session::check_pointers(std::span<const void* const> inputs,
                             std::span<void* const> outputs) const {
  const Plan& p = model_->plan();
  ORCHID_USER_CHECK(inputs.size() == p.inputs.size() && outputs.size() == p.outputs.size())
      << "model '" << p.graph_name << "' takes " << p.inputs.size() << " inputs and "
      << p.outputs.size() << " outputs, the run passes " << inputs.size() << " and "
      << outputs.size();
  for (size_t i = 0; i < inputs.size(); ++i)
    ORCHID_USER_CHECK(inputs[i] != nullptr || buffer(p, p.inputs[i]).type.bytes() == 0)
        << "input " << i << " ('" << buffer(p, p.inputs[i]).name << "') is a null pointer";
  for (size_t j = 0; j < outputs.size(); ++j)
    ORCHID_USER_CHECK(outputs[j] != nullptr || buffer(p, p.outputs[j]).type.bytes() == 0)
        << "output " << j << " ('" << buffer(p, p.outputs[j]).name << "') is a null pointer";
}

// Replans memory when the caller's pointers are aligned differently from the last run.
void Session::prepare_memory(std::span<const void* const> inputs, std::span<void* const> outputs) {
  CallerAlignment a;
  for (const void* p : inputs) a.misaligned_inputs.push_back(misaligned(p));
  for (void* p : outputs) a.misaligned_outputs.push_back(misaligned(p));
  bool all_aligned = std::none_of(a.misaligned_inputs.begin(), a.misaligned_inputs.end(),
                                  [](bool b) { return b; }) &&
                     std::none_of(a.misaligned_outputs.begin(), a.misaligned_outputs.end(),
                                  [](bool b) { return b; });
  if (all_aligned) a = CallerAlignment{};
  if (a.misaligned_inputs == alignment_.misaligned_inputs &&
      a.misaligned_outputs == alignment_.misaligned_outputs)
    return;
  memory_ = plan_memory(model_->plan(), a);
  alignment_ = std::move(a);
  if (memory_.arena_bytes > arena_.size()) arena_ = AlignedBuffer(memory_.arena_bytes);
}

// Pointers of every buffer and every step argument for this run.
void Session::bind(std::span<const void* const> inputs, std::span<void* const> outputs) {
  const Plan& plan = model_->plan();
  std::byte* weights = const_cast<std::byte*>(model_->weights());
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const BufferHome& h = memory_.home[b];
    switch (h.storage) {
      case Storage::Arena: ptrs_[b] = arena_.data() + h.offset; break;
      case Storage::Weights: ptrs_[b] = weights + h.offset; break;
      case Storage::CallerInput:
        ptrs_[b] = const_cast<void*>(inputs[static_cast<size_t>(h.slot)]);
        break;
      case Storage::CallerOutput: ptrs_[b] = outputs[static_cast<size_t>(h.slot)]; break;
    }
  }
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const std::vector<int32_t>& a = plan.steps[s].args;
    for (size_t k = 0; k < a.size(); ++k) args_[args_begin_[s] + k] = ptrs_[static_cast<size_t>(a[k])];
  }
  for (int32_t i : memory_.copy_in) {
    int32_t b = plan.inputs[static_cast<size_t>(i)];
    std::memcpy(ptrs_[static_cast<size_t>(b)], inputs[static_cast<size_t>(i)],
                static_cast<size_t>(buffer(plan, b).type.bytes()));
  }
}

void Session::evict_caches(int64_t bytes) {
  if (bytes <= 0) return;
  if (eviction_.size() < bytes * threads_) eviction_ = AlignedBuffer(bytes * threads_);
  std::byte* base = eviction_.data();
#pragma omp parallel num_threads(threads_)
  {
    std::byte* mine = base + bytes * omp_get_thread_num();
    for (int64_t i = 0; i < bytes; i += 64) mine[i] = static_cast<std::byte>(static_cast<unsigned>(mine[i]) + 1);
  }
}

void Session::run_generated(const orchid_kernel_desc& k, void* const* args, int64_t count) {
  kernel_error_[0] = kernel_error_[1] = 0;
  orchid_args a{args, count, kernel_error_};
  run_kernel_tasks(k, a, threads_, [this](int t) { return scratch(t); });
}

void Session::run_step(size_t step) {
  const PlanStep& s = model_->plan().steps[step];
  void* const* args = args_.data() + args_begin_[step];
  if (const orchid_kernel_desc* k = model_->kernel(step)) {
    run_generated(*k, args, static_cast<int64_t>(s.args.size()));
    ORCHID_USER_CHECK(kernel_error_[0] == 0)
        << index_check_failure(model_->plan(), step, kernel_error_[0], kernel_error_[1]);
    return;
  }
  OmpThreads pool(threads_);
  try {
    model_->library_step(step)->run(args);
  } catch (const UserError& e) {
    ORCHID_USER_ERROR() << "model '" << model_->plan().graph_name << "': step " << step << " ('"
                        << s.name << "', " << step_impl_name(s.impl) << "): " << e.what();
  }
}

void Session::copy_outputs(std::span<const void* const> inputs, std::span<void* const> outputs) {
  const Plan& plan = model_->plan();
  for (const OutputCopy& c : memory_.copy_out) {
    const void* from = nullptr;
    switch (c.from.storage) {
      case Storage::Arena: from = arena_.data() + c.from.offset; break;
      case Storage::Weights: from = model_->weights() + c.from.offset; break;
      case Storage::CallerInput: from = inputs[static_cast<size_t>(c.from.slot)]; break;
      case Storage::CallerOutput: from = outputs[static_cast<size_t>(c.from.slot)]; break;
    }
    void* to = outputs[static_cast<size_t>(c.output)];
    size_t n = static_cast<size_t>(buffer(plan, plan.outputs[static_cast<size_t>(c.output)]).type.bytes());
    if (to != from && n > 0) std::memmove(to, from, n);
  }
}

void Session::run(std::span<const void* const> inputs, std::span<void* const> outputs,
                  std::vector<StepSpan>* spans) {
  check_pointers(inputs, outputs);
  prepare_memory(inputs, outputs);
  bind(inputs, outputs);
  std::optional<FlushDenormals> flush;
  if (model_->plan().flush_denormals) flush.emplace(threads_);
  size_t steps = model_->plan().steps.size();
  if (spans) spans->assign(steps, StepSpan{});
  for (size_t s = 0; s < steps; ++s) {
    if (spans) (*spans)[s].begin_ns = now_ns();
    run_step(s);
    if (spans) (*spans)[s].end_ns = now_ns();
  }
  copy_outputs(inputs, outputs);
}

std::vector<ir::Tensor> Session::run(const std::map<std::string, ir::Tensor, std::less<>>& inputs) {
  const Plan& p = model_->plan();
  std::vector<const void*> in;
  for (int32_t b : p.inputs) {
    const PlanBuffer& pb = buffer(p, b);
    auto it = inputs.find(pb.name);
    ORCHID_USER_CHECK(it != inputs.end()) << "model '" << p.graph_name << "': missing input '"
                                          << pb.name << "' (" << ir::type_str(pb.type) << ")";
    ORCHID_USER_CHECK(it->second.type() == pb.type)
        << "model '" << p.graph_name << "': input '" << pb.name << "' is "
        << ir::type_str(it->second.type()) << ", expected " << ir::type_str(pb.type);
    in.push_back(it->second.data());
  }
  for (const auto& entry : inputs) {
    const std::string& name = entry.first;  // a plain name: clang 14 lambdas capture no bindings
    ORCHID_USER_CHECK(std::any_of(p.inputs.begin(), p.inputs.end(),
                                  [&](int32_t b) { return buffer(p, b).name == name; }))
        << "model '" << p.graph_name << "' has no input named '" << name << "'";
  }
  std::vector<ir::Tensor> results;
  std::vector<void*> out;
  for (int32_t b : p.outputs) results.emplace_back(buffer(p, b).type);
  for (ir::Tensor& t : results) out.push_back(t.data());
  run(in, out);
  return results;
}

}  // namespace orchid::runtime
