// Plan names and the plan's invariants (plan.h). Messages name the plan (`source`) and the
// field, and quote the buffer's model name where there is one.
#include "runtime/plan.h"

#include <limits>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <set>
#include <span>
#include <sstream>

#include "orchid/cuda_abi.h"
#include "support/error.h"

namespace orchid::runtime {

namespace {

// The enumerator among `all` that `name` calls `text`, if any.
template <class E, class Name>
std::optional<E> parse_named(std::string_view text, std::span<const E> all, Name name) {
  for (E e : all)
    if (name(e) == text) return e;
  return std::nullopt;
}

template <class E, class Name>
std::optional<E> parse_named(std::string_view text, std::initializer_list<E> all, Name name) {
  return parse_named(text, std::span<const E>(all.begin(), all.size()), name);
}

}  // namespace

std::string_view buffer_kind_name(BufferKind k) {
  switch (k) {
    case BufferKind::Input: return "input";
    case BufferKind::Output: return "output";
    case BufferKind::Constant: return "constant";
    case BufferKind::Intermediate: return "intermediate";
  }
  return "?";
}

std::optional<BufferKind> parse_buffer_kind(std::string_view text) {
  return parse_named(text, {BufferKind::Input, BufferKind::Output, BufferKind::Constant, BufferKind::Intermediate},
                     buffer_kind_name);
}

std::string_view buffer_layout_name(BufferLayout l) {
  switch (l) {
    case BufferLayout::Plain: return "plain";
    case BufferLayout::NChw8c: return "nChw8c";
    case BufferLayout::Panels16: return "panels16";
    case BufferLayout::Panels16T: return "panels16t";
    case BufferLayout::Nhwc: return "nhwc";
    case BufferLayout::NChw16c: return "nChw16c";
  }
  return "?";
}

bool is_activation_layout(BufferLayout l) {
  return l == BufferLayout::NChw8c || l == BufferLayout::NChw16c || l == BufferLayout::Nhwc;
}

namespace {

// Channels per block of a channel-blocked layout (nChw8c, nChw16c); 0 for the others.
int64_t channel_block(BufferLayout l) { return l == BufferLayout::NChw8c ? 8 : l == BufferLayout::NChw16c ? 16 : 0; }

}  // namespace

std::optional<BufferLayout> parse_buffer_layout(std::string_view text) {
  return parse_named(text,
                     {BufferLayout::Plain, BufferLayout::NChw8c, BufferLayout::NChw16c, BufferLayout::Nhwc,
                      BufferLayout::Panels16, BufferLayout::Panels16T},
                     buffer_layout_name);
}

bool layout_fits(BufferLayout l, const ir::TensorType& t) {
  switch (l) {
    case BufferLayout::Plain: return true;
    case BufferLayout::NChw8c:
    case BufferLayout::NChw16c:
      return t.dtype == ir::DType::F32 && t.shape.size() == 4 && t.shape[1] % channel_block(l) == 0;
    case BufferLayout::Nhwc: return t.dtype == ir::DType::F32 && t.shape.size() == 4;
    case BufferLayout::Panels16: return t.dtype == ir::DType::F32 && t.shape.size() == 2 && t.shape[1] % 16 == 0;
    case BufferLayout::Panels16T: return t.dtype == ir::DType::F32 && t.shape.size() == 2 && t.shape[0] % 16 == 0;
  }
  return false;
}

namespace {

// Where plain element i of a tensor of `shape` lies in layout l.
int64_t stored_index(BufferLayout l, const ir::Dims& shape, int64_t i) {
  switch (l) {
    case BufferLayout::Plain: return i;
    case BufferLayout::NChw8c:
    case BufferLayout::NChw16c:
    case BufferLayout::Nhwc: {
      int64_t c = shape[1], hw = shape[2] * shape[3];
      int64_t n = i / (c * hw), ch = i / hw % c, p = i % hw;
      if (l == BufferLayout::Nhwc) return (n * hw + p) * c + ch;
      int64_t block = channel_block(l);
      return ((n * (c / block) + ch / block) * hw + p) * block + ch % block;
    }
    case BufferLayout::Panels16:
    case BufferLayout::Panels16T: {  // element (n, k) of [N, K] is (k, n) of the transpose
      bool t = l == BufferLayout::Panels16T;
      int64_t k = shape[t ? 1 : 0], row = t ? i % shape[1] : i / shape[1], col = t ? i / shape[1] : i % shape[1];
      return (col / 16 * k + row) * 16 + col % 16;
    }
  }
  return i;
}

ir::Tensor permuted(const ir::Tensor& t, BufferLayout l, bool to_stored) {
  ORCHID_CHECK(layout_fits(l, t.type())) << buffer_layout_name(l) << " does not fit " << ir::type_str(t.type());
  ir::Tensor out(t.type());
  auto size = static_cast<size_t>(ir::dtype_bytes(t.dtype()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    auto s = static_cast<size_t>(stored_index(l, t.shape(), i)), p = static_cast<size_t>(i);
    std::memcpy(out.data() + (to_stored ? s : p) * size, t.data() + (to_stored ? p : s) * size, size);
  }
  return out;
}

}  // namespace

ir::Tensor to_layout(const ir::Tensor& plain, BufferLayout l) { return permuted(plain, l, true); }
ir::Tensor from_layout(const ir::Tensor& stored, BufferLayout l) { return permuted(stored, l, false); }

std::string_view step_impl_name(StepImpl i) {
  switch (i) {
    case StepImpl::Generated: return "generated";
    case StepImpl::OneDnn: return "onednn";
    case StepImpl::Reference: return "reference";
    case StepImpl::Cuda: return "cuda";
    case StepImpl::CublasLt: return "cublaslt";
    case StepImpl::Cudnn: return "cudnn";
    case StepImpl::OneDnnWinograd: return "onednn_winograd";
  }
  return "?";
}

bool is_onednn_step(StepImpl i) { return i == StepImpl::OneDnn || i == StepImpl::OneDnnWinograd; }

bool is_gpu_step(StepImpl i) { return i == StepImpl::Cuda || i == StepImpl::CublasLt || i == StepImpl::Cudnn; }

std::optional<StepImpl> parse_step_impl(std::string_view text) {
  return parse_named(text, {StepImpl::Generated, StepImpl::OneDnn, StepImpl::OneDnnWinograd, StepImpl::Reference,
                                 StepImpl::Cuda, StepImpl::CublasLt, StepImpl::Cudnn},
                     step_impl_name);
}

std::string_view plan_device_name(PlanDevice d) { return d == PlanDevice::Cuda ? "cuda" : "cpu"; }

std::string_view plan_precision_name(PlanPrecision p) {
  switch (p) {
    case PlanPrecision::Fp32: return "fp32";
    case PlanPrecision::Tf32: return "tf32";
    case PlanPrecision::Fp16: return "fp16";
    case PlanPrecision::Bf16: return "bf16";
  }
  return "?";
}

std::optional<PlanPrecision> parse_plan_precision(std::string_view text) {
  return parse_named(text, std::span<const PlanPrecision>(kPlanPrecisions), plan_precision_name);
}

std::string plan_precision_names() {
  std::string out;
  const size_t n = std::size(kPlanPrecisions);
  for (size_t i = 0; i < n; ++i)
    out += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(plan_precision_name(kPlanPrecisions[i]));
  return out;
}

std::optional<ir::DType> storage_dtype(PlanPrecision p) {
  switch (p) {
    case PlanPrecision::Fp32:
    case PlanPrecision::Tf32: return std::nullopt;
    case PlanPrecision::Fp16: return ir::DType::F16;
    case PlanPrecision::Bf16: return ir::DType::BF16;
  }
  return std::nullopt;
}

std::optional<PlanDevice> parse_plan_device(std::string_view text) {
  return parse_named(text, {PlanDevice::Cpu, PlanDevice::Cuda}, plan_device_name);
}

std::string cuda_function_name(int32_t kernel) { return ORCHID_CUDA_FUNCTION_PREFIX + std::to_string(kernel); }

std::string index_check_failure(const Plan& plan, size_t step, int64_t code, std::optional<int64_t> index) {
  const PlanStep& s = plan.steps.at(step);
  std::string out = "model '" + plan.graph_name + "': step " + std::to_string(step) + " ('" + s.name + "'): ";
  out += index ? "index " + std::to_string(*index) + " is out of range" : std::string("an index is out of range");
  if (code >= 1 && static_cast<uint64_t>(code) <= s.checks.size())
    return out + ": " + s.checks[static_cast<size_t>(code - 1)];
  return out + " (run-time check " + std::to_string(code - 1) + " of the kernel: an index read from a tensor)";
}

bool is_safe_file_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

int32_t alias_root(const Plan& plan, int32_t b) {
  for (size_t hops = 0; hops <= plan.buffers.size(); ++hops) {
    ORCHID_CHECK(b >= 0 && static_cast<size_t>(b) < plan.buffers.size()) << "buffer " << b;
    if (plan.buffers[static_cast<size_t>(b)].alias < 0) return b;
    b = plan.buffers[static_cast<size_t>(b)].alias;
  }
  ORCHID_CHECK(false) << "alias cycle through buffer " << b;
  return b;
}

namespace {

// Checks of one plan, with the plan's name for messages.
class Validator {
 public:
  Validator(const Plan& p, const std::string& source) : p_(p), src_(source) {}

