// Helpers of the micro-benchmarks that time one-step artifacts through Orchid's runtime
// (gemm.cpp, conv.cpp): building and loading an artifact from a primitive graph and its
// steps, aligned caller buffers, and medians of alternating rounds.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "driver/artifact.h"
#include "driver/plan_builder.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "runtime/model.h"
#include "runtime/session.h"
#include "tile/kernel.h"

namespace orchid::bench {

namespace fs = std::filesystem;
using orchid::ir::Graph;
using orchid::ir::NodeId;
using orchid::ir::Tensor;

// A 64-byte aligned byte buffer.
class Aligned {
 public:
  explicit Aligned(size_t bytes) : p_(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64), &std::free) {}
  void* get() const { return p_.get(); }

 private:
  std::unique_ptr<void, decltype(&std::free)> p_;
};

struct Options {
  int threads = 2;
  double min_time = 0.3;
  std::string markdown;
};

using orchid::driver::StepChoice;
using orchid::driver::StepKind;

inline StepChoice step(const Graph& g, std::vector<NodeId> nodes, orchid::ir::ValueId out, StepKind kind) {
  StepChoice s;
  s.kernel = orchid::tile::Kernel{std::move(nodes), {out}};
  s.inputs = orchid::tile::kernel_inputs(g, s.kernel);
  s.kind = kind;
  return s;
}

// The artifact of g with its steps, loaded.
inline std::shared_ptr<const orchid::runtime::Model> build(const Graph& g, const std::vector<StepChoice>& steps,
                                                    const fs::path& dir, int threads) {
  orchid::driver::BuildOptions o;
  o.compiler.cache_dir = fs::temp_directory_path() / "orchid-bench-objects";
  o.cores = threads;
  orchid::driver::BuiltArtifact a = orchid::driver::build_artifact(g, steps, o);
  fs::remove_all(dir);
  orchid::driver::write_artifact(a, dir.string());
  return orchid::runtime::Model::load(dir.string());
}

inline double median_ms(const std::function<void()>& run, double min_time) {
  run();
  std::vector<double> ms;
  auto start = std::chrono::steady_clock::now();
  while (ms.size() < 5 || std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < min_time) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Times each configuration in turn for `rounds` rounds; the median of its round medians.
inline std::vector<double> rounds_of(const std::vector<std::function<void()>>& runs, double min_time, int rounds = 3) {
  std::vector<std::vector<double>> per(runs.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < runs.size(); ++i) per[i].push_back(median_ms(runs[i], min_time));
  std::vector<double> out;
  for (auto& v : per) {
    std::sort(v.begin(), v.end());
    out.push_back(v[v.size() / 2]);
  }
  return out;
}

inline std::function<void()> session_run(orchid::runtime::Session& s, const std::vector<const void*>& in, void* out) {
  return [&s, in, out] {
    std::vector<void*> outs{out};
    s.run(in, outs);
  };
}

inline std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

// Seeded random inputs of g in 64-byte aligned buffers (the runtime binds aligned caller
// buffers in place; it copies unaligned ones into its arena), and pointers to them.
struct AlignedInputs {
  std::vector<Aligned> buffers;
  std::vector<const void*> ptrs;
};
inline AlignedInputs aligned_inputs(const Graph& g, uint64_t seed) {
  AlignedInputs a;
  for (const Tensor& t : orchid::interp::random_inputs(g, seed)) {
    a.buffers.emplace_back(t.bytes().size());
    std::memcpy(a.buffers.back().get(), t.data(), t.bytes().size());
    a.ptrs.push_back(a.buffers.back().get());
  }
  return a;
}

// Prints a benchmark's report and writes it to --markdown FILE where given.
inline void publish(const std::string& text, const Options& opt) {
  std::printf("%s", text.c_str());
  if (!opt.markdown.empty()) std::ofstream(opt.markdown) << text;
}

}  // namespace orchid::bench
