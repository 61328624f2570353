// Library steps by name (library_step.h): "onednn", "onednn_winograd" and "reference".
#include "runtime/library_step.h"

#include <optional>

#include "runtime/onednn_step.h"
#include "runtime/reference_step.h"
#include "support/error.h"

namespace orchid::runtime {

namespace {

std::string unknown_impl(std::string_view impl) {
  return "unknown library step implementation '" + std::string(impl) + "' (known: onednn, onednn_winograd, reference)";
}

// The convolution algorithm of a oneDNN step by its implementation's name, or none.
std::optional<ConvAlgorithm> onednn_algorithm(std::string_view impl) {
  if (impl == "onednn") return ConvAlgorithm::Direct;
  if (impl == "onednn_winograd") return ConvAlgorithm::Winograd;
  return std::nullopt;
}

}  // namespace

std::unique_ptr<LibraryStep> make_library_step(std::string_view impl, const ir::Graph& g,
                                               const std::vector<const void*>& constant_inputs,
                                               const std::vector<BufferLayout>& layouts) {
  ORCHID_USER_CHECK(constant_inputs.empty() || constant_inputs.size() == g.inputs().size())
      << "library step '" << impl << "': " << constant_inputs.size() << " constant_inputs entries for "
      << g.inputs().size() << " graph inputs";
  size_t args = g.inputs().size() + g.outputs().size();
  ORCHID_USER_CHECK(layouts.empty() || layouts.size() == args)
      << "library step '" << impl << "': " << layouts.size() << " layouts for " << args << " arguments";
  std::vector<BufferLayout> arg_layouts = layouts;
  arg_layouts.resize(args, BufferLayout::Plain);
  if (auto algorithm = onednn_algorithm(impl)) return make_onednn_step(g, constant_inputs, arg_layouts, *algorithm);
  if (impl == "reference") {
    for (size_t k = 0; k < args; ++k)
      ORCHID_USER_CHECK(arg_layouts[k] == BufferLayout::Plain)
          << "library step 'reference': argument " << k << " is " << buffer_layout_name(arg_layouts[k])
          << "; the interpreter reads and writes plain buffers only";
    return make_reference_step(g);
  }
  ORCHID_USER_ERROR() << unknown_impl(impl);
  return nullptr;
}

std::vector<BufferLayout> preferred_layouts(std::string_view impl, const ir::Graph& g,
                                            const std::vector<bool>& constant_inputs) {
  ORCHID_USER_CHECK(constant_inputs.size() == g.inputs().size())
      << "library step '" << impl << "': " << constant_inputs.size() << " constant flags for " << g.inputs().size()
      << " graph inputs";
  if (auto algorithm = onednn_algorithm(impl)) return onednn_preferred_layouts(g, constant_inputs, *algorithm);
  ORCHID_SUPPORTED(impl == "reference") << unknown_impl(impl);
  return std::vector<BufferLayout>(g.inputs().size() + g.outputs().size(), BufferLayout::Plain);
}

std::string library_step_unsupported(std::string_view impl, const ir::Graph& g) {
  if (auto algorithm = onednn_algorithm(impl)) return onednn_step_unsupported(g, *algorithm);
  if (impl == "reference") return reference_step_unsupported(g);
  return unknown_impl(impl);
}

}  // namespace orchid::runtime