  void run() {
    for (size_t b = 0; b < p_.buffers.size(); ++b) check_buffer(static_cast<int32_t>(b));
    for (size_t b = 0; b < p_.buffers.size(); ++b) check_alias_chain(static_cast<int32_t>(b));
    check_inputs();
    check_outputs();
    for (size_t i = 0; i < p_.libraries.size(); ++i)
      check_file_name(p_.libraries[i].file, "libraries[" + std::to_string(i) + "].file");
    check_device();
    check_file_name(p_.weights.file, "weights.file");
    ORCHID_USER_CHECK(p_.weights.bytes >= 0) << src_ << ": weights.bytes: negative";
    for (const std::string& f : p_.isa)
      ORCHID_USER_CHECK(!f.empty()) << src_ << ": isa: an empty flag";
    check_dataflow();
  }

 private:
  std::string buf(int32_t b) const {
    std::ostringstream os;
    os << "buffer " << b;
    if (b >= 0 && static_cast<size_t>(b) < p_.buffers.size())
      os << " ('" << p_.buffers[static_cast<size_t>(b)].name << "')";
    return os.str();
  }
  bool in_range(int32_t b) const { return b >= 0 && static_cast<size_t>(b) < p_.buffers.size(); }
  const PlanBuffer& at(int32_t b) const { return p_.buffers[static_cast<size_t>(b)]; }
  int64_t byte_size(const PlanBuffer& b, const std::string& where) const {
    auto n = ir::checked_numel(b.type.shape, b.type.dtype);
    ORCHID_USER_CHECK(n) << src_ << ": " << where << ": shape " << ir::dims_str(b.type.shape)
                         << " is too large or negative";
    return *n * ir::dtype_bytes(b.type.dtype);
  }

