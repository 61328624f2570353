#include "runtime/cuda/descriptor.h"

#include "orchid/cuda_abi.h"
#include "support/error.h"

namespace orchid::runtime::cuda {

void check_cuda_steps(const std::vector<int64_t>& d, const Plan& plan, const std::string& source) {
  // The count, the fixed fields of every kernel, then every kernel's argument sizes.
  bool malformed = d.empty() || d[0] < 0 || d.size() < 1 + static_cast<size_t>(d[0]) * ORCHID_CUDA_DESCRIPTOR_FIELDS;
  std::vector<size_t> sizes_at;  // per kernel: where its argument sizes begin
  size_t at = malformed ? 0 : 1 + static_cast<size_t>(d[0]) * ORCHID_CUDA_DESCRIPTOR_FIELDS;
  for (int64_t k = 0; !malformed && k < d[0]; ++k) {
    int64_t args = d[1 + static_cast<size_t>(k) * ORCHID_CUDA_DESCRIPTOR_FIELDS];
    malformed = args < 0 || args > static_cast<int64_t>(d.size() - at);
    sizes_at.push_back(at);
    if (!malformed) at += static_cast<size_t>(args);
  }
  ORCHID_USER_CHECK(!malformed && at == d.size()) << source << ": the module's kernel descriptor is malformed";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    if (s.impl != StepImpl::Cuda) continue;
    std::string where = source + ": steps[" + std::to_string(i) + "] ('" + s.name + "')";
    ORCHID_USER_CHECK(s.kernel < d[0]) << where << ": kernel " << s.kernel << " is not in the module (it has " << d[0]
                                       << ")";
    const int64_t* k = &d[1 + static_cast<size_t>(s.kernel) * ORCHID_CUDA_DESCRIPTOR_FIELDS];
    bool same = k[0] == static_cast<int64_t>(s.args.size()) && k[1] == s.tasks && k[2] == s.threads &&
                k[3] == s.shared_bytes && k[4] == s.scratch_bytes;
    ORCHID_USER_CHECK(same) << where << ": args, tasks, threads, shared_bytes, scratch_bytes differ from the kernel's ("
                            << k[0] << " args, " << k[1] << " blocks, " << k[2] << " threads, " << k[3]
                            << " shared bytes, " << k[4] << " scratch bytes)";
    check_arg_bytes(plan, s, &d[sizes_at[static_cast<size_t>(s.kernel)]], where + ": kernel " + std::to_string(s.kernel));
  }
}

}  // namespace orchid::runtime::cuda
