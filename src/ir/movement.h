// Pure data movement in the primitive IR: layout primitives that only permute their input's
// dims, and the strides at which a reshaped or permuted tensor reads memory. Consumers that
// address memory through strides (oneDNN steps) read such primitives' outputs in place.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace orchid::ir {

// When node n is a layout primitive y[i0..] = x[i(q0), i(q1), ..] (one unpredicated load of
// its one input, every index a distinct domain variable): q, where x's dim k is read by
// y's domain variable q[k]. Else nullopt.
std::optional<std::vector<int32_t>> permutation_of(const Graph& g, NodeId n);

// Whether n is a view or a permuting layout primitive (moves no data when read in place).
bool is_movement(const Graph& g, NodeId n);

// The strides of y = x.permute(q) (as permutation_of gives q) from x's strides.
Dims permuted_strides(const Dims& x_strides, const std::vector<int32_t>& q);

// The strides at which movement node n's output reads memory, given those of its input, or
// nullopt where no strides can.
std::optional<Dims> read_strides(const Graph& g, NodeId n, const Dims& in_strides);

// The strides at which movement node n's input lies in memory, given those of its output (a
// result written through n), or nullopt where no strides can.
std::optional<Dims> write_strides(const Graph& g, NodeId n, const Dims& out_strides);

// How a reshape of `from` into `to` regroups dims: the smallest runs of consecutive dims of
// more than one element, one on each side, with equal products, in order, as dim indices.
// Empty where the element counts differ or are zero.
struct ReshapeGroup {
  std::vector<size_t> from, to;
};
std::vector<ReshapeGroup> reshape_groups(const Dims& from, const Dims& to);

// An operand broadcast over `to` (dims: to's rank, each dim 1 or to's) as the same dense data
// broadcast over `from`, of which `to` is a reshape: per reshape group, the operand spans all
// of the group's dims or none of them. Nullopt where it spans part of a group (a [1, S, N]
// operand over [B, S, N] seen as [B·S, N] with B > 1).
std::optional<Dims> broadcast_before_reshape(const Dims& dims, const Dims& from, const Dims& to);

// The strides at which `to` (a reshape of a tensor of shape `from` read at `from_strides`,
// elements in row-major order) reads the same memory, or nullopt where no strides can (a
// merged group of dims that is not contiguous in memory). Dims of 1 get the stride their
// neighbour would give.
std::optional<Dims> reshaped_strides(const Dims& from, const Dims& from_strides, const Dims& to);

}  // namespace orchid::ir
