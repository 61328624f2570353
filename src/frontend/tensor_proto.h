// ONNX TensorProto <-> ir::Tensor. Errors are UserErrors naming `what` (file and tensor).
#pragma once

#include <optional>
#include <string>

#include "ir/tensor.h"

namespace onnx {
class TensorProto;
}

namespace orchid::frontend {

// ONNX TensorProto.DataType code -> Orchid dtype; nullopt for strings, complex, float8 etc.
std::optional<ir::DType> dtype_from_onnx(int32_t code);
const char* onnx_dtype_name(int32_t code);

// Converts a tensor whose data is inline (raw_data or the typed fields); external data must
// have been loaded into raw_data first.
ir::Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& what);

// Reads a serialized TensorProto file (the node tests' input_0.pb, output_0.pb).
ir::Tensor read_tensor_pb(const std::string& path);

}  // namespace orchid::frontend
