#include "ir/npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "support/error.h"

namespace orchid::ir {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct Descr {
  DType dtype;
  bool swap;  // stored big-endian
};

// Parses a numpy dtype string such as '<f4', '|b1', '>i8'.
Descr parse_descr(const std::string& d, const std::string& what) {
  ORCHID_USER_CHECK(d.size() >= 3) << what << ": unsupported npy dtype '" << d << "'";
  char order = d[0];
  std::string code = d.substr(1);
  static constexpr struct {
    const char* code;
    DType dtype;
  } kCodes[] = {{"f2", DType::F16}, {"f4", DType::F32}, {"f8", DType::F64}, {"i1", DType::I8},
                {"i2", DType::I16}, {"i4", DType::I32}, {"i8", DType::I64}, {"u1", DType::U8},
                {"u2", DType::U16}, {"u4", DType::U32}, {"u8", DType::U64}, {"b1", DType::Bool}};
  for (const auto& c : kCodes) {
    if (code != c.code) continue;
    bool one_byte = dtype_bytes(c.dtype) == 1;
    ORCHID_USER_CHECK(order == '<' || order == '>' || order == '|' || order == '=')
        << what << ": unsupported npy byte order in '" << d << "'";
    ORCHID_USER_CHECK(one_byte || order != '|') << what << ": bad npy dtype '" << d << "'";
    return {c.dtype, order == '>' && !one_byte};
  }
  ORCHID_USER_ERROR() << what << ": unsupported npy dtype '" << d
                      << "' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1)";
  return {};
}

// Value of `key` in the header dict, e.g. 'descr': '<f4' -> <f4.
std::string header_field(const std::string& header, const std::string& key, const std::string& what) {
  size_t k = header.find("'" + key + "'");
  ORCHID_USER_CHECK(k != std::string::npos) << what << ": npy header has no '" << key << "'";
  size_t colon = header.find(':', k);
  ORCHID_USER_CHECK(colon != std::string::npos) << what << ": malformed npy header";
  size_t start = header.find_first_not_of(" ", colon + 1);
  ORCHID_USER_CHECK(start != std::string::npos) << what << ": malformed npy header";
  if (header[start] == '\'') {
    size_t end = header.find('\'', start + 1);
    ORCHID_USER_CHECK(end != std::string::npos) << what << ": malformed npy header";
    return header.substr(start + 1, end - start - 1);
  }
  if (header[start] == '(') {
    size_t end = header.find(')', start);
    ORCHID_USER_CHECK(end != std::string::npos) << what << ": malformed npy header";
    return header.substr(start + 1, end - start - 1);
  }
  size_t end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

Dims parse_shape(const std::string& text, const std::string& what) {
  Dims dims;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    size_t b = item.find_first_not_of(" "), e = item.find_last_not_of(" ");
    if (b == std::string::npos) continue;
    item = item.substr(b, e - b + 1);
    int64_t v = 0;
    for (char c : item) {
      ORCHID_USER_CHECK(c >= '0' && c <= '9') << what << ": bad npy shape (" << text << ")";
      ORCHID_USER_CHECK(v < (int64_t(1) << 40)) << what << ": npy shape too large (" << text << ")";
      v = v * 10 + (c - '0');
    }
    dims.push_back(v);
  }
  return dims;
}

std::string descr_of(DType t) {
  switch (t) {
    case DType::F16: return "<f2";
    case DType::F32: case DType::BF16: return "<f4";
    case DType::F64: return "<f8";
    case DType::I8: return "|i1";
    case DType::I16: return "<i2";
    case DType::I32: return "<i4";
    case DType::I64: return "<i8";
    case DType::U8: return "|u1";
    case DType::U16: return "<u2";
    case DType::U32: return "<u4";
    case DType::U64: return "<u8";
    case DType::Bool: return "|b1";
  }
  return "?";
}

void byteswap_elements(std::vector<std::byte>& bytes, int64_t width) {
  for (size_t i = 0; i + static_cast<size_t>(width) <= bytes.size(); i += static_cast<size_t>(width))
    std::reverse(bytes.begin() + static_cast<int64_t>(i), bytes.begin() + static_cast<int64_t>(i) + width);
}

}  // namespace

