// fp32 GEMM peak through oneDNN's matmul primitive (the library Orchid offloads CPU linear
// primitives to), on the OpenMP pool that oneDNN shares with Orchid's kernels.
#include <omp.h>

#include <algorithm>

#include <oneapi/dnnl/dnnl.hpp>

#include "support/error.h"
#include "target/probe.h"
#include "target/probe_internal.h"

namespace orchid::target {

namespace {

// Sets the calling thread's OpenMP team size (which oneDNN uses) for its lifetime.
class OmpThreads {
 public:
  explicit OmpThreads(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~OmpThreads() { omp_set_num_threads(saved_); }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int saved_;
};

void fill(dnnl::memory& m, int64_t count, float scale) {
  float* p = static_cast<float*>(m.get_data_handle());
  for (int64_t i = 0; i < count; ++i) p[i] = scale * float(i % 17 - 8);  // small, exact values
}

}  // namespace

double measure_gemm_gflops(int threads, int64_t n, int repetitions, double min_seconds) {
  ORCHID_CHECK(n >= 1 && threads >= 1) << "gemm n=" << n << " threads=" << threads;
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  OmpThreads omp_threads(threads);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::memory::desc md({n, n}, dt::f32, tag::ab);
  dnnl::matmul matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), engine));
  dnnl::memory a(md, engine), b(md, engine), c(md, engine);
  fill(a, n * n, 0.25f), fill(b, n * n, 0.5f);
  auto run = [&](int64_t passes) {
    double t0 = detail::now_seconds();
    for (int64_t p = 0; p < passes; ++p)
      matmul.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    stream.wait();
    return detail::now_seconds() - t0;
  };
  double seconds = detail::best_seconds_per_pass(run, min_seconds, repetitions);
  return 2.0 * double(n) * double(n) * double(n) / seconds / 1e9;
}

}  // namespace orchid::target
