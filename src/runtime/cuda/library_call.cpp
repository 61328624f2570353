#include "runtime/cuda/library_call.h"

#include <algorithm>
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

int fastest_of(const std::vector<std::optional<double>>& ms) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(ms.size()); ++i) {
    const std::optional<double>& t = ms[static_cast<size_t>(i)];
    if (!t) continue;
    double bar = best < 0 ? 0 : *ms[static_cast<size_t>(best)] * (best == 0 ? kFasterBy : 1.0);
    if (best < 0 || *t < bar) best = i;
  }
  return best;
}

namespace {

// Milliseconds per call of each candidate (pick_algorithms); none for one that did not run.
std::vector<std::optional<double>> time_candidates(int count, const std::function<bool(int)>& run) {
  const Device& dev = Device::get();
  std::vector<std::optional<double>> ms(static_cast<size_t>(count));
  std::vector<bool> runs(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) runs[static_cast<size_t>(i)] = run(i);
  for (int round = 0; round < kTimingRounds; ++round)
    for (int i = 0; i < count; ++i) {
      auto at = static_cast<size_t>(i);
      if (!runs[at]) continue;
      bool ok = true;
      double t = dev.time_ms([&] {
        for (int c = 0; c < kTimedCalls && ok; ++c) ok = run(i);
      });
      runs[at] = ok;
      double per_call = t / kTimedCalls;
      ms[at] = !ok ? std::nullopt : std::optional(ms[at] ? std::min(*ms[at], per_call) : per_call);
    }
  dev.synchronize();
  return ms;
}

}  // namespace

std::optional<AlgorithmPair> pick_algorithms(int count, bool time, const std::function<bool(int)>& run) {
  if (count <= 1 || !time) return AlgorithmPair{};
  std::vector<std::optional<double>> ms = time_candidates(count, run);
  int best = fastest_of(ms);
  if (best < 0) return std::nullopt;
  return AlgorithmPair{ms[0] ? 0 : best, best};
}

std::string describe(const LibrarySpec& spec) {
  return std::visit([](const auto& s) { return describe(s); }, spec);
}

}  // namespace orchid::runtime::cuda
