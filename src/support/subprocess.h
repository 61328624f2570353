// Running another program: an argument vector handed to posix_spawn, never a shell, so
// arguments arrive verbatim (spaces, quotes and `$(...)` included). Orchid runs g++ this way
// and tests run the `orchid` CLI.
//
// Why posix_spawn and not fork: the calling process has libgomp (and oneDNN) threads, and a
// forked copy of a multi-threaded process may only call async-signal-safe functions; glibc's
// posix_spawn uses clone(CLONE_VM|CLONE_VFORK) + exec, which is safe from any thread.
//
// Every pipe is created close-on-exec, so that programs spawned at the same time from other
// threads (compile_many runs several g++ at once) never inherit each other's pipe ends —
// which would keep a pipe open and delay end-of-file until the unrelated child exits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace orchid {

struct SubprocessOptions {
  // Written to the child's standard input, which is then closed; an empty string gives an
  // immediately closed standard input (the child reads end-of-file).
  std::string stdin_data;
  // The child's working directory; empty: the caller's. A relative program path (one with a
  // '/') is resolved against the caller's directory, not this one.
  std::filesystem::path working_dir;
  // Wall-clock limit in seconds; 0 or less: none. When it passes, the child and every process
  // in its process group (the child leads a group of its own) get SIGKILL, and the result says
  // timed_out with the output captured so far.
  double timeout_s = 0;
  // Limit on the child's address space (RLIMIT_AS) in bytes; 0: none. posix_spawn cannot set
  // resource limits in the child, so the program is started through util-linux's
  // `/usr/bin/prlimit --as=N -- program args...`, which sets the limit on itself and then execs
  // the program (no shell, and no window in which the program runs unlimited). Where
  // /usr/bin/prlimit is missing, run_subprocess throws UserError rather than run unlimited.
  // Not applied in a build with AddressSanitizer (address_space_limit_applies()).
  int64_t address_space_limit = 0;
  // The complete environment as NAME=value strings; nullopt: the caller's environment.
  std::optional<std::vector<std::string>> environment;
  // NAME=value strings set on top of that environment (replacing a variable of the name).
  std::vector<std::string> environment_overrides;
  // Where a program named without a '/' is looked up (PATH-style); library code never reads
  // the environment, so the system directories unless the caller passes its own.
  std::string search_path = "/usr/local/bin:/usr/bin:/bin";
  // Send standard error into the standard-output pipe, so that `out` holds both, interleaved
  // as the child wrote them, and `err` stays empty.
  bool merge_stderr = false;
};

struct SubprocessResult {
  int exit_code = -1;    // the exit status when the child exited normally; -1 otherwise
  int term_signal = 0;   // the signal that ended the child (SIGKILL after a timeout); 0 if none
  bool timed_out = false;
  std::string out;       // standard output (named so because `stdout` is a C macro)
  std::string err;       // standard error

  bool ok() const { return exit_code == 0; }
};

// Runs argv[0] (searched on options.search_path when it has no '/') with arguments argv and
// waits for it, capturing standard output and error separately (both pipes are polled, so
// large outputs on either never deadlock). A program that cannot be started (missing, not
// executable, a missing working directory) is a UserError naming it; anything the started
// program does — a non-zero exit, a signal, a timeout — is reported in the result.
// Output ends when every process holding the pipes has closed them: a process the child
// leaves running with them open keeps this waiting, up to the timeout.
SubprocessResult run_subprocess(const std::vector<std::string>& argv,
                                const SubprocessOptions& options = {});

// Whether SubprocessOptions::address_space_limit takes effect: not in a build with
// AddressSanitizer, whose shadow memory needs terabytes of address space.
bool address_space_limit_applies();

// The path argv[0] would run: the program itself when it contains a '/', else the first
// executable file of that name on `search_path` (a PATH-style list). Empty if there is none.
std::filesystem::path find_program(const std::string& program, const std::string& search_path);

}  // namespace orchid
