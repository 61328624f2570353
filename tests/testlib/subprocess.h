// Runs a program with an argument vector (no shell) and captures its exit code and its
// standard output and error, interleaved. For CLI tests; a thin layer over
// orchid::run_subprocess (support/subprocess.h), the one implementation.
#pragma once

#include <string>
#include <vector>

namespace orchid::testlib {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string output;
};

ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace orchid::testlib
