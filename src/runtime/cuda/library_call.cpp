#include "runtime/cuda/library_call.h"

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

std::string describe(const LibrarySpec& spec) {
  return std::visit([](const auto& s) { return describe(s); }, spec);
}

}  // namespace orchid::runtime::cuda
