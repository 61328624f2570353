// A target as data (DESIGN.md, "Targets"): what the planner needs to know about a machine —
// cores, vector width, ISA, the memory hierarchy with capacity, transaction width and
// bandwidth per level, and compute peak — so that plans, rooflines and tile searches can be
// made for a CPU that was measured once, or for a GPU that is not present (presets.h).
//
// Units: bytes, GB/s (1e9 bytes per second) and GFLOP/s (1e9 FLOP per second; a multiply-add
// counts 2). Bandwidths and peaks are aggregates over all cores of the target.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace orchid::target {

// Bump when generated code changes in a way that invalidates measured kernel costs: it is
// part of every target fingerprint, so the tuning database starts afresh.
inline constexpr int kCodegenVersion = 1;

// Bytes moved through registers per FLOP at peak: an FMA (2 FLOP) reads three fp32 operands
// and writes one (16 bytes). Register bandwidth is not measured; it is this times the peak.
inline constexpr double kRegisterBytesPerFlop = 8.0;

enum class TargetKind { Cpu, Cuda };
std::string_view target_kind_name(TargetKind k);

// One level of the memory hierarchy, as seen from the compute units.
struct MemoryLevel {
  std::string name;               // "registers", "L1d", "L2", "L3", "DRAM"; "shared", "HBM"
  int64_t capacity_bytes = 0;     // one instance: per core (per SM) when private, whole when shared
  int64_t transaction_bytes = 0;  // unit of transfer: a vector, a cache line, an L2 sector
  double bandwidth_gbs = 0;       // all cores together; 0 = not measured
  bool shared_across_cores = false;

  bool operator==(const MemoryLevel&) const = default;
};

struct Target {
  TargetKind kind = TargetKind::Cpu;
  std::string name;                 // the CPU model string, or the GPU preset's name
  int cores = 1;                    // logical CPUs this process may run on; SMs on CUDA
  int simd_bits = 128;              // vector width (CPU); a warp's 32 lanes × 32 bits (CUDA)
  std::vector<std::string> isa;     // sorted, unique: "avx2", "avx512f", ...; "sm_90a"
  std::vector<MemoryLevel> levels;  // fastest first: registers ... DRAM (HBM)
  double peak_gflops_f32 = 0;       // fp32 FMA peak (CPU: measured GEMM); 0 = not measured
  double peak_gflops_tf32 = 0;      // dense TF32 tensor-core peak; 0 where there is none
  std::string compiler;             // the compiler that builds code for this target

  bool operator==(const Target&) const = default;

  // Stable 16-hex-digit hash of the device name, the ISA flags, the compiler and
  // kCodegenVersion: the key under which the tuning database stores measured costs.
  std::string fingerprint() const;
};

// The index of the level named `name`, if any.
std::optional<size_t> level_index(const Target& t, std::string_view name);
// The slowest level (DRAM, HBM): the one a roofline bound uses.
const MemoryLevel& main_memory(const Target& t);

// JSON form (nlohmann ADL). from_json checks every key and type and throws UserError naming
// the key; a Target read back equals the one written.
void to_json(nlohmann::json& j, const MemoryLevel& l);
void from_json(const nlohmann::json& j, MemoryLevel& l);
void to_json(nlohmann::json& j, const Target& t);
void from_json(const nlohmann::json& j, Target& t);

}  // namespace orchid::target
