// Caches from sysfs (Linux): /sys/devices/system/cpu/cpuN/cache/indexK/{level,type,size,
// coherency_line_size,shared_cpu_list}.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>

#include "target/detect.h"

namespace orchid::target {

namespace {

namespace fs = std::filesystem;

std::string read_line(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

bool parse_int(std::string_view s, int64_t& v) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

int64_t parse_cache_size(std::string_view s) {
  int64_t scale = 1;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'M' || s.back() == 'G')) {
    scale = s.back() == 'K' ? 1024 : s.back() == 'M' ? 1024 * 1024 : 1024 * 1024 * 1024;
    s.remove_suffix(1);
  }
  int64_t v = 0;
  if (!parse_int(s, v) || v < 0) return -1;
  return v * scale;
}

int count_cpu_list(std::string_view list) {
  int count = 0;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view range = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    size_t dash = range.find('-');
    int64_t lo = 0, hi = 0;
    if (!parse_int(range.substr(0, dash), lo)) return 0;
    hi = lo;
    if (dash != std::string_view::npos && !parse_int(range.substr(dash + 1), hi)) return 0;
    if (hi < lo) return 0;
    count += static_cast<int>(hi - lo + 1);
  }
  return count;
}

std::vector<CacheInfo> read_caches(const std::string& cache_dir) {
  std::vector<CacheInfo> caches;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(cache_dir, ec)) {
    if (e.path().filename().string().rfind("index", 0) != 0) continue;
    CacheInfo c;
    int64_t level = 0;
    c.type = read_line(e.path() / "type");
    c.size_bytes = parse_cache_size(read_line(e.path() / "size"));
    c.shared_cpus = count_cpu_list(read_line(e.path() / "shared_cpu_list"));
    if (!parse_int(read_line(e.path() / "level"), level) ||
        !parse_int(read_line(e.path() / "coherency_line_size"), c.line_bytes))
      continue;
    c.level = static_cast<int>(level);
    if ((c.type != "Data" && c.type != "Unified") || c.size_bytes <= 0 || c.line_bytes <= 0 ||
        c.level < 1 || c.shared_cpus < 1)
      continue;
    caches.push_back(c);
  }
  std::sort(caches.begin(), caches.end(), [](const CacheInfo& a, const CacheInfo& b) {
    return a.level != b.level ? a.level < b.level : a.type < b.type;
  });
  return caches;
}

}  // namespace orchid::target