Tensor parse_npy(std::string_view bytes, const std::string& what) {
  ORCHID_USER_CHECK(bytes.size() >= 10 && bytes.substr(0, 6) == std::string_view(kMagic, 6))
      << what << ": not a .npy file (bad magic)";
  auto major = static_cast<uint8_t>(bytes[6]);
  ORCHID_USER_CHECK(major >= 1 && major <= 3) << what << ": unsupported npy version " << int(major);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (size_t(static_cast<uint8_t>(bytes[9])) << 8);
    offset = 10;
  } else {
    ORCHID_USER_CHECK(bytes.size() >= 12) << what << ": truncated npy header";
    header_len = 0;
    for (int k = 0; k < 4; ++k) header_len |= size_t(static_cast<uint8_t>(bytes[8 + k])) << (8 * k);
    offset = 12;
  }
  ORCHID_USER_CHECK(bytes.size() >= offset + header_len) << what << ": truncated npy header";
  std::string header(bytes.substr(offset, header_len));
  ORCHID_USER_CHECK(header_field(header, "fortran_order", what).starts_with("False"))
      << what << ": Fortran-order npy arrays are not supported";
  Descr descr = parse_descr(header_field(header, "descr", what), what);
  TensorType type{descr.dtype, parse_shape(header_field(header, "shape", what), what)};
  ORCHID_USER_CHECK(checked_numel(type.shape, type.dtype))
      << what << ": npy shape " << dims_str(type.shape) << " is too large";
  size_t data_bytes = static_cast<size_t>(type.bytes());
  size_t have = bytes.size() - offset - header_len;
  ORCHID_USER_CHECK(have == data_bytes) << what << ": npy data has " << have << " bytes, "
                                        << type_str(type) << " needs " << data_bytes;
  std::vector<std::byte> data(data_bytes);
  if (data_bytes) std::memcpy(data.data(), bytes.data() + offset + header_len, data_bytes);
  if (descr.swap) byteswap_elements(data, dtype_bytes(descr.dtype));
  if (descr.dtype == DType::Bool) {
    for (std::byte& b : data)
      ORCHID_USER_CHECK(b == std::byte{0} || b == std::byte{1}) << what << ": bool element not 0/1";
  }
  return Tensor(std::move(type), std::move(data));
}

std::string serialize_npy(const Tensor& in) {
  Tensor t = in;
  if (in.dtype() == DType::BF16) {  // numpy has no bfloat16: widen exactly to f32
    t = Tensor(TensorType{DType::F32, in.shape()});
    for (int64_t i = 0; i < in.numel(); ++i) t.set_f64(i, in.get_f64(i));
  }
  std::string shape;  // numpy's tuple syntax: (), (n,), (a, b)
  for (size_t k = 0; k < t.shape().size(); ++k)
    shape += (k ? ", " : "") + std::to_string(t.shape()[k]);
  if (t.shape().size() == 1) shape += ",";
  std::string header = "{'descr': '" + descr_of(in.dtype()) +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(t.data()), t.bytes().size());
  return out;
}

Tensor read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  ORCHID_USER_CHECK(f.good()) << path << ": cannot open";
  std::ostringstream ss;
  ss << f.rdbuf();
  return parse_npy(ss.str(), path);
}

void write_npy(const std::string& path, const Tensor& t) {
  std::ofstream f(path, std::ios::binary);
  ORCHID_USER_CHECK(f.good()) << path << ": cannot open for writing";
  std::string bytes = serialize_npy(t);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ORCHID_USER_CHECK(f.good()) << path << ": write failed";
}

}  // namespace orchid::ir
