#include "frontend/tensor_proto.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "support/error.h"
#include "support/half.h"

namespace orchid::frontend {

namespace {

using onnx::TensorProto_DataType;

// Stores element i of `t` from a 64-bit integer field (int32_data, int64_data, uint64_data).
void set_from_int_field(ir::Tensor& t, int64_t i, int64_t v, int32_t code) {
  if (code == TensorProto_DataType::TensorProto_DataType_FLOAT16 ||
      code == TensorProto_DataType::TensorProto_DataType_BFLOAT16) {
    auto bits = static_cast<uint16_t>(v);
    std::memcpy(t.data() + 2 * i, &bits, 2);  // the field holds the 16-bit pattern
    return;
  }
  t.set_i64(i, v);
}

template <class Field>
void fill_from_field(ir::Tensor& t, const Field& field, int32_t code, const std::string& what) {
  ORCHID_USER_CHECK(static_cast<int64_t>(field.size()) == t.numel())
      << what << ": tensor data has " << field.size() << " elements, shape "
      << ir::dims_str(t.shape()) << " needs " << t.numel();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const auto v = field.Get(static_cast<int>(i));
    if constexpr (std::is_floating_point_v<std::decay_t<decltype(v)>>)
      t.set_f64(i, v);
    else
      set_from_int_field(t, i, static_cast<int64_t>(v), code);
  }
}

// Elements stored in the typed field that holds data of t's type.
int64_t typed_field_size(const onnx::TensorProto& t) {
  switch (t.data_type()) {
    case 1: return t.float_data_size();
    case 11: return t.double_data_size();
    case 7: return t.int64_data_size();
    case 12: case 13: return t.uint64_data_size();
    default: return t.int32_data_size();
  }
}

}  // namespace

std::optional<ir::DType> dtype_from_onnx(int32_t code) {
  switch (code) {
    case 1: return ir::DType::F32;
    case 2: return ir::DType::U8;
    case 3: return ir::DType::I8;
    case 4: return ir::DType::U16;
    case 5: return ir::DType::I16;
    case 6: return ir::DType::I32;
    case 7: return ir::DType::I64;
    case 9: return ir::DType::Bool;
    case 10: return ir::DType::F16;
    case 11: return ir::DType::F64;
    case 12: return ir::DType::U32;
    case 13: return ir::DType::U64;
    case 16: return ir::DType::BF16;
    default: return std::nullopt;  // strings, complex and float8 types have no Orchid dtype
  }
}

const char* onnx_dtype_name(int32_t code) {
  static constexpr const char* kNames[] = {
      "UNDEFINED", "FLOAT",  "UINT8",  "INT8",      "UINT16",     "INT16",
      "INT32",     "INT64",  "STRING", "BOOL",      "FLOAT16",    "DOUBLE",
      "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
  return code >= 0 && code < 17 ? kNames[code] : "unknown";
}

ir::Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& what) {
  auto dtype = dtype_from_onnx(t.data_type());
  ORCHID_SUPPORTED(dtype.has_value()) << what << ": not supported: tensors of type "
                                      << onnx_dtype_name(t.data_type());
  ir::Dims dims(t.dims().begin(), t.dims().end());
  auto total = ir::checked_numel(dims, *dtype);
  ORCHID_USER_CHECK(total && *total <= (int64_t(1) << 40))
      << what << ": bad or too large shape " << ir::dims_str(dims);
  ORCHID_USER_CHECK(t.data_location() != onnx::TensorProto_DataLocation_EXTERNAL || t.has_raw_data())
      << what << ": external data was not loaded";
  ir::TensorType type{*dtype, dims};
  if (t.has_raw_data()) {  // sizes are checked before anything is allocated
    const std::string& raw = t.raw_data();
    ORCHID_USER_CHECK(static_cast<int64_t>(raw.size()) == type.bytes())
        << what << ": raw data has " << raw.size() << " bytes, " << ir::type_str(type)
        << " needs " << type.bytes();
    ir::Tensor out(type);
    if (!raw.empty()) std::memcpy(out.data(), raw.data(), raw.size());
    if (*dtype == ir::DType::Bool)
      for (int64_t i = 0; i < out.numel(); ++i) out.set_i64(i, out.get_i64(i));  // normalise to 0/1
    return out;
  }
  ORCHID_USER_CHECK(*total == 0 || typed_field_size(t) == *total)
      << what << ": tensor data has " << typed_field_size(t) << " elements, shape "
      << ir::dims_str(dims) << " needs " << *total;
  ir::Tensor out(type);
  if (*total == 0) return out;
  switch (t.data_type()) {
    case 1: fill_from_field(out, t.float_data(), t.data_type(), what); break;
    case 11: fill_from_field(out, t.double_data(), t.data_type(), what); break;
    case 7: fill_from_field(out, t.int64_data(), t.data_type(), what); break;
    case 12: case 13: fill_from_field(out, t.uint64_data(), t.data_type(), what); break;
    default: fill_from_field(out, t.int32_data(), t.data_type(), what); break;
  }
  return out;
}

ir::Tensor read_tensor_pb(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  ORCHID_USER_CHECK(f.good()) << path << ": cannot open";
  std::ostringstream ss;
  ss << f.rdbuf();
  onnx::TensorProto t;
  ORCHID_USER_CHECK(t.ParseFromString(ss.str())) << path << ": not a serialized ONNX TensorProto";
  return tensor_from_proto(t, path);
}

}  // namespace orchid::frontend
