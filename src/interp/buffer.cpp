#include "interp/buffer.h"

#include <cmath>
#include <cstring>

#include "ir/printer.h"
#include "support/error.h"
#include "support/half.h"

namespace orchid::interp::detail {

using ir::DType;

namespace {

template <class T, class Out, class F>
void read_as(const std::byte* p, int64_t n, Out* out, F convert) {
  for (int64_t k = 0; k < n; ++k) {
    T v;
    std::memcpy(&v, p + k * static_cast<int64_t>(sizeof(T)), sizeof(T));
    out[k] = convert(v);
  }
}

template <class T, class In, class F>
void write_as(std::byte* p, int64_t n, const In* in, F convert) {
  for (int64_t k = 0; k < n; ++k) {
    T v = convert(in[k]);
    std::memcpy(p + k * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
  }
}

template <class T>
void read_int(const std::byte* p, int64_t n, int64_t* out) {
  read_as<T>(p, n, out, [](T v) { return static_cast<int64_t>(v); });
}
template <class T>
void write_int(std::byte* p, int64_t n, const int64_t* in) {
  write_as<T>(p, n, in, [](int64_t v) { return static_cast<T>(v); });
}

}  // namespace

Buffer make_buffer(const ir::TensorType& type) {
  Buffer b;
  b.type = type;
  if (b.is_float()) {
    b.f.resize(static_cast<size_t>(type.numel()));
  } else {
    b.i.resize(static_cast<size_t>(type.numel()));
  }
  return b;
}

Buffer buffer_from_tensor(const ir::Tensor& t) {
  Buffer b = make_buffer(t.type());
  const std::byte* p = t.data();
  int64_t n = t.numel();
  switch (t.dtype()) {
    case DType::F32: read_as<float>(p, n, b.f.data(), [](float v) { return double(v); }); break;
    case DType::F64: read_as<double>(p, n, b.f.data(), [](double v) { return v; }); break;
    case DType::F16:
      read_as<uint16_t>(p, n, b.f.data(), [](uint16_t v) { return double(f16_bits_to_f32(v)); });
      break;
    case DType::BF16:
      read_as<uint16_t>(p, n, b.f.data(), [](uint16_t v) { return double(bf16_bits_to_f32(v)); });
      break;
    case DType::I8: read_int<int8_t>(p, n, b.i.data()); break;
    case DType::I16: read_int<int16_t>(p, n, b.i.data()); break;
    case DType::I32: read_int<int32_t>(p, n, b.i.data()); break;
    case DType::I64: read_int<int64_t>(p, n, b.i.data()); break;
    case DType::U8: read_int<uint8_t>(p, n, b.i.data()); break;
    case DType::U16: read_int<uint16_t>(p, n, b.i.data()); break;
    case DType::U32: read_int<uint32_t>(p, n, b.i.data()); break;
    case DType::U64: read_int<uint64_t>(p, n, b.i.data()); break;
    case DType::Bool:
      read_as<uint8_t>(p, n, b.i.data(), [](uint8_t v) { return int64_t{v != 0}; });
      break;
  }
  return b;
}

ir::Tensor tensor_from_buffer(const Buffer& b, bool f64_floats) {
  DType t = b.type.dtype;
  if (b.is_float() && f64_floats) t = DType::F64;
  ir::Tensor out(ir::TensorType{t, b.type.shape});
  std::byte* p = out.data();
  int64_t n = b.numel();
  const double* f = b.f.data();
  const int64_t* i = b.i.data();
  switch (t) {
    case DType::F32: write_as<float>(p, n, f, [](double v) { return float(v); }); break;
    case DType::F64: write_as<double>(p, n, f, [](double v) { return v; }); break;
    case DType::F16:
      write_as<uint16_t>(p, n, f, [](double v) { return f32_to_f16_bits(float(v)); });
      break;
    case DType::BF16:
      write_as<uint16_t>(p, n, f, [](double v) { return f32_to_bf16_bits(float(v)); });
      break;
    case DType::I8: write_int<int8_t>(p, n, i); break;
    case DType::I16: write_int<int16_t>(p, n, i); break;
    case DType::I32: write_int<int32_t>(p, n, i); break;
    case DType::I64: write_int<int64_t>(p, n, i); break;
    case DType::U8: write_int<uint8_t>(p, n, i); break;
    case DType::U16: write_int<uint16_t>(p, n, i); break;
    case DType::U32: write_int<uint32_t>(p, n, i); break;
    case DType::U64: write_int<uint64_t>(p, n, i); break;
    case DType::Bool: write_as<uint8_t>(p, n, i, [](int64_t v) { return uint8_t{v != 0}; }); break;
  }
  return out;
}

void round_lanes(double* v, int64_t n, DType t) {
  switch (t) {
    case DType::F64: return;
    case DType::F32:
      for (int64_t k = 0; k < n; ++k) v[k] = static_cast<float>(v[k]);
      return;
    case DType::F16:
      for (int64_t k = 0; k < n; ++k) v[k] = f16_bits_to_f32(f32_to_f16_bits(float(v[k])));
      return;
    case DType::BF16:
      for (int64_t k = 0; k < n; ++k) v[k] = bf16_bits_to_f32(f32_to_bf16_bits(float(v[k])));
      return;
    case DType::I8: case DType::I16: case DType::I32: case DType::I64:
    case DType::U8: case DType::U16: case DType::U32: case DType::U64: case DType::Bool:
      break;
  }
  ORCHID_CHECK(false) << "round_lanes to " << ir::dtype_name(t);
}

void wrap_lanes(int64_t* v, int64_t n, DType t) {
  switch (t) {
    case DType::I64: case DType::U64: return;
    case DType::I8: case DType::I16: case DType::I32:
    case DType::U8: case DType::U16: case DType::U32: case DType::Bool:
      for (int64_t k = 0; k < n; ++k) v[k] = ir::wrap_to_dtype(v[k], t);
      return;
    case DType::F32: case DType::F16: case DType::BF16: case DType::F64:
      break;
  }
  ORCHID_CHECK(false) << "wrap_lanes to " << ir::dtype_name(t);
}

DType accumulator_dtype(DType t, Precision p) {
  if (p == Precision::F64) return DType::F64;
  return (t == DType::F16 || t == DType::BF16) ? DType::F32 : t;
}

double integral_to_float(int64_t v, DType from, DType to, Precision p) {
  bool u = from == DType::U64;
  if (p == Precision::F64 || to == DType::F64)
    return u ? static_cast<double>(static_cast<uint64_t>(v)) : static_cast<double>(v);
  float f = u ? static_cast<float>(static_cast<uint64_t>(v)) : static_cast<float>(v);
  return to == DType::F32 ? f : ir::round_to_dtype(f, to);
}

std::string node_label(const ir::Graph& g, ir::NodeId id) {
  const ir::Primitive& p = g.node(id);
  std::string out = "node " + std::to_string(id.v) + " (";
  if (!p.outputs.empty()) out += ir::print_value_name(g.value(p.outputs[0]).name) + " = ";
  out += ir::prim_op_name(p.op);
  if (!p.name.empty()) out += ", from \"" + p.name + "\"";
  return out + ")";
}

}  // namespace orchid::interp::detail