  void check_buffer(int32_t id) {
    const PlanBuffer& b = at(id);
    std::string where = "buffers[" + std::to_string(id) + "] ('" + b.name + "')";
    int64_t size = byte_size(b, where);
    if (b.kind == BufferKind::Constant) {
      ORCHID_USER_CHECK(b.weights_offset >= 0 && b.weights_offset % kBufferAlign == 0)
          << src_ << ": " << where << ".weights_offset: " << b.weights_offset
          << " is not a multiple of " << kBufferAlign;
      ORCHID_USER_CHECK(b.weights_offset <= p_.weights.bytes - size)
          << src_ << ": " << where << ".weights_offset: " << b.weights_offset << " + " << size
          << " bytes lies outside the weights (" << p_.weights.bytes << " bytes)";
    } else {
      ORCHID_USER_CHECK(b.weights_offset == -1)
          << src_ << ": " << where << ".weights_offset: only constants have one";
    }
    check_layout(id, where);
    if (b.alias < 0) return;
    ORCHID_USER_CHECK(in_range(b.alias) && b.alias != id)
        << src_ << ": " << where << ".alias: " << b.alias << " is not another buffer's id";
    ORCHID_USER_CHECK(b.kind == BufferKind::Intermediate || b.kind == BufferKind::Output)
        << src_ << ": " << where << ".alias: a view must be of kind intermediate or output, not "
        << buffer_kind_name(b.kind);
    int64_t target = byte_size(at(b.alias), "buffers[" + std::to_string(b.alias) + "]");
    ORCHID_USER_CHECK(size == target)
        << src_ << ": " << where << ".alias: " << ir::type_str(b.type) << " (" << size
        << " bytes) cannot view " << buf(b.alias) << " of " << ir::type_str(at(b.alias).type)
        << " (" << target << " bytes)";
  }

