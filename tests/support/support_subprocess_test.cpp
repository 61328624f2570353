// run_subprocess: exit codes, signals, standard input, large outputs on both streams,
// timeouts that kill the whole process group, verbatim arguments (no shell), errors.
// Some tests run /bin/sh as the *program* to produce a behaviour (an exit code, a signal);
// run_subprocess itself never involves a shell.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "support/subprocess.h"
#include "testlib/errors.h"
#include "testlib/temp_dir.h"

namespace orchid {
namespace {

SubprocessResult sh(const std::string& script, const SubprocessOptions& options = {}) {
  return run_subprocess({"/bin/sh", "-c", script}, options);
}

TEST(Subprocess, ReportsExitCodes) {
  EXPECT_EQ(run_subprocess({"true"}).exit_code, 0);
  EXPECT_TRUE(run_subprocess({"true"}).ok());
  EXPECT_EQ(run_subprocess({"false"}).exit_code, 1);
  SubprocessResult r = sh("exit 37");
  EXPECT_EQ(r.exit_code, 37);
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_FALSE(r.timed_out);
}

TEST(Subprocess, ReportsTheTerminatingSignal) {
  SubprocessResult r = sh("kill -TERM $$");
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.term_signal, SIGTERM);
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.ok());
}

TEST(Subprocess, CapturesStdoutAndStderrSeparately) {
  SubprocessResult r = sh("echo out1; echo err1 >&2; echo out2");
  EXPECT_EQ(r.out, "out1\nout2\n");
  EXPECT_EQ(r.err, "err1\n");
}

TEST(Subprocess, MergedStderrIsInterleavedIntoStdout) {
  SubprocessOptions merged;
  merged.merge_stderr = true;
  SubprocessResult r = sh("echo a; echo b >&2; echo c", merged);
  EXPECT_EQ(r.out, "a\nb\nc\n");
  EXPECT_EQ(r.err, "");
}

// Every byte value, NUL included, several pipe buffers long.
std::string binary_data(size_t size) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = char((i * 131 + i / 256) & 255);
  return s;
}

TEST(Subprocess, PassesStdinThrough) {
  SubprocessOptions options;
  options.stdin_data = binary_data(3 << 20);
  SubprocessResult r = run_subprocess({"cat"}, options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.out == options.stdin_data) << "got " << r.out.size() << " bytes";
  // Without data the child reads end-of-file at once rather than waiting for a terminal.
  EXPECT_EQ(run_subprocess({"cat"}).out, "");
}

TEST(Subprocess, AChildThatIgnoresItsStdinDoesNotKillTheCaller) {
  SubprocessOptions options;
  options.stdin_data = binary_data(10 << 20);  // more than a pipe holds: the write hits EPIPE
  SubprocessResult r = run_subprocess({"true"}, options);
  EXPECT_EQ(r.exit_code, 0);
}

TEST(Subprocess, LargeOutputsOnBothStreamsDoNotDeadlock) {
  // Two writers at once, 10 MiB each, so neither stream can be read to its end first.
  SubprocessResult r = sh(
      "head -c 10485760 /dev/zero | tr '\\0' o & "
      "head -c 10485760 /dev/zero | tr '\\0' e >&2; wait");
  EXPECT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.out.size(), 10485760u);
  ASSERT_EQ(r.err.size(), 10485760u);
  EXPECT_EQ(r.out.find_first_not_of('o'), std::string::npos);
  EXPECT_EQ(r.err.find_first_not_of('e'), std::string::npos);
}

TEST(Subprocess, LargeStdinAndStdoutTogether) {
  SubprocessOptions options;
  options.stdin_data = binary_data(10 << 20);
  SubprocessResult r = run_subprocess({"cat"}, options);
  EXPECT_EQ(r.out.size(), options.stdin_data.size());
  EXPECT_TRUE(r.out == options.stdin_data);
}

