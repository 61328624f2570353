#include "runtime/weights.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "orchid/kernel_abi.h"
#include "runtime/checksum.h"
#include "support/error.h"
#include "support/hash.h"

namespace orchid::runtime {

namespace {

// Writes `n` bytes and folds them into the running checksum.
void put(std::ofstream& out, uint64_t& sum, const void* data, size_t n) {
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
  sum = fnv1a64(std::string_view(static_cast<const char*>(data), n), sum);
}

}  // namespace

WeightsLayout layout_weights(std::span<const ir::Tensor> tensors) {
  WeightsLayout l;
  int64_t end = 0;
  for (const ir::Tensor& t : tensors) {
    int64_t offset = round_up(end, ORCHID_ALIGN);
    l.offsets.push_back(offset);
    end = offset + static_cast<int64_t>(t.bytes().size());
  }
  l.bytes = end;
  return l;
}

WeightsLayout write_weights(const std::string& path, std::span<const ir::Tensor> tensors) {
  WeightsLayout l = layout_weights(tensors);
  std::ofstream out(path, std::ios::binary);
  ORCHID_USER_CHECK(out) << path << ": cannot write (" << std::strerror(errno) << ")";
  uint64_t sum = fnv1a64("");
  const char zeros[ORCHID_ALIGN] = {};
  int64_t at = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    put(out, sum, zeros, static_cast<size_t>(l.offsets[i] - at));
    put(out, sum, tensors[i].data(), tensors[i].bytes().size());
    at = l.offsets[i] + static_cast<int64_t>(tensors[i].bytes().size());
  }
  out.close();
  ORCHID_USER_CHECK(out) << path << ": write failed";
  l.checksum = sum;
  return l;
}

AlignedBuffer read_weights(const std::string& path, int64_t expected_bytes,
                           uint64_t expected_checksum) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  ORCHID_USER_CHECK(in) << path << ": cannot open (" << std::strerror(errno) << ")";
  int64_t size = static_cast<int64_t>(in.tellg());
  ORCHID_USER_CHECK(size == expected_bytes)
      << path << ": " << size << " bytes, but the plan says " << expected_bytes
      << " (a truncated copy, or the weights of another plan)";
  AlignedBuffer buf(size);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(size));
  ORCHID_USER_CHECK(in || size == 0) << path << ": read error";
  uint64_t sum = checksum_bytes(buf.data(), static_cast<size_t>(size));
  check_checksum(path, sum, expected_checksum);
  return buf;
}

void bind_constants(const Plan& plan, const AlignedBuffer& weights, const ir::Graph& g, std::vector<ir::Tensor>& inputs) {
  for (size_t i = 0; i < g.inputs().size() && i < inputs.size(); ++i) {
    const ir::Value& v = g.value(g.inputs()[i]);
    for (const PlanBuffer& b : plan.buffers)
      if (b.name == v.name && b.kind == BufferKind::Constant) {
        const std::byte* at = weights.data() + b.weights_offset;
        std::vector<std::byte> bytes(at, at + inputs[i].bytes().size());
        inputs[i] = from_layout(ir::Tensor(v.type, std::move(bytes)), b.layout);
      }
  }
}

}  // namespace orchid::runtime