  // A buffer in another layout than plain owns its bytes (no view of it, not a view itself),
  // has a type that layout fits, and is of the one kind and read or written by the one kind
  // of step the layout is for: nChw8c, nChw16c and nhwc intermediates by onednn steps, panels16
  // and panels16t constants by generated ones.
  void check_layout(int32_t id, const std::string& where) {
    const PlanBuffer& b = at(id);
    if (b.layout == BufferLayout::Plain) return;
    std::string name(buffer_layout_name(b.layout));
    ORCHID_USER_CHECK(layout_fits(b.layout, b.type))
        << src_ << ": " << where << ".layout: " << name << " does not fit " << ir::type_str(b.type);
    bool blocked = is_activation_layout(b.layout);
    BufferKind kind = blocked ? BufferKind::Intermediate : BufferKind::Constant;
    auto allowed = [&](StepImpl i) { return blocked ? is_onednn_step(i) : i == StepImpl::Generated; };
    const char* steps_for = blocked ? "onednn and onednn_winograd" : "generated";
    ORCHID_USER_CHECK(b.kind == kind && b.alias < 0)
        << src_ << ": " << where << ".layout: " << name << " is only for " << buffer_kind_name(kind)
        << "s that are not views";
    ORCHID_USER_CHECK(std::find(p_.outputs.begin(), p_.outputs.end(), id) == p_.outputs.end())
        << src_ << ": " << where << ".layout: " << name << ", yet it is listed in outputs (callers get plain bytes)";
    for (size_t v = 0; v < p_.buffers.size(); ++v)
      ORCHID_USER_CHECK(p_.buffers[v].alias != id)
          << src_ << ": " << where << ".layout: " << name << ", yet " << buf(static_cast<int32_t>(v))
          << " is a view of it";
    for (size_t i = 0; i < p_.steps.size(); ++i) {
      const PlanStep& s = p_.steps[i];
      bool touches = std::find(s.args.begin(), s.args.end(), id) != s.args.end();
      ORCHID_USER_CHECK(!touches || allowed(s.impl))
          << src_ << ": " << where << ".layout: " << name << ", yet steps[" << i << "] ('" << s.name
          << "'), a " << step_impl_name(s.impl) << " step, uses it (only " << steps_for << " steps may)";
    }
  }

  void check_alias_chain(int32_t id) {
    int32_t b = id;
    for (size_t hops = 0; at(b).alias >= 0; ++hops) {
      ORCHID_USER_CHECK(hops < p_.buffers.size())
          << src_ << ": buffers[" << id << "].alias: the aliases form a cycle";
      b = at(b).alias;
    }
  }

  void check_inputs() {
    std::set<int32_t> seen;
    std::set<std::string> names;
    for (size_t i = 0; i < p_.inputs.size(); ++i) {
      int32_t b = p_.inputs[i];
      std::string where = src_ + ": inputs[" + std::to_string(i) + "]: ";
      ORCHID_USER_CHECK(in_range(b)) << where << b << " is not a buffer id";
      ORCHID_USER_CHECK(at(b).kind == BufferKind::Input)
          << where << buf(b) << " has kind " << buffer_kind_name(at(b).kind) << ", not input";
      ORCHID_USER_CHECK(seen.insert(b).second) << where << buf(b) << " is listed twice";
      ORCHID_USER_CHECK(names.insert(at(b).name).second)
          << where << "two inputs are named '" << at(b).name << "'";
    }
    for (size_t b = 0; b < p_.buffers.size(); ++b)
      ORCHID_USER_CHECK(p_.buffers[b].kind != BufferKind::Input ||
                        seen.count(static_cast<int32_t>(b)))
          << src_ << ": inputs: " << buf(static_cast<int32_t>(b))
          << " has kind input but is not listed";
  }

  void check_outputs() {
    std::set<int32_t> seen;
    for (size_t i = 0; i < p_.outputs.size(); ++i) {
      int32_t b = p_.outputs[i];
      std::string where = src_ + ": outputs[" + std::to_string(i) + "]: ";
      ORCHID_USER_CHECK(in_range(b)) << where << b << " is not a buffer id";
      ORCHID_USER_CHECK(at(b).kind != BufferKind::Intermediate)
          << where << buf(b) << " has kind intermediate (expected output, input or constant)";
      seen.insert(b);
    }
    for (size_t b = 0; b < p_.buffers.size(); ++b)
      ORCHID_USER_CHECK(p_.buffers[b].kind != BufferKind::Output ||
                        seen.count(static_cast<int32_t>(b)))
          << src_ << ": outputs: " << buf(static_cast<int32_t>(b))
          << " has kind output but is not listed";
  }

