// Fuzz target: an artifact's plan.json through the plan reader and its validation (the file an
// artifact's loader trusts least: it names buffers, steps, kernels and files). A bad document
// must end in a UserError naming the field; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/plan.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    orchid::runtime::Plan plan = orchid::runtime::plan_from_json(text);
    // A valid plan writes and reads back to itself.
    std::string json = orchid::runtime::plan_to_json(plan);
    if (orchid::runtime::plan_to_json(orchid::runtime::plan_from_json(json)) != json)
      throw orchid::InternalError("a plan written as JSON does not read back to itself");
  } catch (const orchid::UserError&) {
  }
  return 0;
}
