// Detection of the host CPU (no measurement): cores, ISA, vector width, caches and memory,
// read from cpuid, /proc/cpuinfo and sysfs. Bandwidths and the peak stay 0 until the probe
// (probe.h) measures them; host.h combines both and caches the measurement.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "target/target.h"

namespace orchid::target {

// One CPU cache as sysfs describes it (/sys/devices/system/cpu/cpuN/cache/indexK/).
struct CacheInfo {
  int level = 0;
  std::string type;  // "Data", "Instruction", "Unified"
  int64_t size_bytes = 0;
  int64_t line_bytes = 0;
  int shared_cpus = 1;  // logical CPUs sharing this instance

  bool operator==(const CacheInfo&) const = default;
};

// The host: logical CPUs of this process's affinity mask, ISA, caches of the first of them,
// physical memory. The compiler is the one that built Orchid (generated code is built with
// the same system compiler); codegen may replace it with the one it invokes.
Target detect_host();
// This machine's physical memory in bytes (0 when the system does not say).
int64_t physical_memory_bytes();

// The pieces, separately testable.
// Data and unified caches under `cache_dir` (a sysfs .../cpuN/cache folder), by level;
// entries that cannot be read or parsed are skipped. Empty if the folder does not exist.
std::vector<CacheInfo> read_caches(const std::string& cache_dir);
// "48K" -> 49152, "2M", "1G", "512"; -1 when malformed.
int64_t parse_cache_size(std::string_view s);
// Number of CPUs in a sysfs CPU list such as "0-3,8"; 0 when malformed.
int count_cpu_list(std::string_view list);
// ISA flags named as /proc/cpuinfo names them, restricted to the extensions code generation
// cares about, sorted: from cpuid (x86-64, with OS support for the register state checked),
// or else from /proc/cpuinfo's flags / Features line.
std::vector<std::string> host_isa();
// The flags of the first "flags" (x86) or "Features" (Arm) line of /proc/cpuinfo text, with
// "pni" spelt "sse3"; sorted, unique.
std::vector<std::string> cpuinfo_flags(std::string_view cpuinfo_text);
// The CPU's model (brand) string, spaces collapsed; "unknown CPU" when there is none.
std::string host_cpu_model();
// Vector width implied by the ISA flags: 512 (avx512f), 256 (avx), else 128.
int simd_bits_for(const std::vector<std::string>& isa);

}  // namespace orchid::target