  void check_file_name(const std::string& name, const std::string& where) {
    ORCHID_USER_CHECK(is_safe_file_name(name))
        << src_ << ": " << where << ": '" << name
        << "' is not a plain file name (only letters, digits, '_', '.', '-')";
  }

  // A cuda plan: CUBINs of distinct architectures, cuda, cublaslt and cudnn steps only, plain
  // buffers; a cpu plan: no architectures, none of those steps.
  void check_device() {
    bool cuda = p_.device == PlanDevice::Cuda;
    std::set<std::string> archs;
    for (size_t i = 0; i < p_.libraries.size(); ++i) {
      const std::string& a = p_.libraries[i].arch;
      std::string where = src_ + ": libraries[" + std::to_string(i) + "].arch: ";
      ORCHID_USER_CHECK(cuda != a.empty()) << where << (cuda ? "missing (a cuda plan's libraries are CUBINs)"
                                                               : "only cuda plans' libraries have one");
      ORCHID_USER_CHECK(!cuda || archs.insert(a).second) << where << a << " is listed twice";
    }
    for (size_t i = 0; i < p_.steps.size(); ++i)
      ORCHID_USER_CHECK(is_gpu_step(p_.steps[i].impl) == cuda)
          << src_ << ": steps[" << i << "] ('" << p_.steps[i].name << "'): a " << step_impl_name(p_.steps[i].impl)
          << " step in a " << plan_device_name(p_.device) << " plan";
    ORCHID_USER_CHECK(cuda || p_.precision == PlanPrecision::Fp32)
        << src_ << ": precision: " << plan_precision_name(p_.precision) << " is for cuda plans only";
    for (size_t b = 0; cuda && b < p_.buffers.size(); ++b)
      ORCHID_USER_CHECK(p_.buffers[b].layout == BufferLayout::Plain)
          << src_ << ": " << buf(static_cast<int32_t>(b)) << ": a cuda plan's buffers are plain";
  }

  void check_step_fields(const PlanStep& s, const std::string& where) {
    ORCHID_USER_CHECK(s.num_inputs >= 0 && s.num_outputs() >= 1)
        << where << "num_inputs: " << s.num_inputs << " leaves no output among " << s.args.size()
        << " args";
    for (size_t a = 0; a < s.args.size(); ++a)
      ORCHID_USER_CHECK(in_range(s.args[a]))
          << where << "args[" << a << "]: " << s.args[a] << " is not a buffer id";
    ORCHID_USER_CHECK(s.flops >= 0 && s.bytes >= 0) << where << "flops, bytes: negative";
    if (s.impl == StepImpl::Cuda) {
      ORCHID_USER_CHECK(s.library == -1 && s.ir.empty()) << where << "library, ir: not allowed for a cuda step";
      ORCHID_USER_CHECK(s.kernel >= 0) << where << "kernel: negative";
      ORCHID_USER_CHECK(s.tasks >= 0 && s.tasks <= std::numeric_limits<int32_t>::max())
          << where << "tasks: " << s.tasks << " is not a number of thread blocks";
      ORCHID_USER_CHECK(s.threads >= 32 && s.threads <= 1024 && s.threads % 32 == 0)
          << where << "threads: " << s.threads << " is not a multiple of 32 from 32 to 1024";
      ORCHID_USER_CHECK(s.shared_bytes >= 0 && s.shared_bytes <= 227 * 1024)
          << where << "shared_bytes: " << s.shared_bytes << " is out of range [0, 232448]";
      ORCHID_USER_CHECK(s.scratch_bytes >= 0) << where << "scratch_bytes: negative";
      return;
    }
    ORCHID_USER_CHECK(s.threads == 0 && s.shared_bytes == 0) << where << "threads, shared_bytes: only for cuda steps";
    if (s.impl == StepImpl::Generated) {
      ORCHID_USER_CHECK(s.library >= 0 && static_cast<size_t>(s.library) < p_.libraries.size())
          << where << "library: " << s.library << " is not a library index (the plan has "
          << p_.libraries.size() << ")";
      ORCHID_USER_CHECK(s.kernel >= 0) << where << "kernel: negative";
      ORCHID_USER_CHECK(s.tasks >= 0) << where << "tasks: negative";
      ORCHID_USER_CHECK(s.scratch_bytes >= 0) << where << "scratch_bytes: negative";
      ORCHID_USER_CHECK(s.ir.empty()) << where << "ir: not allowed for a generated step";
    } else {
      ORCHID_USER_CHECK(!s.ir.empty()) << where << "ir: missing";
      ORCHID_USER_CHECK(s.library == -1 && s.kernel == -1 && s.tasks == 0 && s.scratch_bytes == 0)
          << where << "library, kernel, tasks, scratch_bytes: only for generated steps";
    }
  }

