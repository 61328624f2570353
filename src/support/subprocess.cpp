#include "support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "support/error.h"

extern char** environ;

namespace orchid {

namespace {

using Clock = std::chrono::steady_clock;

// util-linux's prlimit(1), through which an address-space limit is applied (see the header).
constexpr const char* kPrlimit = "/usr/bin/prlimit";

// An owned file descriptor, closed when it dies.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

struct Pipe {
  Fd read, write;
};

// A close-on-exec pipe (see the header for why) whose parent end (the read end when the
// parent reads) is non-blocking, for the poll loop.
Pipe make_pipe(bool parent_reads) {
  int fds[2];
  ORCHID_CHECK(::pipe2(fds, O_CLOEXEC) == 0) << "pipe2: " << std::strerror(errno);
  Pipe p{Fd(fds[0]), Fd(fds[1])};
  int parent = parent_reads ? fds[0] : fds[1];
  ::fcntl(parent, F_SETFL, ::fcntl(parent, F_GETFL) | O_NONBLOCK);
  return p;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// The argument vector to spawn and the program file it starts.
struct Command {
  std::filesystem::path program;
  std::vector<std::string> argv;
};

}  // namespace

// AddressSanitizer reserves terabytes of address space for its shadow memory, so a child of a
// sanitized build (`make test-sanitize`) runs without the address-space limit.
bool address_space_limit_applies() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#else
  return true;
#endif
#else
  return true;
#endif
}

namespace {

Command resolve_command(const std::vector<std::string>& argv, const SubprocessOptions& options) {
  ORCHID_CHECK(!argv.empty() && !argv[0].empty()) << "run_subprocess needs a program";
  std::filesystem::path program = find_program(argv[0], options.search_path);
  ORCHID_USER_CHECK(!program.empty()) << "cannot run " << quoted(argv[0]) << ": no such program";
  if (options.address_space_limit <= 0 || !address_space_limit_applies()) return {program, argv};
  ORCHID_USER_CHECK(::access(kPrlimit, X_OK) == 0)
      << "cannot run " << quoted(argv[0]) << " with an address-space limit: " << kPrlimit
      << " (util-linux) is missing";
  Command c{kPrlimit, {kPrlimit, "--as=" + std::to_string(options.address_space_limit), "--",
                       std::filesystem::absolute(program).string()}};
  c.argv.insert(c.argv.end(), argv.begin() + 1, argv.end());
  return c;
}

// Owns posix_spawn's attribute and file-action objects for one spawn.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  // The child leads a new process group (so a timeout can kill everything it started), runs
  // with no signal blocked whatever the calling thread blocks, and gets SIGPIPE's default
  // action even where the caller ignores it.
  void set_attributes() {
    sigset_t none, pipe_only;
    sigemptyset(&none);
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    posix_spawnattr_setpgroup(&attr_, 0);
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setsigdefault(&attr_, &pipe_only);
    posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                         POSIX_SPAWN_SETSIGDEF);
  }
  void redirect(int fd, int target) { posix_spawn_file_actions_adddup2(&actions_, fd, target); }
  void chdir(const std::filesystem::path& dir) {
    posix_spawn_file_actions_addchdir_np(&actions_, dir.c_str());
  }
  const posix_spawnattr_t* attr() const { return &attr_; }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

// The child's environment: the given one or the caller's, with the overrides set.
std::vector<std::string> child_environment(const SubprocessOptions& options) {
  std::vector<std::string> env;
  if (options.environment) env = *options.environment;
  else
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (const std::string& o : options.environment_overrides) {
    std::string name = o.substr(0, o.find('=') + 1);
    std::erase_if(env, [&](const std::string& e) { return e.rfind(name, 0) == 0; });
    env.push_back(o);
  }
  return env;
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The child's ends of its three standard streams.
struct ChildEnds {
  int in, out, err;
};

pid_t spawn(const Command& command, const ChildEnds& ends, const SubprocessOptions& options,
            const std::string& shown_name) {
  SpawnSetup setup;
  setup.set_attributes();
  setup.redirect(ends.in, 0);
  setup.redirect(ends.out, 1);
  setup.redirect(ends.err, 2);
  if (!options.working_dir.empty()) setup.chdir(options.working_dir);
  std::vector<char*> args = c_strings(command.argv);
  std::vector<std::string> env_strings = child_environment(options);
  std::vector<char*> env = c_strings(env_strings);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, command.program.c_str(), setup.actions(), setup.attr(), args.data(), env.data());
  if (rc != 0) {
    std::string where =
        options.working_dir.empty() ? "" : " in " + quoted(options.working_dir.string());
    ORCHID_USER_ERROR() << "cannot run " << quoted(shown_name) << where << ": " << std::strerror(rc);
  }
  return pid;
}

// write(2) that cannot kill the caller with SIGPIPE when the child has closed its standard
// input: SIGPIPE is blocked in this thread for the write, and one the write raised (it is
// directed at this thread) is consumed before the old mask returns. EPIPE is still reported.
ssize_t write_without_sigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  sigset_t pending;
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE);
  ssize_t written = ::write(fd, data, size);
  int saved = errno;
  if (written < 0 && saved == EPIPE && !was_pending) {
    timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return written;
}

