// Checking user-facing error messages in tests.
#pragma once

#include <functional>
#include <string>

#include "support/error.h"

namespace orchid::testlib {

// The message of the UserError `fn` throws, or "(no error)".
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace orchid::testlib
