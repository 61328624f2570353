// Compiling generated C++ into shared objects with the system compiler (g++; TOOLCHAIN.md,
// "Run-time compilation"), through a content-addressed cache of objects.
//
// Sources are self-contained: they include at most <stdint.h> (every standard header costs
// 50–90 ms of compile time). An object is named by its key, the SHA-256 of
//   - the compiler's identity: its `-v` report for the full flag list (version, configuration,
//     and what -march=native expands to on this machine, so a cache directory shared between
//     machines never hands one machine's instructions to another),
//   - the full flag list, and
//   - the source,
// and lives at cache_dir/<key>.so. A key that is there is a cache hit: no compiler runs.
//
// Flags (base_compile_flags()):
//   -std=c++17 -O3 -march=native -fPIC -shared   kernels for this machine, loadable by dlopen
//   -fopenmp-simd                   honours `#pragma omp simd` without linking libgomp (kernels
//                                   have no threads: the runtime owns them)
//   -fno-fast-math                  IEEE semantics: NaN, infinities, signed zeros, no
//                                   reassociation (DESIGN.md, "Numerics")
//   -ffp-contract=fast              a*b+c may become one FMA (one rounding instead of two).
//                                   GCC's default for C++ already, stated so a change of
//                                   default or compiler keeps it; results are compared with
//                                   tolerances, and FMA is what makes matmul-like loops fast
//   -w -pipe                        no warnings about generated code; no temporary files
// -fno-math-errno is deliberately absent: it lets GCC vectorize sqrt and inline some libm
// calls, which can change which implementation computes a value. Add it through extra_flags
// where that has been checked. Per compile, outside the key, -ffile-prefix-map=<tmp>=. and
// -frandom-seed=<source hash> make the object independent of the temporary directory it
// was built in: the same key gives a byte-identical object (DESIGN.md, "Determinism").
//
// Concurrency: an object is compiled in a private temporary directory inside cache_dir
// (mode 0700) and renamed into place, so concurrent processes sharing a cache never see a
// half-written object; two that compile the same key at once both succeed.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "support/cache_paths.h"

namespace orchid::codegen::cpu {

// The `-v` reports of compilers already queried, by compiler and flag list. Options share one
// (copies of options do), so that a compile that builds many Compilers from them queries each
// compiler and flag list once: a query runs the compiler (about 0.1 s). Safe to use from
// several threads.
class CompilerIdentities {
 public:
  // The report for (cxx, flags): remembered, or `query()`'s, then remembered.
  std::string get(const std::string& cxx, const std::vector<std::string>& flags,
                  const std::function<std::string()>& query);

 private:
  std::mutex mutex_;
  std::map<std::vector<std::string>, std::string> reports_;  // by cxx then flags
};

struct CompilerOptions {
  std::string cxx = "g++";               // the compiler: a name searched on PATH, or a path
  std::vector<std::string> extra_flags;  // after the base flags (e.g. codegen_flags())
  std::filesystem::path cache_dir;       // the object cache; must be set (created if missing;
                                         // a relative path is taken from the current directory)
  int jobs = 2;                          // compile_many's concurrent compiler processes
  double timeout_s = 300;                // wall-clock limit on one compiler process
  // Shared by copies; reset it to query again (a compiler changed on disk meanwhile).
  std::shared_ptr<CompilerIdentities> identities = std::make_shared<CompilerIdentities>();
};

// The CLI's default cache_dir: <orchid_cache_root>/objects, i.e. ~/.cache/orchid/objects or
// $XDG_CACHE_HOME/orchid/objects. Library code never calls this; it takes options.
std::filesystem::path default_object_cache_dir(const CacheEnvironment& env);

// The flags every object is compiled with (see above), before extra_flags.
std::vector<std::string> base_compile_flags();

struct CompiledObject {
  std::filesystem::path path;  // cache_dir/<key>.so
  std::string key;             // 64 hex digits
  bool cache_hit = false;      // it was in the cache: no compiler ran
};

// A compiler with fixed options and its identity, queried at construction (one short compiler
// run) unless the options' identities have it. A value: copy it freely, use it from several threads at once.
//
// Errors: a compiler that cannot be run, or rejects the flags, is a UserError naming it (the
// machine lacks g++ or a flag is wrong); a cache directory that cannot be created or written
// is a UserError naming it. Generated code that fails to compile, or a compiler that runs past
// the timeout, is an InternalError with the compiler's (truncated) error output and the path
// of a kept copy of the source, cache_dir/failed-<key>.cpp.
class Compiler {
 public:
  explicit Compiler(CompilerOptions options);

  const CompilerOptions& options() const { return options_; }
  // The compiler's `-v` report for the flags (what goes into every key).
  const std::string& identity() const { return identity_; }
  // base_compile_flags() then options().extra_flags.
  const std::vector<std::string>& flags() const { return flags_; }
  std::string key(const std::string& source) const;

  CompiledObject compile(const std::string& source) const;
  // Up to options().jobs compilers at once; results in the order of `sources`. The first
  // error (in that order) is rethrown after every compile has finished.
  std::vector<CompiledObject> compile_many(const std::vector<std::string>& sources) const;
  // The assembly the compiler generates for `source` with the same flags (-S; -shared does
  // not apply; -fPIC stays, as the code in the object is position-independent). Not cached.
  std::string assembly(const std::string& source) const;

 private:
  CompilerOptions options_;
  std::vector<std::string> flags_;
  std::string identity_;
};

// Shorthands that build a Compiler per call (an identity query where the options' identities
// lack it).
std::filesystem::path compile_shared(const std::string& source, const CompilerOptions& options);
std::vector<std::filesystem::path> compile_many(const std::vector<std::string>& sources,
                                                const CompilerOptions& options);
std::string assembly(const std::string& source, const CompilerOptions& options);

}  // namespace orchid::codegen::cpu
