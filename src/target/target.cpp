#include "target/target.h"

#include <cstdio>

#include "support/error.h"
#include "support/hash.h"

namespace orchid::target {

std::string_view target_kind_name(TargetKind k) {
  switch (k) {
    case TargetKind::Cpu:
      return "cpu";
    case TargetKind::Cuda:
      return "cuda";
  }
  ORCHID_CHECK(false) << "bad TargetKind " << static_cast<int>(k);
  return {};
}

std::string Target::fingerprint() const {
  // A canonical text, so that the hash is the same on every machine and run.
  // The device name is part of it: two devices with one ISA (H100 and H200 are both sm_90a)
  // time kernels differently, and measured costs must not mix.
  std::string text = "device:" + name + "\nisa:";
  for (const std::string& f : isa) text += f + ",";
  text += "\ncompiler:" + compiler + "\ncodegen:" + std::to_string(kCodegenVersion) + "\n";
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a64(text)));
  return buf;
}

std::optional<size_t> level_index(const Target& t, std::string_view name) {
  for (size_t i = 0; i < t.levels.size(); ++i)
    if (t.levels[i].name == name) return i;
  return std::nullopt;
}

const MemoryLevel& main_memory(const Target& t) {
  ORCHID_CHECK(!t.levels.empty()) << "target '" << t.name << "' has no memory levels";
  return t.levels.back();
}

}  // namespace orchid::target
