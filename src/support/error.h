// Two kinds of error (STYLE.md rule 5):
//  - UserError: bad input from a user (a model, a flag, a file). The message names the
//    file, node, op, shape or path; the CLI prints it and exits with code 1.
//    UnsupportedError, a kind of UserError, is a valid input Orchid does not support.
//  - InternalError: a broken invariant inside Orchid, raised by ORCHID_CHECK (on in
//    release builds); the CLI exits with code 2.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace orchid {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& msg) : std::runtime_error(msg) {}
};

// A valid input that uses something Orchid does not support (yet): an operator, a version,
// an attribute value or a dtype. A UserError, so the CLI reports it alike; the conformance
// runner counts these apart from failures.
class UnsupportedError : public UserError {
 public:
  explicit UnsupportedError(const std::string& msg) : UserError(msg) {}
};

class InternalError : public std::runtime_error {
 public:
  explicit InternalError(const std::string& msg) : std::runtime_error(msg) {}
};

// A message as a terminal may show it: control characters other than newline and tab (a
// model's names may hold escape sequences) written as \xNN, and a message longer than
// max_bytes (a name of a megabyte, an attribute of 100000 entries) cut in its middle, saying
// how many bytes were left out.
std::string for_terminal(std::string_view message, size_t max_bytes = 8192);

namespace detail {

// Collects a message with operator<< and throws when destroyed. Used only through the
// macros below, whose temporaries die at the end of the full expression.
class Thrower {
 public:
  enum class Kind { User, Unsupported, Internal };
  Thrower(Kind kind, const char* prefix) : kind_(kind) { os_ << prefix; }
  Thrower(const Thrower&) = delete;
  Thrower& operator=(const Thrower&) = delete;
  [[noreturn]] ~Thrower() noexcept(false) {
    if (kind_ == Kind::User) throw UserError(os_.str());
    if (kind_ == Kind::Unsupported) throw UnsupportedError(os_.str());
    throw InternalError(os_.str());
  }
  template <class T>
  Thrower& operator<<(const T& v) {
    os_ << v;
    return *this;
  }

 private:
  Kind kind_;
  std::ostringstream os_;
};

std::string check_prefix(const char* file, int line, const char* cond);

}  // namespace detail
}  // namespace orchid

// A single statement (safe inside an unbraced if/else) that throws `kind` when cond fails.
#define ORCHID_DETAIL_CHECK(cond, kind, prefix) \
  switch (0)                                    \
  case 0:                                       \
  default:                                      \
    if (cond)                                   \
      ;                                         \
    else                                        \
      ::orchid::detail::Thrower(::orchid::detail::Thrower::Kind::kind, prefix)

// ORCHID_CHECK(cond) << "details"; throws InternalError naming file, line and condition.
#define ORCHID_CHECK(cond) \
  ORCHID_DETAIL_CHECK(cond, Internal, ::orchid::detail::check_prefix(__FILE__, __LINE__, #cond).c_str())

// ORCHID_USER_CHECK(cond) << "message naming the input"; throws UserError.
#define ORCHID_USER_CHECK(cond) ORCHID_DETAIL_CHECK(cond, User, "")

// ORCHID_SUPPORTED(cond) << "what is not supported"; throws UnsupportedError.
#define ORCHID_SUPPORTED(cond) ORCHID_DETAIL_CHECK(cond, Unsupported, "")

// ORCHID_USER_ERROR() << "message"; always throws UserError.
#define ORCHID_USER_ERROR() ::orchid::detail::Thrower(::orchid::detail::Thrower::Kind::User, "")
