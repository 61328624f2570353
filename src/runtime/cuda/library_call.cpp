#include "runtime/cuda/library_call.h"

#include <limits>
#include <vector>

#include "runtime/cuda/device.h"
#include "support/error.h"

namespace orchid::runtime::cuda {

LibrarySpec library_spec(StepImpl impl, const ir::Graph& g, const std::string& where) {
  if (impl == StepImpl::CublasLt) {
    LtMatch m = match_lt_matmul(g);
    ORCHID_USER_CHECK(m.matmul) << where << ": " << m.reason;
    return *m.matmul;
  }
  ORCHID_CHECK(impl == StepImpl::Cudnn) << "a " << step_impl_name(impl) << " step is no library call";
  DnnMatch m = match_dnn_conv(g);
  ORCHID_USER_CHECK(m.conv) << where << ": " << m.reason;
  return *m.conv;
}

int fastest_candidate(int count, const std::function<bool(int)>& run) {
  const Device& dev = Device::get();
  const double none = std::numeric_limits<double>::infinity();
  std::vector<double> ms(static_cast<size_t>(count), none);
  std::vector<bool> ran(static_cast<size_t>(count), false);
  for (int i = 0; i < count; ++i) ran[static_cast<size_t>(i)] = run(i);
  for (int round = 0; round < kTimingRounds; ++round)
    for (int i = 0; i < count; ++i) {
      if (!ran[static_cast<size_t>(i)]) continue;
      bool ok = true;
      double t = dev.time_ms([&] {
        for (int c = 0; c < kTimedCalls && ok; ++c) ok = run(i);
      });
      if (!ok) ran[static_cast<size_t>(i)] = false, ms[static_cast<size_t>(i)] = none;
      else ms[static_cast<size_t>(i)] = std::min(ms[static_cast<size_t>(i)], t / kTimedCalls);
    }
  dev.synchronize();
  int best = -1;
  for (int i = 0; i < count; ++i) {
    if (!ran[static_cast<size_t>(i)]) continue;
    if (best < 0 || ms[static_cast<size_t>(i)] < (best == 0 ? 0.97 : 1.0) * ms[static_cast<size_t>(best)]) best = i;
  }
  return best;
}

std::string describe(const LibrarySpec& spec) {
  return std::visit([](const auto& s) { return describe(s); }, spec);
}

}  // namespace orchid::runtime::cuda
