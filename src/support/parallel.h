// Running independent pieces of work on a few threads: the callers start processes (compilers,
// code generation that compiles), so the threads mostly wait and `jobs` stays small.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace orchid {

// Calls f(i) for every i < n on up to `jobs` threads (the caller's one of them), each thread
// taking the next index in turn. Every call runs even where one throws; then the exception of
// the lowest index that threw is rethrown.
template <class F>
void parallel_for(size_t n, int jobs, F&& f) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < n;) {
      try {
        f(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  try {
    for (size_t t = 1; t < std::min(n, static_cast<size_t>(std::max(1, jobs))); ++t) helpers.emplace_back(work);
  } catch (const std::system_error&) {
    // No more threads: the work goes on with those there are.
  }
  work();
  for (std::thread& t : helpers) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace orchid
