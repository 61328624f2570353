#include "codegen/cpu/compiler.h"

#include <stdlib.h>

#include <cerrno>
#include <fstream>
#include <optional>
#include <system_error>

#include "support/error.h"
#include "support/parallel.h"
#include "support/sha256.h"
#include "support/subprocess.h"

namespace orchid::codegen::cpu {

namespace fs = std::filesystem;

namespace {

// Bump when the way objects are built changes without the flags showing it.
constexpr const char* kKeyScheme = "orchid-object-v1";
// How much of the compiler's error output an error message carries.
constexpr size_t kMaxErrorChars = 4000;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string truncated(const std::string& text) {
  if (text.size() <= kMaxErrorChars) return text;
  return text.substr(0, kMaxErrorChars) + "\n[... " + std::to_string(text.size() - kMaxErrorChars) +
         " more bytes]";
}

// Hashes `field` so that no two different field sequences feed the same bytes.
void add_field(Sha256& h, const std::string& field) {
  h.update(std::to_string(field.size())).update(":").update(field);
}

// The compiler's `-v` report when preprocessing nothing with `flags`: version, configuration
// and the cc1plus command line, on which -march=native appears expanded. Run from "/" so that
// no working directory enters it.
std::string query_identity(const std::string& cxx, const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {cxx};
  argv.insert(argv.end(), flags.begin(), flags.end());
  for (const char* a : {"-v", "-E", "-x", "c++", "/dev/null", "-o", "/dev/null"}) argv.push_back(a);
  SubprocessOptions options;
  options.working_dir = "/";
  options.timeout_s = 60;
  SubprocessResult r = run_subprocess(argv, options);
  ORCHID_USER_CHECK(r.ok()) << "the C++ compiler " << quoted(cxx) << " does not accept the flags "
                            << join(flags) << ":\n" << truncated(r.err);
  return r.err;
}

// A private directory inside the cache (mkdtemp: mode 0700), removed with its contents when
// this dies.
class ScratchDir {
 public:
  explicit ScratchDir(const fs::path& parent) {
    std::string pattern = (parent / "tmp-XXXXXX").string();
    bool made = ::mkdtemp(pattern.data()) != nullptr;
    int error = errno;
    ORCHID_USER_CHECK(made) << "cannot create a temporary directory in the object cache "
                            << quoted(parent.string()) << ": " << std::generic_category().message(error);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  ORCHID_USER_CHECK(out.good()) << "cannot write " << quoted(path.string());
}

void ensure_directory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  ORCHID_USER_CHECK(!ec) << "cannot create the object cache " << quoted(dir.string()) << ": " << ec.message();
}

// Keeps the source that failed next to the cache for debugging; returns its path.
fs::path keep_failed_source(const fs::path& cache_dir, const std::string& key, const std::string& source) {
  fs::path kept = cache_dir / ("failed-" + key + ".cpp");
  write_file(kept, source);
  return kept;
}

[[noreturn]] void throw_compile_failure(const std::string& what, const SubprocessResult& r,
                                        const fs::path& kept_source) {
  std::string status = r.timed_out         ? "it did not finish in time"
                       : r.term_signal != 0 ? "killed by signal " + std::to_string(r.term_signal)
                                            : "exit code " + std::to_string(r.exit_code);
  throw InternalError("the C++ compiler failed on generated code (" + what + ", " + status +
                      "); the source is kept at " + kept_source.string() + "\n" + truncated(r.err));
}

// The flags for one compile: the object must not depend on the scratch directory's name.
std::vector<std::string> per_compile_flags(const fs::path& scratch, const std::string& key) {
  return {"-ffile-prefix-map=" + scratch.string() + "=.", "-frandom-seed=" + key.substr(0, 16)};
}

}  // namespace

std::string CompilerIdentities::get(const std::string& cxx, const std::vector<std::string>& flags,
                                    const std::function<std::string()>& query) {
  std::vector<std::string> key = {cxx};
  key.insert(key.end(), flags.begin(), flags.end());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = reports_.find(key); it != reports_.end()) return it->second;
  }
  std::string report = query();  // unlocked: two threads may both query, and agree
  std::lock_guard<std::mutex> lock(mutex_);
  return reports_.emplace(std::move(key), std::move(report)).first->second;
}

