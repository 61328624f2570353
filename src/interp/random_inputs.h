// Seeded random inputs for a graph. Floats are uniform in [-1, 1); integers uniform in
// [-8, 8) (unsigned: [0, 8)); bool fair coins — except integer inputs that feed an indirect
// load or a scatter's indices, which are drawn inside the valid index range [0, extent) of the axis they index
// (the smallest such extent when several). The same seed gives the same tensors everywhere.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace orchid::interp {

std::vector<ir::Tensor> random_inputs(const ir::Graph& g, uint64_t seed);

}  // namespace orchid::interp
