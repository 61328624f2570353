#include "runtime/aligned_buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "orchid/kernel_abi.h"
#include "support/error.h"

namespace orchid::runtime {

AlignedBuffer::AlignedBuffer(int64_t bytes) : size_(bytes) {
  ORCHID_CHECK(bytes >= 0) << bytes;
  size_t n = static_cast<size_t>(round_up(bytes > 0 ? bytes : 1, ORCHID_ALIGN));
  void* p = std::aligned_alloc(ORCHID_ALIGN, n);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, n);
  p_.reset(static_cast<std::byte*>(p));
}

void AlignedBuffer::Free::operator()(std::byte* p) const { std::free(p); }

}  // namespace orchid::runtime
