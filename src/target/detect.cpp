#include "target/detect.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace orchid::target {

namespace {

std::string compiler_version() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "gcc " __VERSION__;
#else
  return "unknown compiler";
#endif
}

// Logical CPUs in this process's affinity mask, and the first of them.
struct Cpus {
  int count = 1;
  int first = 0;
};

Cpus available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  Cpus c{CPU_COUNT(&set), 0};
  while (c.first < CPU_SETSIZE && !CPU_ISSET(c.first, &set)) ++c.first;
  return c;
}

int smt_siblings(int cpu) {
  std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list");
  std::string list;
  std::getline(in, list);
  return std::max(1, count_cpu_list(list));
}

MemoryLevel register_level(const std::vector<std::string>& isa, int simd_bits) {
  // 32 vector registers with AVX-512 (and on AArch64), else 16.
  bool many = std::binary_search(isa.begin(), isa.end(), std::string("avx512f")) ||
              std::binary_search(isa.begin(), isa.end(), std::string("asimd"));
  int64_t vector_bytes = simd_bits / 8;
  return {"registers", (many ? 32 : 16) * vector_bytes, vector_bytes, 0.0, false};
}

// One level per cache level (the data cache where a level has data and instruction caches).
std::vector<MemoryLevel> cache_levels(const std::vector<CacheInfo>& caches, int siblings) {
  std::vector<MemoryLevel> levels;
  int last = 0;
  for (const CacheInfo& c : caches) {
    if (c.level == last) continue;
    last = c.level;
    std::string name = "L" + std::to_string(c.level) + (c.type == "Data" ? "d" : "");
    levels.push_back({name, c.size_bytes, c.line_bytes, 0.0, c.shared_cpus > siblings});
  }
  return levels;
}

}  // namespace

int64_t physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? int64_t(pages) * page : 0;
}

Target detect_host() {
  Target t;
  t.kind = TargetKind::Cpu;
  t.name = host_cpu_model();
  Cpus cpus = available_cpus();
  t.cores = cpus.count;
  t.isa = host_isa();
  t.simd_bits = simd_bits_for(t.isa);
  t.compiler = compiler_version();
  t.levels.push_back(register_level(t.isa, t.simd_bits));
  std::string cache_dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpus.first) + "/cache";
  for (MemoryLevel& l : cache_levels(read_caches(cache_dir), smt_siblings(cpus.first)))
    t.levels.push_back(std::move(l));
  int64_t line = t.levels.size() > 1 ? t.levels[1].transaction_bytes : 64;
  t.levels.push_back({"DRAM", physical_memory_bytes(), line, 0.0, true});
  return t;
}

}  // namespace orchid::target
