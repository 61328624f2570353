// JSON form of targets. Targets are read from files a user may edit (the measurement cache,
// saved targets), so every key and type is checked and a bad one is a UserError naming it.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "target/target.h"

namespace orchid::target {

namespace {

using nlohmann::json;

template <class T>
T field(const json& j, const char* key, const char* what) {
  ORCHID_USER_CHECK(j.is_object()) << what << ": expected a JSON object";
  auto it = j.find(key);
  ORCHID_USER_CHECK(it != j.end()) << what << ": missing key '" << key << "'";
  try {
    return it->get<T>();
  } catch (const json::exception& e) {
    ORCHID_USER_ERROR() << what << ": key '" << key << "' has the wrong type (" << e.what() << ")";
  }
  return T{};
}

TargetKind parse_kind(const std::string& s) {
  for (TargetKind k : {TargetKind::Cpu, TargetKind::Cuda})
    if (target_kind_name(k) == s) return k;
  ORCHID_USER_ERROR() << "target: unknown kind '" << s << "' (expected cpu or cuda)";
  return TargetKind::Cpu;
}

void check_target(const Target& t) {
  ORCHID_USER_CHECK(t.cores >= 1) << "target '" << t.name << "': cores must be at least 1";
  ORCHID_USER_CHECK(t.simd_bits > 0) << "target '" << t.name << "': simd_bits must be positive";
  ORCHID_USER_CHECK(!t.levels.empty()) << "target '" << t.name << "': no memory levels";
  ORCHID_USER_CHECK(std::is_sorted(t.isa.begin(), t.isa.end()) &&
                    std::adjacent_find(t.isa.begin(), t.isa.end()) == t.isa.end())
      << "target '" << t.name << "': isa flags must be sorted and unique";
  for (const MemoryLevel& l : t.levels)
    ORCHID_USER_CHECK(l.capacity_bytes >= 0 && l.transaction_bytes >= 0 && l.bandwidth_gbs >= 0)
        << "target '" << t.name << "': level '" << l.name << "' has a negative size or bandwidth";
  ORCHID_USER_CHECK(t.peak_gflops_f32 >= 0 && t.peak_gflops_tf32 >= 0)
      << "target '" << t.name << "': negative peak";
}

}  // namespace

void to_json(json& j, const MemoryLevel& l) {
  j = json{{"name", l.name},
           {"capacity_bytes", l.capacity_bytes},
           {"transaction_bytes", l.transaction_bytes},
           {"bandwidth_gbs", l.bandwidth_gbs},
           {"shared_across_cores", l.shared_across_cores}};
}

void from_json(const json& j, MemoryLevel& l) {
  l.name = field<std::string>(j, "name", "memory level");
  l.capacity_bytes = field<int64_t>(j, "capacity_bytes", "memory level");
  l.transaction_bytes = field<int64_t>(j, "transaction_bytes", "memory level");
  l.bandwidth_gbs = field<double>(j, "bandwidth_gbs", "memory level");
  l.shared_across_cores = field<bool>(j, "shared_across_cores", "memory level");
}

void to_json(json& j, const Target& t) {
  j = json{{"kind", std::string(target_kind_name(t.kind))},
           {"name", t.name},
           {"cores", t.cores},
           {"simd_bits", t.simd_bits},
           {"isa", t.isa},
           {"levels", t.levels},
           {"peak_gflops_f32", t.peak_gflops_f32},
           {"peak_gflops_tf32", t.peak_gflops_tf32},
           {"compiler", t.compiler},
           {"fingerprint", t.fingerprint()}};
}

// "fingerprint" is derived, written for readers and ignored here.
void from_json(const json& j, Target& t) {
  t.kind = parse_kind(field<std::string>(j, "kind", "target"));
  t.name = field<std::string>(j, "name", "target");
  t.cores = field<int>(j, "cores", "target");
  t.simd_bits = field<int>(j, "simd_bits", "target");
  t.isa = field<std::vector<std::string>>(j, "isa", "target");
  t.levels = field<std::vector<MemoryLevel>>(j, "levels", "target");
  t.peak_gflops_f32 = field<double>(j, "peak_gflops_f32", "target");
  t.peak_gflops_tf32 = field<double>(j, "peak_gflops_tf32", "target");
  t.compiler = field<std::string>(j, "compiler", "target");
  check_target(t);
}

}  // namespace orchid::target
