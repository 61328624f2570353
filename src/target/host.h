// The host as a measured target, measured once per machine: detection (detect.h) every time,
// the probe (probe.h) only when the cache file has no measurement for this host.
//
// The cache is a JSON file (the CLI's default: ~/.cache/orchid/target.json) mapping a key —
// the target fingerprint, the core count and the CPU model — to the measurement and the probe
// options it was taken with. Entries of other hosts in the same file are kept.
#pragma once

#include <string>

#include "target/probe.h"
#include "target/target.h"

namespace orchid::target {

struct HostTarget {
  Target target;  // detected, with the measurement applied
  Measurement measurement;
  bool measured = false;  // this call ran the probe (no cache entry, or a refresh)
};

// With an empty cache_path, always measures and stores nothing. Otherwise reads the entry
// for this host from cache_path, measuring (and storing the result) only when there is none,
// when it lacks a level the host has, or when `refresh` is set. A file that is not a cache
// is a UserError naming it, unless `refresh` is set (then it is replaced).
HostTarget host_target(const ProbeOptions& probe, const std::string& cache_path, bool refresh = false);

// The key of `detected` in the cache file.
std::string cache_key(const Target& detected);

}  // namespace orchid::target