// The parent's ends and what flows through them.
struct Streams {
  Fd in, out, err;
  std::string_view to_write;
  std::string* out_text;
  std::string* err_text;
};

// Reads what is there; closes the end at end-of-file or on an error.
void drain(Fd& fd, std::string& text) {
  char buf[65536];
  ssize_t n = ::read(fd.get(), buf, sizeof buf);
  if (n > 0)
    text.append(buf, size_t(n));
  else if (n == 0 || (errno != EAGAIN && errno != EINTR))
    fd.reset();
}

void feed(Streams& s) {
  ssize_t n = write_without_sigpipe(s.in.get(), s.to_write.data(), s.to_write.size());
  if (n > 0) s.to_write.remove_prefix(size_t(n));
  bool failed = n < 0 && errno != EAGAIN && errno != EINTR;
  if (failed || s.to_write.empty()) s.in.reset();  // closing it gives the child end-of-file
}

// Milliseconds to the deadline for poll(2), rounded up; -1 without one.
int poll_timeout_ms(const std::optional<Clock::time_point>& deadline) {
  if (!deadline) return -1;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
  return int(std::max<int64_t>(0, std::min<int64_t>(left, 1 << 30)));
}

// Moves data until the child has closed its output pipes, or the deadline passes (false).
bool pump(Streams& s, const std::optional<Clock::time_point>& deadline) {
  while (s.out.open() || s.err.open()) {
    if (deadline && Clock::now() >= *deadline) return false;
    pollfd fds[3];
    int n = 0;
    for (Fd* fd : {&s.out, &s.err})
      if (fd->open()) fds[n++] = {fd->get(), POLLIN, 0};
    if (s.in.open()) fds[n++] = {s.in.get(), POLLOUT, 0};
    int ready = ::poll(fds, nfds_t(n), poll_timeout_ms(deadline));
    if (ready < 0) {
      ORCHID_CHECK(errno == EINTR) << "poll: " << std::strerror(errno);
      continue;
    }
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == s.out.get()) drain(s.out, *s.out_text);
      else if (fds[i].fd == s.err.get()) drain(s.err, *s.err_text);
      else feed(s);
    }
  }
  return true;
}

void record_status(int status, SubprocessResult& result) {
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
}

void kill_group(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);  // in case it has left its group
}

int wait_blocking(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) ORCHID_CHECK(errno == EINTR) << "waitpid: " << std::strerror(errno);
  return status;
}

// Waits for the child, which has closed its output; true when it exited before the deadline.
bool wait_until(pid_t pid, const std::optional<Clock::time_point>& deadline, int& status) {
  if (!deadline) {
    status = wait_blocking(pid);
    return true;
  }
  while (Clock::now() < *deadline) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    ORCHID_CHECK(r == 0 || errno == EINTR) << "waitpid: " << std::strerror(errno);
    ::poll(nullptr, 0, std::min(5, poll_timeout_ms(deadline)));
  }
  return false;
}

}  // namespace

std::filesystem::path find_program(const std::string& program, const std::string& search_path) {
  auto runnable = [](const std::filesystem::path& p) {
    std::error_code ec;
    return ::access(p.c_str(), X_OK) == 0 && !std::filesystem::is_directory(p, ec);
  };
  if (program.find('/') != std::string::npos) return runnable(program) ? program : "";
  size_t begin = 0;
  while (begin <= search_path.size()) {
    size_t end = std::min(search_path.find(':', begin), search_path.size());
    std::string dir = search_path.substr(begin, end - begin);
    std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / program;
    if (runnable(candidate)) return candidate;
    begin = end + 1;
  }
  return "";
}

SubprocessResult run_subprocess(const std::vector<std::string>& argv, const SubprocessOptions& options) {
  Command command = resolve_command(argv, options);
  Pipe in = make_pipe(/*parent_reads=*/false);
  Pipe out = make_pipe(/*parent_reads=*/true);
  Pipe err = make_pipe(/*parent_reads=*/true);
  int child_err = options.merge_stderr ? out.write.get() : err.write.get();
  std::optional<Clock::time_point> deadline;
  if (options.timeout_s > 0)
    deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(options.timeout_s));
  pid_t pid = spawn(command, {in.read.get(), out.write.get(), child_err}, options, argv[0]);
  // The child has its copies; the parent keeps only its own ends, so end-of-file arrives.
  in.read.reset();
  out.write.reset();
  err.write.reset();
  if (options.merge_stderr) err.read.reset();

  SubprocessResult result;
  Streams streams{std::move(in.write), std::move(out.read), std::move(err.read),
                  options.stdin_data, &result.out, &result.err};
  if (streams.to_write.empty()) streams.in.reset();
  int status = 0;
  bool finished = pump(streams, deadline) && wait_until(pid, deadline, status);
  if (!finished) {
    kill_group(pid);
    status = wait_blocking(pid);
    result.timed_out = true;
  }
  record_status(status, result);
  return result;
}

}  // namespace orchid