fs::path default_object_cache_dir(const CacheEnvironment& env) {
  return orchid_cache_root(env, "a cache directory for compiled kernels") / "objects";
}

std::vector<std::string> base_compile_flags() {
  return {"-std=c++17",     "-O3", "-march=native", "-fPIC",        "-shared",
          "-fopenmp-simd",  "-fno-fast-math",       "-ffp-contract=fast", "-w", "-pipe"};
}

Compiler::Compiler(CompilerOptions options) : options_(std::move(options)), flags_(base_compile_flags()) {
  ORCHID_CHECK(!options_.cache_dir.empty()) << "CompilerOptions::cache_dir is not set";
  // Absolute, so that the paths handed out open the same object from any directory (and
  // dlopen never takes one for a bare library name to search for).
  options_.cache_dir = fs::absolute(options_.cache_dir);
  flags_.insert(flags_.end(), options_.extra_flags.begin(), options_.extra_flags.end());
  auto query = [&] { return query_identity(options_.cxx, flags_); };
  identity_ = options_.identities ? options_.identities->get(options_.cxx, flags_, query) : query();
}

std::string Compiler::key(const std::string& source) const {
  Sha256 h;
  add_field(h, kKeyScheme);
  add_field(h, identity_);
  add_field(h, std::to_string(flags_.size()));
  for (const std::string& f : flags_) add_field(h, f);
  add_field(h, source);
  return to_hex(h.finish());
}

CompiledObject Compiler::compile(const std::string& source) const {
  CompiledObject result;
  result.key = key(source);
  result.path = options_.cache_dir / (result.key + ".so");
  std::error_code ec;
  if (fs::exists(result.path, ec)) {
    result.cache_hit = true;
    return result;
  }
  ensure_directory(options_.cache_dir);
  ScratchDir scratch(options_.cache_dir);
  write_file(scratch.path() / "k.cpp", source);
  std::vector<std::string> argv = {options_.cxx};
  argv.insert(argv.end(), flags_.begin(), flags_.end());
  for (std::string& f : per_compile_flags(scratch.path(), result.key)) argv.push_back(std::move(f));
  for (const char* a : {"-o", "k.so", "k.cpp"}) argv.push_back(a);
  SubprocessOptions run;
  run.working_dir = scratch.path();
  run.timeout_s = options_.timeout_s;
  SubprocessResult r = run_subprocess(argv, run);
  if (!r.ok() || r.timed_out)
    throw_compile_failure("compiling", r, keep_failed_source(options_.cache_dir, result.key, source));
  // rename(2) is atomic: other processes see no object or a whole one.
  fs::rename(scratch.path() / "k.so", result.path, ec);
  ORCHID_USER_CHECK(!ec) << "cannot store " << quoted(result.path.string()) << " in the object cache: "
                         << ec.message();
  return result;
}

std::vector<CompiledObject> Compiler::compile_many(const std::vector<std::string>& sources) const {
  std::vector<CompiledObject> out(sources.size());
  parallel_for(sources.size(), options_.jobs, [&](size_t i) { out[i] = compile(sources[i]); });
  return out;
}

std::string Compiler::assembly(const std::string& source) const {
  std::vector<std::string> argv = {options_.cxx};
  for (const std::string& f : flags_)
    if (f != "-shared") argv.push_back(f);
  for (const char* a : {"-S", "-o", "-", "-x", "c++", "-"}) argv.push_back(a);
  SubprocessOptions run;
  run.working_dir = "/";
  run.timeout_s = options_.timeout_s;
  run.stdin_data = source;
  SubprocessResult r = run_subprocess(argv, run);
  if (!r.ok() || r.timed_out) {
    ensure_directory(options_.cache_dir);
    throw_compile_failure("generating assembly", r, keep_failed_source(options_.cache_dir, key(source), source));
  }
  return r.out;
}

fs::path compile_shared(const std::string& source, const CompilerOptions& options) {
  return Compiler(options).compile(source).path;
}

std::vector<fs::path> compile_many(const std::vector<std::string>& sources, const CompilerOptions& options) {
  std::vector<fs::path> paths;
  for (CompiledObject& o : Compiler(options).compile_many(sources)) paths.push_back(std::move(o.path));
  return paths;
}

std::string assembly(const std::string& source, const CompilerOptions& options) {
  return Compiler(options).assembly(source);
}

}  // namespace orchid::codegen::cpu
