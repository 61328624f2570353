// Runs lane programs: constants, broadcasts and bounds-checked gathers; operators are in
// lane_ops.cpp.
#include <sstream>

#include "interp/machine.h"
#include "support/error.h"

namespace orchid::interp::detail {

Machine::Machine(const Program& prog, std::vector<LoadSource> sources, int64_t lanes, Precision p,
                 std::string label)
    : prog_(prog), sources_(std::move(sources)), precision_(p), label_(std::move(label)) {
  size_t nregs = prog.regs.size();
  regs_.f.resize(nregs);
  regs_.i.resize(nregs);
  for (size_t r = 0; r < nregs; ++r) {
    size_t size = prog.regs[r].uniform ? 1 : static_cast<size_t>(lanes);
    if (prog.regs[r].is_float) {
      regs_.f[r].assign(size, 0.0);
    } else {
      regs_.i[r].assign(size, 0);
    }
  }
  offset_.assign(static_cast<size_t>(lanes), 0);
  for (const Instr& in : prog.init) exec_const(in);
}

void Machine::run(int64_t start, int64_t n) {
  for (const Instr& in : prog_.code) {
    int64_t m = uniform(in.dst) ? 1 : n;
    switch (in.kind) {
      case InstrKind::Const: exec_const(in); break;
      case InstrKind::Op: exec_op(in, regs_, m, precision_); break;
      case InstrKind::Load:
        if (in.contiguous) {
          exec_contiguous_load(in, start, m);
        } else {
          exec_load(in, m);
        }
        break;
      case InstrKind::Broadcast: exec_broadcast(in, m); break;
    }
  }
}

void Machine::exec_const(const Instr& in) {
  if (ir::is_float(in.dtype)) {
    double v = in.value.f;
    if (precision_ == Precision::Own) v = ir::round_to_dtype(v, in.dtype);
    regs_.fp(in.dst)[0] = v;
  } else {
    regs_.ip(in.dst)[0] = in.value.i;
  }
}

void Machine::exec_broadcast(const Instr& in, int64_t n) {
  if (prog_.regs[static_cast<size_t>(in.dst)].is_float) {
    double v = regs_.fp(in.args[0])[0];
    double* d = regs_.fp(in.dst);
    for (int64_t j = 0; j < n; ++j) d[j] = v;
  } else {
    int64_t v = regs_.ip(in.args[0])[0];
    int64_t* d = regs_.ip(in.dst);
    for (int64_t j = 0; j < n; ++j) d[j] = v;
  }
}

// Flat offsets of the load's lanes into offset_; false when an active lane is out of bounds.
bool Machine::offsets(const Instr& in, const int64_t* mask, int64_t n) {
  const LoadSource& s = sources_[static_cast<size_t>(in.slot)];
  const ir::Dims& shape = s.buf->type.shape;
  int64_t base = 0;
  uint64_t bad = 0;
  int64_t* off = offset_.data();
  for (int64_t j = 0; j < n; ++j) off[j] = 0;
  for (size_t d = 0; d < in.index.size(); ++d) {
    const int64_t* idx = regs_.ip(in.index[d]);
    auto extent = static_cast<uint64_t>(shape[d]);
    int64_t stride = s.strides[d];
    if (uniform(in.index[d])) {
      bad |= static_cast<uint64_t>(idx[0]) >= extent;
      base = wrap_add(base, wrap_mul(idx[0], stride));
      continue;
    }
    for (int64_t j = 0; j < n; ++j) {
      uint64_t out = static_cast<uint64_t>(idx[j]) >= extent;
      bad |= mask ? out & static_cast<uint64_t>(mask[j]) : out;
      off[j] = wrap_add(off[j], wrap_mul(idx[j], stride));  // inactive lanes may hold anything
    }
  }
  if (base != 0)
    for (int64_t j = 0; j < n; ++j) off[j] = wrap_add(off[j], base);
  return bad == 0;
}

void Machine::exec_load(const Instr& in, int64_t n) {
  ORCHID_CHECK(in.slot >= 0 && static_cast<size_t>(in.slot) < sources_.size())
      << label_ << ": load of slot " << in.slot << " of " << sources_.size() << " inputs";
  const Buffer& buf = *sources_[static_cast<size_t>(in.slot)].buf;
  ORCHID_CHECK(static_cast<int64_t>(in.index.size()) == buf.type.rank() &&
               buf.type.dtype == in.dtype)
      << label_ << ": load of slot " << in.slot << " does not match its input";
  const int64_t* mask = in.mask >= 0 ? regs_.ip(in.mask) : nullptr;
  bool any = mask == nullptr;
  for (int64_t j = 0; j < n && !any; ++j) any = mask[j] != 0;
  if (any && !offsets(in, mask, n)) out_of_bounds(in, mask, n);
  const int64_t* off = offset_.data();
  if (buf.is_float()) {
    const double* src = buf.f.data();
    double* d = regs_.fp(in.dst);
    double fill = in.value.f;
    if (!any) {
      for (int64_t j = 0; j < n; ++j) d[j] = fill;
    } else if (mask) {
      for (int64_t j = 0; j < n; ++j) d[j] = mask[j] ? src[off[j]] : fill;
    } else {
      for (int64_t j = 0; j < n; ++j) d[j] = src[off[j]];
    }
  } else {
    const int64_t* src = buf.i.data();
    int64_t* d = regs_.ip(in.dst);
    int64_t fill = in.value.i;
    if (!any) {
      for (int64_t j = 0; j < n; ++j) d[j] = fill;
    } else if (mask) {
      for (int64_t j = 0; j < n; ++j) d[j] = mask[j] ? src[off[j]] : fill;
    } else {
      for (int64_t j = 0; j < n; ++j) d[j] = src[off[j]];
    }
  }
}

void Machine::exec_contiguous_load(const Instr& in, int64_t start, int64_t n) {
  const Buffer& buf = *sources_[static_cast<size_t>(in.slot)].buf;
  ORCHID_CHECK(start + n <= buf.numel() && buf.type.dtype == in.dtype)
      << label_ << ": contiguous load of slot " << in.slot << " does not match its input";
  const int64_t* mask = in.mask >= 0 ? regs_.ip(in.mask) : nullptr;
  if (buf.is_float()) {
    const double* src = buf.f.data() + start;
    double* d = regs_.fp(in.dst);
    for (int64_t j = 0; j < n; ++j) d[j] = mask && !mask[j] ? in.value.f : src[j];
  } else {
    const int64_t* src = buf.i.data() + start;
    int64_t* d = regs_.ip(in.dst);
    for (int64_t j = 0; j < n; ++j) d[j] = mask && !mask[j] ? in.value.i : src[j];
  }
}

void Machine::out_of_bounds(const Instr& in, const int64_t* mask, int64_t n) {
  const LoadSource& s = sources_[static_cast<size_t>(in.slot)];
  const ir::Dims& shape = s.buf->type.shape;
  for (int64_t j = 0; j < n; ++j) {
    if (mask && !mask[j]) continue;
    std::vector<int64_t> idx;
    int bad_dim = -1;
    for (size_t d = 0; d < in.index.size(); ++d) {
      idx.push_back(regs_.ip(in.index[d])[uniform(in.index[d]) ? 0 : j]);
      if (bad_dim < 0 && (idx.back() < 0 || idx.back() >= shape[d])) bad_dim = static_cast<int>(d);
    }
    if (bad_dim < 0) continue;
    std::ostringstream os;
    os << label_ << ": load of %" << s.name << "[";
    for (size_t d = 0; d < idx.size(); ++d) os << (d ? ", " : "") << idx[d];
    os << "] is out of bounds of " << ir::type_str(s.buf->type) << " (index "
       << idx[static_cast<size_t>(bad_dim)] << " of dimension " << bad_dim << ")";
    throw UserError(os.str());
  }
  ORCHID_CHECK(false) << label_ << ": a load failed its bounds check at no lane";
  throw InternalError("unreachable");
}

}  // namespace orchid::interp::detail
