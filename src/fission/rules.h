// Fission rules, one function per ops.def entry: each turns one ONNX node into primitives
// and returns one value per ONNX output (fewer when trailing optional outputs are not
// produced). See rule_context.h for what a rule may do.
#pragma once

#include <vector>

#include "fission/rule_context.h"

namespace orchid::fission {

#define ORCHID_ONNX_OP(rule, op, from, to, input, types) \
  std::vector<ir::ValueId> rule_##rule(RuleContext& ctx);
#include "fission/ops.def"
#undef ORCHID_ONNX_OP

}  // namespace orchid::fission
