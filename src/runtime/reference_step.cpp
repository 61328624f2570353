// The reference step: args -> tensors -> interp::run -> args.
#include "runtime/reference_step.h"

#include <cstring>

#include "interp/interp.h"
#include "ir/verifier.h"
#include "support/error.h"

namespace orchid::runtime {

namespace {

class ReferenceStep final : public LibraryStep {
 public:
  explicit ReferenceStep(const ir::Graph& g) : graph_(g) {}

  void run(void* const* args) const override {
    const auto& inputs = graph_.inputs();
    std::vector<ir::Tensor> in;
    in.reserve(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) in.push_back(tensor_from(graph_.type(inputs[k]), args[k]));
    std::vector<ir::Tensor> out = interp::run(graph_, in, {interp::Precision::Own, false});
    ORCHID_CHECK(out.size() == graph_.outputs().size()) << "interpreter returned " << out.size() << " outputs";
    for (size_t k = 0; k < out.size(); ++k) {
      ORCHID_CHECK(out[k].type() == graph_.type(graph_.outputs()[k])) << "output " << k << " has type "
                                                                      << ir::type_str(out[k].type());
      if (!out[k].bytes().empty()) std::memcpy(args[inputs.size() + k], out[k].data(), out[k].bytes().size());
    }
  }

 private:
  static ir::Tensor tensor_from(const ir::TensorType& t, const void* data) {
    std::vector<std::byte> bytes(static_cast<size_t>(t.bytes()));
    if (!bytes.empty()) std::memcpy(bytes.data(), data, bytes.size());
    return ir::Tensor(t, std::move(bytes));
  }

  ir::Graph graph_;
};

}  // namespace

std::unique_ptr<LibraryStep> make_reference_step(const ir::Graph& g) {
  std::string why = reference_step_unsupported(g);
  ORCHID_USER_CHECK(why.empty()) << why;
  return std::make_unique<ReferenceStep>(g);
}

std::string reference_step_unsupported(const ir::Graph& g) {
  std::vector<std::string> problems = ir::verify(g);
  if (problems.empty()) return "";
  std::string why = "reference: malformed graph @" + g.name + ":";
  for (const std::string& p : problems) why += "\n  " + p;
  return why;
}

}  // namespace orchid::runtime
