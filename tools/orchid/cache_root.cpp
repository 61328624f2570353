#include "cache_root.h"

#include <cstdlib>

#include "support/cache_paths.h"
#include "tune/db.h"

namespace orchid::cli {

namespace {

CacheEnvironment environment() {
  const char* home = std::getenv("HOME");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  return {home ? home : "", xdg ? xdg : ""};
}

}  // namespace

std::filesystem::path cli_cache_root(const std::string& flag) { return orchid_cache_root(environment(), flag); }

std::filesystem::path cli_tuning_db(const std::string& given) {
  if (!given.empty()) return given;
  return tune::default_tuning_db_path(environment());
}

}  // namespace orchid::cli
