// Comparing a computed tensor with a reference, element by element: the check every stage
// that claims to compute what the interpreter computes is held to.
#pragma once

#include <string>

#include "ir/tensor.h"

namespace orchid::interp {

// Empty when the types are equal and every element matches — floats within
// |got - want| <= atol + rtol * |want| (NaN matches NaN; an infinity matches only the same
// infinity, whatever the tolerances), integers and bool exactly; else a description of the
// first difference.
std::string compare_tensors(const ir::Tensor& got, const ir::Tensor& want, double rtol, double atol);

// Relative L2 error of a float tensor against a reference of the same type: non-finite
// values must agree exactly and position by position; then ||got - want|| / max(||want||,
// tiny). Integer and bool tensors: 0 when equal, 1 otherwise. `why` (may be null) says what
// differs where the error is not finite.
double relative_l2(const ir::Tensor& got, const ir::Tensor& want, std::string* why);

}  // namespace orchid::interp