  // Every buffer is written before it is read, by steps that write neither inputs nor
  // constants (shared memory) nor one buffer twice nor a buffer they read.
  void check_dataflow() {
    std::vector<bool> defined(p_.buffers.size());
    for (size_t b = 0; b < p_.buffers.size(); ++b)
      defined[b] = p_.buffers[b].kind == BufferKind::Input ||
                   p_.buffers[b].kind == BufferKind::Constant;
    for (size_t i = 0; i < p_.steps.size(); ++i) {
      const PlanStep& s = p_.steps[i];
      std::string where = src_ + ": steps[" + std::to_string(i) + "] ('" + s.name + "'): ";
      check_step_fields(s, where);
      std::set<int32_t> read, written;
      for (int32_t a = 0; a < s.num_inputs; ++a) {
        int32_t r = alias_root(p_, s.args[static_cast<size_t>(a)]);
        ORCHID_USER_CHECK(defined[static_cast<size_t>(r)])
            << where << "reads " << buf(s.args[static_cast<size_t>(a)])
            << " before any step writes it";
        read.insert(r);
      }
      for (size_t a = static_cast<size_t>(s.num_inputs); a < s.args.size(); ++a) {
        int32_t r = alias_root(p_, s.args[a]);
        BufferKind k = at(r).kind;
        ORCHID_USER_CHECK(k != BufferKind::Input && k != BufferKind::Constant)
            << where << "writes " << buf(s.args[a]) << ", whose memory is "
            << (k == BufferKind::Input ? "the caller's input" : "a constant's");
        ORCHID_USER_CHECK(!read.count(r)) << where << "writes " << buf(s.args[a])
                                          << ", whose memory it also reads";
        ORCHID_USER_CHECK(written.insert(r).second)
            << where << "writes the memory of " << buf(s.args[a]) << " twice";
        defined[static_cast<size_t>(r)] = true;
      }
    }
    for (size_t b = 0; b < p_.buffers.size(); ++b)
      ORCHID_USER_CHECK(defined[static_cast<size_t>(alias_root(p_, static_cast<int32_t>(b)))])
          << src_ << ": " << buf(static_cast<int32_t>(b)) << " is never written by any step";
  }

  const Plan& p_;
  const std::string& src_;
};

}  // namespace

void validate_plan(const Plan& plan, const std::string& source) { Validator(plan, source).run(); }

void check_arg_bytes(const Plan& plan, const PlanStep& s, const int64_t* want, const std::string& where) {
  for (size_t a = 0; a < s.args.size(); ++a) {
    const PlanBuffer& b = plan.buffers[static_cast<size_t>(s.args[a])];
    ORCHID_USER_CHECK(b.type.bytes() == want[a])
        << where << " takes " << want[a] << " bytes as argument " << a << ", buffer " << s.args[a] << " ('" << b.name
        << "', " << ir::type_str(b.type) << ") has " << b.type.bytes();
  }
}

void check_step_graph(const Plan& plan, const PlanStep& s, const ir::Graph& g,
                      const std::string& where) {
  auto check = [&](const std::vector<ir::ValueId>& values, size_t first, size_t count,
                   const char* what) {
    ORCHID_USER_CHECK(values.size() == count)
        << where << ": its ir has " << values.size() << " " << what << "s, the step has " << count;
    for (size_t k = 0; k < count; ++k) {
      int32_t b = s.args[first + k];
      const ir::TensorType& want = plan.buffers[static_cast<size_t>(b)].type;
      ORCHID_USER_CHECK(g.type(values[k]) == want)
          << where << ": ir " << what << " " << k << " is " << ir::type_str(g.type(values[k]))
          << ", buffer " << b << " ('" << plan.buffers[static_cast<size_t>(b)].name << "') is "
          << ir::type_str(want);
    }
  };
  check(g.inputs(), 0, static_cast<size_t>(s.num_inputs), "input");
  check(g.outputs(), static_cast<size_t>(s.num_inputs), static_cast<size_t>(s.num_outputs()),
        "output");
}

}  // namespace orchid::runtime
