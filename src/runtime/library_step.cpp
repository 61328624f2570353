// Library steps by name (library_step.h): "onednn" and "reference".
#include "runtime/library_step.h"

#include "runtime/onednn_step.h"
#include "runtime/reference_step.h"
#include "support/error.h"

namespace orchid::runtime {

namespace {

std::string unknown_impl(std::string_view impl) {
  return "unknown library step implementation '" + std::string(impl) + "' (known: onednn, reference)";
}

}  // namespace

std::unique_ptr<LibraryStep> make_library_step(std::string_view impl, const ir::Graph& g,
                                               const std::vector<const void*>& constant_inputs) {
  ORCHID_USER_CHECK(constant_inputs.empty() || constant_inputs.size() == g.inputs().size())
      << "library step '" << impl << "': " << constant_inputs.size() << " constant_inputs entries for "
      << g.inputs().size() << " graph inputs";
  if (impl == "onednn") return make_onednn_step(g, constant_inputs);
  if (impl == "reference") return make_reference_step(g);
  ORCHID_USER_ERROR() << unknown_impl(impl);
  return nullptr;
}

std::string library_step_unsupported(std::string_view impl, const ir::Graph& g) {
  if (impl == "onednn") return onednn_step_unsupported(g);
  if (impl == "reference") return reference_step_unsupported(g);
  return unknown_impl(impl);
}

}  // namespace orchid::runtime
