// Text helpers for tests that write graphs as text.
#pragma once

#include <string>
#include <string_view>

namespace orchid::testlib {

// `text` with every occurrence of `from` (not empty) replaced by `to`, left to right; what was
// put in is not searched again.
std::string replaced_all(std::string text, std::string_view from, std::string_view to);

}  // namespace orchid::testlib