TEST(Subprocess, TimeoutKillsTheChild) {
  SubprocessOptions options;
  options.timeout_s = 0.3;
  auto start = std::chrono::steady_clock::now();
  SubprocessResult r = run_subprocess({"sleep", "100"}, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_LT(seconds, 30.0);  // generous: only "not 100 s" matters
}

// True once `pid` is gone or a zombie (an orphan waits for init to reap it).
bool process_is_dead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

TEST(Subprocess, TimeoutKillsTheWholeProcessGroup) {
  SubprocessOptions options;
  options.timeout_s = 0.5;
  // The grandchild holds the output pipe; it must die with its parent.
  SubprocessResult r = sh("sleep 100 & echo $!; wait", options);
  EXPECT_TRUE(r.timed_out);
  pid_t grandchild = std::stoi(r.out);
  bool dead = false;
  for (int i = 0; i < 200 && !dead; ++i) {
    dead = process_is_dead(grandchild);
    if (!dead) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_TRUE(dead) << "sleep " << grandchild << " survived the timeout";
}

TEST(Subprocess, ArgumentsArriveVerbatim) {
  std::vector<std::string> args = {"a b",  "\"double\"", "'single'", "$(echo hi)", "`id`",
                                   "*",    "$HOME",      "",         "back\\slash", "x;y|z&",
                                   "\ttab", "new\nline"};
  std::vector<std::string> argv = {"printf", "%s\\0"};
  argv.insert(argv.end(), args.begin(), args.end());
  SubprocessResult r = run_subprocess(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> got;
  for (size_t begin = 0, end; (end = r.out.find('\0', begin)) != std::string::npos; begin = end + 1)
    got.push_back(r.out.substr(begin, end - begin));
  EXPECT_EQ(got, args);
}

TEST(Subprocess, AMissingProgramIsAUserErrorNamingIt) {
  std::string msg = testlib::error_of([] { run_subprocess({"orchid-no-such-program", "x"}); });
  EXPECT_NE(msg.find("cannot run 'orchid-no-such-program': no such program"), std::string::npos) << msg;
  msg = testlib::error_of([] { run_subprocess({"/nonexistent/dir/prog"}); });
  EXPECT_NE(msg.find("'/nonexistent/dir/prog'"), std::string::npos) << msg;
}

TEST(Subprocess, RunsInTheGivenWorkingDirectory) {
  testlib::TempDir dir("orchid_subprocess");
  SubprocessOptions options;
  options.working_dir = dir.str();
  SubprocessResult r = run_subprocess({"pwd", "-P"}, options);
  EXPECT_EQ(r.out, std::filesystem::canonical(dir.str()).string() + "\n");
  options.working_dir = dir.file("missing");
  std::string msg = testlib::error_of([&] { run_subprocess({"pwd"}, options); });
  EXPECT_NE(msg.find("cannot run 'pwd' in '" + dir.file("missing") + "'"), std::string::npos) << msg;
}

TEST(Subprocess, EnvironmentIsInheritedReplacedOrOverridden) {
  SubprocessResult inherited = run_subprocess({"env"});
  EXPECT_NE(inherited.out.find("PATH="), std::string::npos);
  SubprocessOptions options;
  options.environment = std::vector<std::string>{"ORCHID_A=1", "ORCHID_B=two words"};
  SubprocessResult r = run_subprocess({"env"}, options);
  EXPECT_EQ(r.out, "ORCHID_A=1\nORCHID_B=two words\n");
  // Overrides replace a variable of their name, on the given or the caller's environment.
  options.environment_overrides = {"ORCHID_A=2", "ORCHID_C=3"};
  EXPECT_EQ(run_subprocess({"env"}, options).out, "ORCHID_B=two words\nORCHID_A=2\nORCHID_C=3\n");
  SubprocessOptions over;
  over.environment_overrides = {"PATH=/nowhere:/usr/bin:/bin"};
  std::string out = "\n" + run_subprocess({"env"}, over).out;
  size_t at = out.find("\nPATH=");
  EXPECT_EQ(out.substr(at, 29), "\nPATH=/nowhere:/usr/bin:/bin\n") << out;
  EXPECT_EQ(out.find("\nPATH=", at + 1), std::string::npos) << out;  // one PATH
}

TEST(Subprocess, AddressSpaceLimitApplies) {
  if (::access("/usr/bin/prlimit", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/prlimit";
  if (!address_space_limit_applies()) GTEST_SKIP() << "an AddressSanitizer build runs children without the limit";
  SubprocessOptions options;
  options.address_space_limit = int64_t(1) << 30;
  SubprocessResult r = sh("ulimit -v", options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1048576\n");  // KiB
  // The limit does not hide the exit status or the arguments.
  EXPECT_EQ(sh("exit 5", options).exit_code, 5);
  EXPECT_EQ(run_subprocess({"printf", "%s", "a b $(x)"}, options).out, "a b $(x)");
}

TEST(Subprocess, ConcurrentRunsDoNotLeakPipesIntoEachOther) {
  // Pipes are close-on-exec: a child spawned while another thread's run holds pipes open
  // sees only its own standard streams (plus whatever the test process itself inherited).
  // A leak shows as extra descriptors, or as two children each holding the other's standard
  // input open (a deadlock, which the timeouts turn into a failure). It can be missed, never
  // falsely reported.
  SubprocessOptions options;
  options.timeout_s = 20;
  std::vector<std::string> list_fds = {"ls", "/proc/self/fd"};
  std::string baseline = run_subprocess(list_fds, options).out;
  std::atomic<bool> stop{false};
  std::thread other([&] {
    SubprocessOptions with_input = options;
    with_input.stdin_data = "data";
    while (!stop) EXPECT_FALSE(run_subprocess({"cat"}, with_input).timed_out);
  });
  for (int i = 0; i < 50; ++i) EXPECT_EQ(run_subprocess(list_fds, options).out, baseline);
  stop = true;
  other.join();
}

TEST(Subprocess, FindProgramSearchesThePath) {
  EXPECT_EQ(find_program("sh", "/nonexistent:/bin"), "/bin/sh");
  EXPECT_EQ(find_program("sh", "/nonexistent"), "");
  EXPECT_EQ(find_program("/bin/sh", ""), "/bin/sh");
  EXPECT_EQ(find_program("/bin", "/"), "");  // a directory is not a program
}

}  // namespace
}  // namespace orchid
