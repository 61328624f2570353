// `orchid compile model.onnx -o out/`: the whole compiler (driver/pipeline.cpp), writing a
// verified artifact directory.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "cache_root.h"
#include "commands.h"
#include "driver/host_options.h"
#include "driver/pipeline.h"
#include "model_options.h"
#include "support/cache_paths.h"
#include "support/error.h"
#include "target/host.h"
#include "target/presets.h"

namespace orchid::cli {

namespace {

struct CompileFlags {
  ModelOptions model;
  std::string out;
  std::string strategy;  // empty: orchestrate::default_strategy
  std::string target = "cpu";
  std::string cache_dir;
  std::string db;
  bool measure = true;
  bool layouts = true;
  bool rewrite = true;
  bool gpu_libraries = true;
  uint64_t seed = 1;
  double tolerance = std::numeric_limits<double>::quiet_NaN();  // NaN: by precision
  std::string precision = "fp32";
  std::string gpu;  // a CUDA preset; empty: the GPU present, or h100
  double measure_seconds = 0.2;
  int64_t flush_bytes = 0;
  double tune_minutes = 0;  // 0: no tuning
  int tune_budget = driver::TuneOptions{}.budget;
  bool superopt = false;
  double superopt_seconds = 300;
  bool flush_denormals = false;
};

std::vector<std::string> precision_names() {
  std::vector<std::string> out;
  for (runtime::PlanPrecision p : runtime::kPlanPrecisions) out.emplace_back(runtime::plan_precision_name(p));
  return out;
}

std::filesystem::path default_cache_root() { return cli_cache_root("--cache-dir"); }

int compile(const CompileFlags& f) {
  bool cuda = f.target == "cuda";
  ORCHID_USER_CHECK(f.gpu.empty() || cuda) << "--gpu " << f.gpu << " is for --target cuda";
  orchestrate::Strategy strategy = f.strategy.empty() ? orchestrate::default_strategy(cuda, f.measure)
                                                      : *orchestrate::parse_strategy(f.strategy);
  driver::CompileOptions o = driver::host_compile_options(f.model.file, f.out, cuda, strategy,
                                                          f.rewrite, default_cache_root(), f.gpu);
  o.import = import_options(f.model);
  if (!f.cache_dir.empty()) o.build.compiler.cache_dir = f.cache_dir;
  o.build.layouts = f.layouts;
  o.gpu_libraries = f.gpu_libraries;
  o.verify_seed = f.seed;
  ORCHID_USER_CHECK(f.precision == "fp32" || cuda) << "--precision " << f.precision << " is for --target cuda";
  o.build.precision = *runtime::parse_plan_precision(f.precision);
  ORCHID_USER_CHECK(!f.flush_denormals || !cuda) << "--flush-denormals is for CPU plans; it does not take --target cuda";
  o.build.flush_denormals = f.flush_denormals;
  if (!std::isnan(f.tolerance)) o.tolerance = f.tolerance;
  o.measure_seconds = f.measure_seconds;
  o.measure.flush_bytes = f.flush_bytes;
  if (f.tune_minutes > 0) {
    ORCHID_USER_CHECK(!cuda) << "--tune-minutes tunes CPU kernels; --target cuda schedules are not tuned yet";
    ORCHID_USER_CHECK(f.measure) << "--tune-minutes measures kernels: it cannot go with --no-measure";
    // The search is ranked by the analytic model, which needs the host's measured rates.
    if (o.target.peak_gflops_f32 <= 0)
      o.target = target::host_target({}, (default_cache_root() / "target.json").string()).target;
    o.tune.minutes = f.tune_minutes;
    o.tune.kernel.budget = f.tune_budget;
    o.progress = [](const std::string& line) { std::fprintf(stderr, "orchid: %s\n", for_terminal(line).c_str()); };
  }
  if (f.superopt) {
    ORCHID_USER_CHECK(!cuda) << "--superopt makes CPU kernels; it does not take --target cuda";
    ORCHID_USER_CHECK(f.measure) << "--superopt measures μGraphs against compiled kernels: it cannot go with --no-measure";
    o.superopt.enabled = true;
    o.superopt.budget_s = f.superopt_seconds;
  }
  std::string exe = f.measure && !cuda ? std::filesystem::read_symlink("/proc/self/exe").string() : std::string();
  driver::CompileResult r =
      driver::compile_measured(o, exe, f.db.empty() ? default_cache_root() / "tuning.db" : std::filesystem::path(f.db),
                               [](const std::string& note) {
                                 std::fprintf(stderr, "orchid: warning: %s\n", for_terminal(note).c_str());
                               });
  std::printf("wrote %s\n%s", r.out_dir.c_str(), r.report_summary.c_str());
  if (r.verified) std::printf("verification (seed %llu):\n%s", static_cast<unsigned long long>(f.seed), r.verify.summary().c_str());
  return 0;
}

}  // namespace

Command add_compile(CLI::App& app) {
  auto f = std::make_shared<CompileFlags>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile an ONNX model into a verified artifact directory");
  add_model_options(cmd, f->model);
  cmd->add_option("-o,--output", f->out, "the artifact directory to write")->required();
  cmd->add_option("--orchestrate", f->strategy,
                  "optimal (the BLP over every convex kernel, measured costs; the default on the CPU), greedy "
                  "(fusion rules; the default for --target cuda and with --no-measure), per-op or primitive")
      ->check(CLI::IsMember({"primitive", "per-op", "greedy", "optimal"}));
  cmd->add_option("--target", f->target,
                  "cpu (the host; default) or cuda (NVIDIA GPUs: CUDA code for sm_80 and sm_90a, verified where a GPU is)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--cache-dir", f->cache_dir, "compiled-kernel cache (default ~/.cache/orchid/objects)");
  cmd->add_option("--db", f->db, "tuning database of measured times (default ~/.cache/orchid/tuning.db)");
  cmd->add_flag("!--no-measure", f->measure, "do not time oneDNN against generated code; prefer oneDNN");
  cmd->add_flag("!--plain-layouts", f->layouts,
                "keep every buffer dense row-major (no nChw8c, nChw16c or nhwc activations between oneDNN convolutions, no weights "
                "stored as GEMM panels)");
  cmd->add_flag("!--no-rewrite", f->rewrite,
                "skip the rewrite search (algebraic rewrites chosen by their orchestrated cost)");
  cmd->add_flag("!--no-gpu-libraries", f->gpu_libraries,
                "--target cuda: generate every step, large matmuls too (by default they call cuBLASLt)");
  cmd->add_option("--seed", f->seed, "seed of the verification inputs (default 1)");
  cmd->add_option("--tolerance", f->tolerance,
                  "largest relative L2 error of an f32 output (default 1e-4; with --precision tf32 or fp16, 1e-2; bf16, 5e-2)");
  cmd->add_flag("--flush-denormals", f->flush_denormals,
                "CPU: run the plan with subnormal floats read and written as zero (FTZ and DAZ), as OpenVINO's denormals "
                "optimization does: products of subnormals (masked attention probabilities) are then no longer many times "
                "slower; off by default (IEEE gradual underflow)");
  cmd->add_option("--precision", f->precision,
                  "--target cuda: fp32 (default); tf32 (cuBLASLt and cuDNN steps may use TF32 tensor cores); fp16 or bf16 "
                  "(the model's f32 values stored in that dtype, products on tensor cores with f32 accumulation, "
                  "arithmetic in f32; inputs and outputs stay f32)")
      ->check(CLI::IsMember(precision_names()));
  std::vector<std::string> presets;
  std::string listed;
  for (std::string_view p : target::cuda_preset_names()) {
    presets.emplace_back(p);
    listed += (listed.empty() ? "" : ", ") + presets.back();
  }
  cmd->add_option("--gpu", f->gpu,
                  "--target cuda: the GPU the schedules are for, a preset (" + listed +
                      "); default: the GPU present, its bandwidth and f32 rate measured, else h100")
      ->transform(CLI::IsMember(presets, CLI::ignore_case));
  cmd->add_option("--measure-time", f->measure_seconds, "seconds spent timing steps for the report (0: none)");
  cmd->add_option("--flush-bytes", f->flush_bytes,
                  "kernels and plans timed while compiling: before each run, this many bytes written on each thread "
                  "(not timed), so that a kernel timed alone finds its inputs where a whole run leaves them (default 0)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--tune-minutes", f->tune_minutes,
                  "tune the schedules of generated kernels for up to this many minutes, the time going where "
                  "it shortens the model most; decisions are kept in the tuning database and reused (default "
                  "0: no tuning)")
      ->check(CLI::Range(0.0, 10000.0));
  cmd->add_option("--tune-budget", f->tune_budget,
                  "--tune-minutes: kernel timings per kernel (the explored points, the descent's and the "
                  "confirmations'; default 160)")
      ->check(CLI::Range(5, 100000));
  cmd->add_flag("--superopt", f->superopt,
                "search μGraph kernels (Mirage) for the model's LAX subprograms on small copies, and use those that "
                "measure faster than the kernels they replace; searches are cached in the tuning database");
  cmd->add_option("--superopt-seconds", f->superopt_seconds,
                  "--superopt: seconds of search in all, shared among the subprograms (default 300)")
      ->check(CLI::Range(1.0, 100000.0));
  return {cmd, [f] { return compile(*f); }};
}

}  // namespace orchid::cli
