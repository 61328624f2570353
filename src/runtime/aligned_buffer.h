// Zero-filled memory aligned to ORCHID_ALIGN (kernel_abi.h): arenas, scratch and weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace orchid::runtime {

// n rounded up to a multiple of `align` (> 0); n >= 0.
constexpr int64_t round_up(int64_t n, int64_t align) { return (n + align - 1) / align * align; }

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // `bytes` >= 0, zero-filled. Even an empty buffer has a valid aligned data() pointer.
  explicit AlignedBuffer(int64_t bytes);

  std::byte* data() { return p_.get(); }
  const std::byte* data() const { return p_.get(); }
  int64_t size() const { return size_; }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, Free> p_;
  int64_t size_ = 0;
};

}  // namespace orchid::runtime
