// The run-time compiler: objects load and run; the cache is keyed by source, flags and
// compiler and hits without running the compiler; failures carry the compiler's message;
// compile_many keeps order; objects are byte-identical wherever they were built.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "codegen/cpu/compiler.h"
#include "support/error.h"
#include "testlib/errors.h"
#include "testlib/temp_dir.h"

namespace orchid::codegen::cpu {
namespace {

namespace fs = std::filesystem;

const char* kTimesTwoPlusOne = "extern \"C\" int f(int x) { return 2 * x + 1; }\n";

CompilerOptions options_in(const testlib::TempDir& dir, const std::string& sub = "objects") {
  CompilerOptions o;
  o.cache_dir = dir.file(sub);
  return o;
}

// Calls `extern "C" int f(int)` from the object.
int call_f(const fs::path& so, int x) {
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (h == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  auto f = reinterpret_cast<int (*)(int)>(dlsym(h, "f"));
  if (f == nullptr) throw std::runtime_error("no f in " + so.string());
  int y = f(x);
  dlclose(h);
  return y;
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Options (options_in) whose compiler counts its runs in `count_file`, then runs g++.
CompilerOptions counting_options(const testlib::TempDir& dir, const std::string& count_file) {
  CompilerOptions o = options_in(dir);
  o.cxx = dir.file("counting-g++", "#!/bin/sh\necho run >> '" + count_file + "'\nexec g++ \"$@\"\n");
  fs::permissions(o.cxx, fs::perms::owner_all);
  return o;
}

int64_t line_count(const std::string& path) {
  std::ifstream in(path);
  int64_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(Compiler, CompilesASharedObjectThatLoadsAndRuns) {
  testlib::TempDir dir("orchid_compiler");
  fs::path so = compile_shared(kTimesTwoPlusOne, options_in(dir));
  EXPECT_EQ(so.parent_path(), fs::path(dir.file("objects")));
  EXPECT_EQ(so.extension(), ".so");
  EXPECT_EQ(call_f(so, 20), 41);
  // Nothing but the object is left in the cache: the scratch directory is gone.
  std::vector<fs::path> entries(fs::directory_iterator(dir.file("objects")), fs::directory_iterator());
  EXPECT_EQ(entries, std::vector<fs::path>{so});
}

TEST(Compiler, TheSecondCompileOfASourceIsACacheHitThatRunsNoCompiler) {
  testlib::TempDir dir("orchid_compiler");
  std::string count = dir.file("runs.txt");
  CompilerOptions o = counting_options(dir, count);
  Compiler c(o);
  EXPECT_EQ(line_count(count), 1);  // the identity query
  CompiledObject first = c.compile(kTimesTwoPlusOne);
  EXPECT_FALSE(first.cache_hit);
  EXPECT_EQ(line_count(count), 2);
  auto mtime = fs::last_write_time(first.path);
  CompiledObject second = c.compile(kTimesTwoPlusOne);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.path, first.path);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(line_count(count), 2);
  EXPECT_EQ(fs::last_write_time(second.path), mtime);
  EXPECT_EQ(call_f(second.path, 1), 3);
}

TEST(Compiler, CopiesOfOptionsQueryEachCompilerAndFlagListOnce) {
  testlib::TempDir dir("orchid_compiler");
  std::string count = dir.file("runs.txt");
  CompilerOptions o = counting_options(dir, count);
  Compiler first(o);
  CompilerOptions copy = o;
  Compiler second(copy);
  EXPECT_EQ(line_count(count), 1);
  EXPECT_EQ(second.identity(), first.identity());
  EXPECT_EQ(second.key(kTimesTwoPlusOne), first.key(kTimesTwoPlusOne));
  copy.extra_flags = {"-DORCHID_TEST=1"};  // another flag list: its own query
  Compiler defined(copy);
  EXPECT_EQ(line_count(count), 2);
  Compiler(copy).compile(kTimesTwoPlusOne);
  EXPECT_EQ(line_count(count), 3);  // the compile itself
  copy.identities = std::make_shared<CompilerIdentities>();
  Compiler fresh(copy);
  EXPECT_EQ(line_count(count), 4);
  EXPECT_EQ(fresh.identity(), defined.identity());
}

TEST(Compiler, KeysDependOnSourceFlagsAndCompiler) {
  testlib::TempDir dir("orchid_compiler");
  Compiler plain(options_in(dir));
  EXPECT_EQ(plain.key(kTimesTwoPlusOne).size(), 64u);
  EXPECT_EQ(plain.key(kTimesTwoPlusOne), Compiler(options_in(dir)).key(kTimesTwoPlusOne));
  EXPECT_NE(plain.key(kTimesTwoPlusOne), plain.key(std::string(kTimesTwoPlusOne) + " "));
  CompilerOptions with_define = options_in(dir);
  with_define.extra_flags = {"-DORCHID_TEST=1"};
  Compiler defined(with_define);
  EXPECT_NE(defined.key(kTimesTwoPlusOne), plain.key(kTimesTwoPlusOne));
  EXPECT_NE(defined.compile(kTimesTwoPlusOne).path, plain.compile(kTimesTwoPlusOne).path);
  // The cache directory is where objects go, not what they are.
  EXPECT_EQ(Compiler(options_in(dir, "elsewhere")).key(kTimesTwoPlusOne), plain.key(kTimesTwoPlusOne));
  // The flag list is base flags then extra flags; the identity is the compiler's report.
  std::vector<std::string> want = base_compile_flags();
  want.push_back("-DORCHID_TEST=1");
  EXPECT_EQ(defined.flags(), want);
  EXPECT_NE(defined.identity().find("version"), std::string::npos) << defined.identity();
}

TEST(Compiler, ASyntaxErrorIsAnInternalErrorWithTheCompilersMessage) {
  testlib::TempDir dir("orchid_compiler");
  std::string bad = "extern \"C\" int f(int x) { return x +; }\n";
  CompilerOptions o = options_in(dir);
  std::string msg;
  try {
    compile_shared(bad, o);
  } catch (const InternalError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("the C++ compiler failed on generated code (compiling, exit code 1)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("error: expected primary-expression"), std::string::npos) << msg;
  fs::path kept = dir.file("objects") + "/failed-" + Compiler(o).key(bad) + ".cpp";
  EXPECT_NE(msg.find("the source is kept at " + kept.string()), std::string::npos) << msg;
  EXPECT_EQ(read_bytes(kept), bad);
}

TEST(Compiler, ACompilerPastItsTimeoutIsAnInternalError) {
  testlib::TempDir dir("orchid_compiler");
  CompilerOptions o = options_in(dir);
  o.timeout_s = 0.001;  // no compile is that fast
  std::string msg;
  try {
    Compiler(o).compile(kTimesTwoPlusOne);
  } catch (const InternalError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("it did not finish in time"), std::string::npos) << msg;
}

TEST(Compiler, AMissingCompilerIsAUserErrorNamingIt) {
  testlib::TempDir dir("orchid_compiler");
  CompilerOptions o = options_in(dir);
  o.cxx = "orchid-no-such-compiler";
  std::string msg = testlib::error_of([&] { Compiler c(o); });
  EXPECT_NE(msg.find("'orchid-no-such-compiler'"), std::string::npos) << msg;
  o.cxx = "g++";
  o.extra_flags = {"-fno-such-flag-for-orchid"};
  msg = testlib::error_of([&] { Compiler c(o); });
  EXPECT_NE(msg.find("the C++ compiler 'g++' does not accept the flags"), std::string::npos) << msg;
  EXPECT_NE(msg.find("-fno-such-flag-for-orchid"), std::string::npos) << msg;
}

TEST(Compiler, CompileManyReturnsObjectsInTheOrderOfTheSources) {
  testlib::TempDir dir("orchid_compiler");
  std::vector<std::string> sources;
  for (int i = 0; i < 4; ++i)
    sources.push_back("extern \"C\" int f(int x) { return x * 100 + " + std::to_string(i) + "; }\n");
  CompilerOptions o = options_in(dir);
  o.jobs = 3;
  std::vector<fs::path> paths = compile_many(sources, o);
  ASSERT_EQ(paths.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(call_f(paths[size_t(i)], 1), 100 + i) << paths[size_t(i)];
  std::vector<CompiledObject> again = Compiler(o).compile_many(sources);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(again[size_t(i)].cache_hit);
    EXPECT_EQ(again[size_t(i)].path, paths[size_t(i)]);
  }
  EXPECT_TRUE(compile_many({}, o).empty());
}

TEST(Compiler, CompileManyRethrowsTheFirstFailureAfterAllFinish) {
  testlib::TempDir dir("orchid_compiler");
  std::vector<std::string> sources = {kTimesTwoPlusOne, "int broken(", "extern \"C\" int g() { return 7; }\n"};
  Compiler c(options_in(dir));
  EXPECT_THROW(c.compile_many(sources), InternalError);
  // The good sources were compiled all the same.
  EXPECT_TRUE(c.compile(sources[0]).cache_hit);
  EXPECT_TRUE(c.compile(sources[2]).cache_hit);
}

TEST(Compiler, ObjectsAreByteIdenticalWhereverTheyWereBuilt) {
  testlib::TempDir dir("orchid_compiler");
  CompiledObject a = Compiler(options_in(dir, "cache-a")).compile(kTimesTwoPlusOne);
  CompiledObject b = Compiler(options_in(dir, "cache-b/nested")).compile(kTimesTwoPlusOne);
  EXPECT_FALSE(a.cache_hit);
  EXPECT_FALSE(b.cache_hit);
  EXPECT_EQ(a.key, b.key);
  std::string bytes = read_bytes(a.path);
  EXPECT_FALSE(bytes.empty());
  EXPECT_TRUE(bytes == read_bytes(b.path)) << a.path << " and " << b.path << " differ";
  EXPECT_EQ(bytes.find(dir.str()), std::string::npos) << "the object names its build directory";
}

TEST(Compiler, ConcurrentCompilesOfOneSourceBothSucceed) {
  testlib::TempDir dir("orchid_compiler");
  Compiler c(options_in(dir));
  CompiledObject a, b;
  std::thread other([&] { a = c.compile(kTimesTwoPlusOne); });
  b = c.compile(kTimesTwoPlusOne);
  other.join();
  EXPECT_EQ(a.path, b.path);
  EXPECT_EQ(call_f(a.path, 2), 5);
}

TEST(Compiler, AssemblyIsTheCodeOfTheObject) {
  testlib::TempDir dir("orchid_compiler");
  Compiler c(options_in(dir));
  std::string text = c.assembly("extern \"C\" float fused(float a, float b, float c) { return a * b + c; }\n");
  EXPECT_NE(text.find("\nfused:"), std::string::npos) << text;
  // -ffp-contract=fast: a*b+c becomes one fused multiply-add where the machine has one.
  if (c.identity().find(" -mfma ") != std::string::npos) {
    EXPECT_NE(text.find("vfmadd"), std::string::npos) << text;
  }
  // Nothing is written for assembly.
  EXPECT_FALSE(fs::exists(dir.file("objects")));
  EXPECT_THROW(c.assembly("int broken("), InternalError);
}

TEST(Compiler, DefaultCacheDirIsUnderTheUsersCache) {
  EXPECT_EQ(default_object_cache_dir({"/home/u", ""}), "/home/u/.cache/orchid/objects");
  EXPECT_EQ(default_object_cache_dir({"/home/u", "/xdg"}), "/xdg/orchid/objects");
}

}  // namespace
}  // namespace orchid::codegen::cpu
