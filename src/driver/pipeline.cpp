// The table of contents of the compiler: each stage is one call, in order.
#include "driver/pipeline.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "driver/cuda_plan_builder.h"
#include "driver/implement.h"
#include "driver/memory_check.h"
#include "driver/optimal_costs.h"
#include "driver/report.h"
#include "fission/fission.h"
#include "ir/dce.h"
#include "ir/verifier.h"
#include "rewrite/fold_constants.h"
#include "rewrite/fold_conv_affine.h"
#include "rewrite/fold_transposes.h"
#include "rewrite/inline_scalars.h"
#include "rewrite/search.h"
#include "rewrite/store_precision.h"
#include "target/presets.h"
#include "support/error.h"

namespace orchid::driver {

namespace {

class Stages {
 public:
  explicit Stages(std::vector<StageTime> earlier) : times_(std::move(earlier)) {}
  template <class F>
  auto run(const std::string& stage, F&& f) {
    auto start = std::chrono::steady_clock::now();
    auto result = f();
    times_.push_back({stage, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
    return result;
  }
  const std::vector<StageTime>& times() const { return times_; }

 private:
  std::vector<StageTime> times_;
};

// The staging directory is removed when anything fails before it is published (after, it is
// gone anyway).
struct RemovedUnlessPublished {
  std::string dir;
  ~RemovedUnlessPublished() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

// The rewrite search's graph, or none where it rewrote nothing; its report lines in `notes`.
std::optional<ir::Graph> search_rewrites(const ir::Graph& g, const CompileOptions& o, std::vector<std::string>* notes) {
  const target::Target& t = o.target;
  bool priced = t.peak_gflops_f32 > 0 && !t.levels.empty() && target::main_memory(t).bandwidth_gbs > 0;
  if (!priced) {
    notes->push_back("not run: the target has no measured peak and main-memory bandwidth");
    return std::nullopt;
  }
  rewrite::RewriteResult r = rewrite::rewrite_graph(g, rewrite::orchestrated_cost(t, o.strategy));
  *notes = r.summary();
  if (r.applied.empty()) return std::nullopt;
  return clean_up(r.graph);
}

// Stage 6 on the CPU (see compile_graph).
std::vector<StepChoice> implement_on_cpu(const ir::Graph& g, const PlacedKernels& placed, const BuildOptions& build,
                                         const MeasureOptions& measure, std::vector<std::string>* choices) {
  std::vector<std::vector<StepChoice>> each = implement_placed(g, placed);
  std::vector<StepChoice> chosen = joined(each);
  choose_by_measuring(g, chosen, build, measure, choices);
  std::vector<StepChoice> before = choose_whole_over_split(g, placed.kernels, each, chosen, build, measure, choices);
  check_choices_on_plans(g, before, chosen, build, measure, choices);
  return chosen;
}

// Stage 6b (CPU, optimal, measuring): the orchestration compared plans of implement()'s steps;
// the artifact's steps are chosen by measuring after (implement_on_cpu), and may run otherwise.
// Where the plan is not greedy's, greedy's plan is implemented the same way and the two are
// timed whole (Welch's test, as in the orchestration): greedy's replaces the plan where the
// plan is not faster with significance. On efficientvit_block the orchestration timed the
// BLP's plan at 4.49 ms against greedy's 4.15, and the two artifacts ran 4.87 and 4.91 ms.
// Returns whether greedy's plan was taken.
bool keep_plan_if_faster_implemented(const ir::Graph& g, const CompileOptions& o, PlacedKernels& placed,
                                     std::vector<StepChoice>& steps, CompileResult& result) {
  std::vector<tile::Kernel> greedy = orchestrate::orchestrate(g, orchestrate::Strategy::Greedy);
  if (same_plan(placed.kernels, greedy)) return false;
  PlacedKernels theirs{greedy, std::vector<std::shared_ptr<const UGraphStep>>(greedy.size()), 0};
  std::vector<std::string> their_choices;
  std::vector<StepChoice> their_steps = implement_on_cpu(g, theirs, o.build, o.measure, &their_choices);
  ScheduleComparison whole = compare_with_greedy(g, steps, their_steps, o.build, o.measure);
  bool theirs_kept = whole.failure.empty() && !whole.a_faster;
  result.orchestration.push_back("the plans as implemented (steps chosen by measuring), whole" +
                                 (whole.rounds > 0 ? ", " + std::to_string(whole.rounds) + " alternating rounds" : "") +
                                 ", Welch's test: " + comparison_line(whole, "optimal's", "greedy's"));
  if (!theirs_kept) return false;
  placed = std::move(theirs);
  steps = std::move(their_steps);
  result.choices = std::move(their_choices);
  return true;
}

// `placed`, `steps` and `tuning` are the plan's (its steps as implemented, and as tuned) and
// replaced where it changes; tuning.seconds accumulates.
void solve_again_with_tuned(const ir::Graph& g, const std::vector<UGraphSite>& sites, const CompileOptions& o,
                            const MeasureOptions& tuned, PlacedKernels& placed, std::vector<StepChoice>& steps,
                            PlanTuning& tuning, CompileResult& result) {
  for (int round = 0; round < 3; ++round) {
    OptimalPlan p = orchestrate_measured(g, o.target, o.build, tuned, 12, sites);
    if (same_plan(p.kernels, placed.kernels)) {
      result.orchestration.push_back("solved again with the tuned kernels' times: the same plan");
      return;
    }
    result.orchestration.push_back("solved again with the tuned kernels' times: another plan, of " +
                                   std::to_string(p.kernels.size()) + " kernels (the notes above are the first solve's)");
    placed = mark_ugraph_kernels(p.kernels, p.greedy_kept ? std::vector<UGraphSite>{} : sites);
    steps = implement_on_cpu(g, placed, o.build, o.measure, &result.choices);
    // As stage 6b: the new plan as implemented against greedy's; where greedy's is taken, it
    // is tuned and the loop ends (the BLP would propose the same plan again).
    bool greedy_taken = keep_plan_if_faster_implemented(g, o, placed, steps, result);
    PlanTuneOptions rest = o.tune;
    rest.minutes = std::max(0.0, o.tune.minutes - tuning.seconds / 60);
    result.tuning.push_back("the plan solved again:");
    double seconds = tuning.seconds;
    tuning = tune_steps(g, steps, o.target, o.build, tuned, rest, o.progress, &result.tuning);
    tuning.seconds += seconds;
    if (greedy_taken) return;
  }
  result.orchestration.push_back("solved again three times with the tuned kernels' times; the last plan kept");
}

}  // namespace

ir::Graph clean_up(const ir::Graph& g) {
  ir::Graph out = g;
  rewrite::fold_constants(out);
  rewrite::inline_scalar_constants(out);
  rewrite::fold_transposes_into_matmuls(out);
  rewrite::fold_conv_affine(out);
  out = ir::eliminate_dead(out);
  ir::verify_or_throw(out, "after clean-up");
  return out;
}

CompileResult compile_onnx(const CompileOptions& o) {
  auto start = std::chrono::steady_clock::now();
  // 1. Import and fission: the model as a primitive graph (the reference of everything after).
  ir::Graph reference = fission::fission(frontend::load_onnx(o.model_path, o.import));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return compile_graph(reference, o, {{"import + fission", seconds}});
}

CompileResult compile_graph(const ir::Graph& reference, const CompileOptions& o, std::vector<StageTime> earlier) {
  Stages stages(std::move(earlier));
  CompileResult result;
  result.out_dir = directory_name(o.out_dir);
  check_publishable(result.out_dir);  // refuse before the work, not after it
  bool cuda = o.device == runtime::PlanDevice::Cuda;
  ORCHID_USER_CHECK(!cuda || o.strategy != orchestrate::Strategy::Optimal)
      << "--orchestrate optimal measures kernels on the CPU; for --target cuda use greedy";
  ORCHID_USER_CHECK(!cuda || !o.superopt.enabled) << "--superopt makes CPU kernels; it does not take --target cuda";
  ORCHID_USER_CHECK(cuda || o.build.precision == runtime::PlanPrecision::Fp32)
      << "precision " << runtime::plan_precision_name(o.build.precision) << " is for target cuda";
  // The artifact is verified where this machine can run it: by the reference interpreter,
  // whose values must then fit in this machine's memory, as the artifact's must anyway.
  std::string no_gpu;
  const bool runnable = cuda ? cuda_device_present(&no_gpu) : o.host_target;
  check_memory_fits(reference, o.model_path, runnable ? Evaluator::Interpreter : Evaluator::Artifact,
                    o.memory_limit_bytes);
  // 2. Clean-ups: weights' own primitives folded, scalar constants inlined, transposes read by
  //    matmuls folded into their trans flags, BatchNorm folded into Conv, dead code removed.
  ir::Graph g = stages.run("clean-up", [&] { return clean_up(reference); });
  // 3. Rewriting (Korch §3): rules applied in windows of the graph, each window's variants
  //    priced by the kernels this compile's strategy makes of them, on roofline costs; the
  //    cheapest kept where it gains, once the finite-field verifier and the f32 differential
  //    test accept it.
  // The graph without its rewrites is kept only where the optimal strategy measures both.
  std::optional<ir::Graph> unrewritten;
  if (o.rewrite)
    if (std::optional<ir::Graph> r = stages.run("rewrite", [&] { return search_rewrites(g, o, &result.rewrites); })) {
      if (o.strategy == orchestrate::Strategy::Optimal) unrewritten = std::move(g);
      g = std::move(*r);
    }
  // 3b. Precision (cuda, --precision fp16|bf16): the f32 values stored in 16 bits, arithmetic
  //     and accumulation kept in f32, inputs and outputs as they were.
  if (std::optional<ir::DType> half = runtime::storage_dtype(o.build.precision))
    g = stages.run("precision", [&] { return rewrite::store_floats_as(g, *half); });
  // 4. The superoptimizer (opt-in, CPU): μGraphs for the LAX subprograms (Mirage), searched
  //    on small copies, instantiated at the model's sizes and measured against the subprogram
  //    compiled without them; those that win are sites for the orchestration.
  SuperoptKernels found;
  if (o.superopt.enabled) {
    found = stages.run("superopt", [&] { return find_superopt_kernels(g, o); });
    result.superopt = found.notes;
  }
  // 5. Orchestration: which primitives run together in one kernel — by rules, or the BLP over
  //    every convex candidate with measured costs (optimal), the superoptimizer's sites among
  //    them. There the graph without rewrites is orchestrated too: roofline prices chose the
  //    rewrites, measured ones have the last word — the two graphs' plans timed whole, the
  //    faster going on. Under the rules, each site's μGraph replaces its primitives' kernels.
  PlacedKernels placed = stages.run("orchestrate", [&] {
    if (o.strategy != orchestrate::Strategy::Optimal)
      return place_ugraph_kernels(g, orchestrate::orchestrate(g, o.strategy), found.sites, &result.superopt);
    OptimalPlan p = orchestrate_measured(g, o.target, o.build, o.measure, 12, found.sites);
    if (unrewritten) {
      OptimalPlan q = orchestrate_measured(*unrewritten, o.target, o.build, o.measure, 12, {},
                                           p.measured_seconds > 0 ? p.measured_seconds : INFINITY);
      if (p.measured_seconds > 0 && q.measured_seconds > 0) {
        std::string line;
        bool keep = rewritten_plan_kept(g, p, found.sites, *unrewritten, q, o.build, o.measure, &line);
        result.rewrites.push_back(line);
        if (!keep) {
          g = std::move(*unrewritten);
          p = std::move(q);
          found.sites.clear();  // they are sites of the rewritten graph
        }
      }
    }
    result.orchestration = p.notes;
    return mark_ugraph_kernels(p.kernels, p.greedy_kept ? std::vector<UGraphSite>{} : found.sites);
  });
  // 6. Implementation of each kernel: generated code, oneDNN, the interpreter, or an alias —
  //    oneDNN or generated code for linear kernels by measuring both, alone; a matmul kernel
  //    split around oneDNN against the same kernel generated whole; then whole plans where
  //    generated steps would break chains of blocked layouts. On a GPU: cuBLASLt for large
  //    matmuls, generated CUDA code, or an alias.
  std::vector<StepChoice> steps = stages.run("implement", [&] {
    if (cuda) return implement(g, placed.kernels, runtime::PlanDevice::Cuda, o.gpu_libraries);
    return implement_on_cpu(g, placed, o.build, o.measure, &result.choices);
  });
  // 6b. With the optimal strategy, the plan as implemented against greedy's implemented alike,
  //     whole: greedy's where the plan is not faster with significance.
  if (!cuda && o.strategy == orchestrate::Strategy::Optimal && !o.measure.orchid_exe.empty())
    stages.run("plan as implemented, whole", [&] {
      return keep_plan_if_faster_implemented(g, o, placed, steps, result);
    });
  // 7. Tuning (with a budget): each distinct generated kernel's schedule searched on this
  //    machine — exploration ranked by the analytic model, then Droplet Search on measured
  //    times, the time going where it shortens the model most — or read from the tuning
  //    database's earlier decisions; so is the generated alternative of each library step,
  //    which replaces the library where it is faster tuned.
  //    The stages before measured without the database's decisions, so that a compile with
  //    every decision made (a warm one) measures and chooses as the first compile did.
  std::vector<std::optional<codegen::cpu::Schedule>> tuned;
  if (!cuda && o.tune.minutes > 0) {
    MeasureOptions measure = o.measure;
    measure.tuned = true;
    PlanTuning t = stages.run("tune", [&] {
      return tune_steps(g, steps, o.target, o.build, measure, o.tune, o.progress, &result.tuning);
    });
    // 7b. With the optimal strategy, the BLP solved again with the tuned kernels' times (which
    //     also re-price, by their class's calibration, the candidates not measured), until
    //     the plan stays.
    if (o.strategy == orchestrate::Strategy::Optimal)
      stages.run("re-solve", [&] {
        solve_again_with_tuned(g, found.sites, o, measure, placed, steps, t, result);
        return 0;
      });
    // 7c. Kernels were tuned alone: the tuned plan (schedules, and library steps made
    //     generated) against the plan under default schedules, whole, the faster kept.
    stages.run("tuned plan, whole", [&] {
      keep_tuned_if_faster(g, steps, t, o.build, measure, &result.tuning);
      return 0;
    });
    tuned = std::move(t.schedules);
  }
  // 8. Code generation and compilation; the plan, weights and graph of the artifact.
  BuiltArtifact built = stages.run("codegen + compile", [&] {
    return cuda ? build_cuda_artifact(g, steps, o.build) : build_artifact(g, steps, o.build, tuned);
  });
  // 9. Write to a staging directory, check against the interpreter, then publish.
  std::string staging = result.out_dir + ".staging";
  std::filesystem::remove_all(staging);
  RemovedUnlessPublished guard{staging};
  stages.run("write", [&] { write_artifact(built, staging); return 0; });
  if (!runnable) result.not_verified = cuda ? "no GPU here: " + no_gpu : "built for another target";
  if (runnable) {
    result.verify = stages.run("verify", [&] { return verify_artifact(staging, reference, o.verify_seed, o.verify_tolerance()); });
    if (!result.verify.ok()) {
      ORCHID_USER_ERROR() << o.model_path << ": the compiled artifact does not match the reference interpreter "
                          << "(seed " << o.verify_seed << "); nothing written:\n" << result.verify.summary();
    }
    result.verified = true;
  }
  // 10. The report: every step, its primitives, bytes, FLOPs and measured time.
  ReportInput report{o.model_path, std::string(orchestrate::strategy_name(o.strategy)), &g, &built, &result.verify,
                     result.verified, result.not_verified, stages.times(), result.choices, result.orchestration,
                     result.rewrites, result.tuning, result.superopt, o.gpu_description};
  result.report_summary = stages.run("report", [&] {
    return write_reports(staging, report, o.host_target && !cuda ? o.measure_seconds : 0);
  });
  publish_artifact(staging, result.out_dir);
  result.stages = stages.times();
  return result;
}

}  // namespace orchid::driver
