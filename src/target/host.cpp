#include "target/host.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "target/detect.h"

namespace orchid::target {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kFormat = "orchid-target-cache";
constexpr int kVersion = 1;

json probe_json(const ProbeOptions& o) {
  return {{"threads", o.threads},
          {"repetitions", o.repetitions},
          {"triad_bytes_per_array", o.triad_bytes_per_array},
          {"min_sample_seconds", o.min_sample_seconds},
          {"gemm_size", o.gemm_size}};
}

json entry_json(const Measurement& m, const ProbeOptions& o) {
  return {{"bandwidth_gbs", m.bandwidth_gbs},
          {"gemm_gflops", m.gemm_gflops},
          {"threads", m.threads},
          {"probe", probe_json(o)}};
}

Measurement measurement_from(const json& e, const std::string& path, const std::string& key) {
  try {
    Measurement m;
    m.bandwidth_gbs = e.at("bandwidth_gbs").get<std::map<std::string, double>>();
    m.gemm_gflops = e.at("gemm_gflops").get<double>();
    m.threads = e.at("threads").get<int>();
    return m;
  } catch (const json::exception& ex) {
    ORCHID_USER_ERROR() << path << ": bad target cache entry '" << key << "': " << ex.what();
  }
  return {};
}

// The cache file's contents; an empty cache when the file does not exist (or is not a cache
// and `replace_bad` is set).
json read_cache(const std::string& path, bool replace_bad) {
  json empty = {{"format", kFormat}, {"version", kVersion}, {"entries", json::object()}};
  std::ifstream in(path);
  if (!in) return empty;
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  auto is = [&](const char* key, const json& v) { return j.contains(key) && j[key] == v; };
  bool ok = j.is_object() && is("format", kFormat) && is("version", kVersion) && j.contains("entries") &&
            j["entries"].is_object();
  if (ok || replace_bad) return ok ? j : empty;
  ORCHID_USER_ERROR() << path << ": not an Orchid target cache (version " << kVersion
                      << "); delete it or refresh the measurement";
  return empty;
}

// Written to a temporary file and renamed, so a reader never sees half a file.
void write_cache(const std::string& path, const json& j) {
  fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    ORCHID_USER_CHECK(out.good()) << path << ": cannot write the target cache";
  }
  fs::rename(tmp, p, ec);
  ORCHID_USER_CHECK(!ec) << path << ": cannot write the target cache (" << ec.message() << ")";
}

}  // namespace

std::string cache_key(const Target& detected) {
  return detected.fingerprint() + " " + std::to_string(detected.cores) + " cores " + detected.name;
}

HostTarget host_target(const ProbeOptions& probe, const std::string& cache_path, bool refresh) {
  HostTarget h;
  Target detected = detect_host();
  if (cache_path.empty()) {
    h.measurement = measure(detected, probe);
    h.measured = true;
  } else {
    json cache = read_cache(cache_path, refresh);
    std::string key = cache_key(detected);
    json& entries = cache["entries"];
    if (!refresh && entries.contains(key))
      h.measurement = measurement_from(entries[key], cache_path, key);
    if (refresh || !covers(h.measurement, detected)) {
      h.measurement = measure(detected, probe);
      h.measured = true;
      entries[key] = entry_json(h.measurement, probe);
      write_cache(cache_path, cache);
    }
  }
  h.target = apply_measurement(detected, h.measurement);
  return h;
}

}  // namespace orchid::target
