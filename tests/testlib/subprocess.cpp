#include "testlib/subprocess.h"

#include "support/subprocess.h"

namespace orchid::testlib {

ProcessResult run_process(const std::vector<std::string>& argv) {
  SubprocessOptions options;
  options.merge_stderr = true;
  SubprocessResult r = run_subprocess(argv, options);
  return {r.term_signal != 0 ? 128 + r.term_signal : r.exit_code, r.out};
}

}  // namespace orchid::testlib
