// The conformance run's results and their two renderings: the console report and
// docs/ops.md (generated from the fission op table and the measured results).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace orchid::conformance {

// Node tests of one operator.
struct OpTally {
  int passed = 0, failed = 0, unsupported = 0, bound = 0;
  std::map<std::string, int> reasons;
};


struct Results {
  size_t tests = 0;
  std::map<std::string, OpTally> tally;  // by operator
  std::vector<std::string> failures;     // "test: detail"
  std::vector<std::string> deviations;   // "test: reason"
};

void print_report(const Results& r);
void write_markdown(const Results& r, const std::string& path);

}  // namespace orchid::conformance
