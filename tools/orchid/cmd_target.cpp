// `orchid target`: the target Orchid plans for — the host, detected and measured once (the
// measurement is cached, by default in ~/.cache/orchid/target.json), or a CUDA preset.
// `--json` prints it for scripts (the benchmark harness reads cpu_model, cores, isa, caches,
// dram_bandwidth_gbs, gemm_peak_gflops and levels).
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "support/error.h"
#include "target/host.h"
#include "target/presets.h"

namespace orchid::cli {

namespace {

struct TargetOptions {
  bool json = false;
  bool refresh = false;
  std::string preset;
  std::string cache;
};

// The default cache file, under the user's home folder.
std::string default_cache_path() {
  const char* home = std::getenv("HOME");
  ORCHID_USER_CHECK(home != nullptr && *home != '\0')
      << "HOME is not set: pass --cache FILE for the target measurement cache";
  return std::string(home) + "/.cache/orchid/target.json";
}

std::string human_bytes(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g %s", v, units[u]);
  return buf;
}

// The target's JSON form plus the summary keys scripts read.
nlohmann::json summary_json(const target::Target& t) {
  nlohmann::json j = t;
  if (t.kind == target::TargetKind::Cpu) j["cpu_model"] = t.name;
  nlohmann::json caches = nlohmann::json::array();
  for (size_t i = 1; i + 1 < t.levels.size(); ++i) caches.push_back(t.levels[i]);
  j["caches"] = caches;
  j["dram_bandwidth_gbs"] = target::main_memory(t).bandwidth_gbs;
  j["gemm_peak_gflops"] = t.peak_gflops_f32;
  return j;
}

void print_table(const target::Target& t) {
  std::printf("target: %s (%s)\n", t.name.c_str(), std::string(target::target_kind_name(t.kind)).c_str());
  std::printf("cores: %d   simd: %d bits   compiler: %s\n", t.cores, t.simd_bits, t.compiler.c_str());
  std::printf("isa:");
  for (const std::string& f : t.isa) std::printf(" %s", f.c_str());
  std::printf("\nfingerprint: %s\n", t.fingerprint().c_str());
  std::printf("peak fp32: %.1f GFLOP/s", t.peak_gflops_f32);
  if (t.peak_gflops_tf32 > 0) std::printf("   peak tf32 tensor: %.1f GFLOP/s", t.peak_gflops_tf32);
  std::printf("\n%-10s %12s %12s %14s  %s\n", "level", "capacity", "transaction", "bandwidth", "shared");
  for (const target::MemoryLevel& l : t.levels)
    std::printf("%-10s %12s %12s %9.1f GB/s  %s\n", l.name.c_str(), human_bytes(l.capacity_bytes).c_str(),
                human_bytes(l.transaction_bytes).c_str(), l.bandwidth_gbs, l.shared_across_cores ? "yes" : "no");
}

int show_target(const TargetOptions& o) {
  if (!o.preset.empty()) {
    target::Target t = target::cuda_preset(o.preset);
    if (o.json) std::printf("%s\n", summary_json(t).dump(2).c_str());
    else print_table(t);
    return 0;
  }
  std::string cache = o.cache.empty() ? default_cache_path() : o.cache;
  target::HostTarget h = target::host_target(target::ProbeOptions{}, cache, o.refresh);
  if (o.json) {
    nlohmann::json j = summary_json(h.target);
    j["measured"] = h.measured;
    j["cache_file"] = cache;
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  print_table(h.target);
  std::printf("measurement: %s %s\n", h.measured ? "taken now, stored in" : "cached in", cache.c_str());
  return 0;
}

}  // namespace

Command add_target(CLI::App& app) {
  auto opts = std::make_shared<TargetOptions>();
  CLI::App* cmd = app.add_subcommand(
      "target", "Show the target: the host (cores, ISA, caches, measured bandwidths and GEMM peak) or a GPU preset");
  cmd->add_flag("--json", opts->json, "print JSON (keys: cpu_model, cores, isa, caches, dram_bandwidth_gbs, "
                                      "gemm_peak_gflops, levels, ...)");
  CLI::Option* refresh = cmd->add_flag("--refresh", opts->refresh, "measure the host again, replacing the cached numbers");
  CLI::Option* cache = cmd->add_option("--cache", opts->cache, "the measurement cache (default ~/.cache/orchid/target.json)");
  cmd->add_option("--preset", opts->preset, "a CUDA preset instead of the host: a100, a100-40gb, h100, h200")
      ->excludes(refresh)
      ->excludes(cache);
  return {cmd, [opts] { return show_target(*opts); }};
}

}  // namespace orchid::cli
