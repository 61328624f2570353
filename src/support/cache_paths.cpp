#include "support/cache_paths.h"

#include "support/error.h"

namespace orchid {

std::filesystem::path orchid_cache_root(const CacheEnvironment& env, const std::string& option_hint) {
  std::filesystem::path xdg = env.xdg_cache_home;
  if (xdg.is_absolute()) return xdg / "orchid";
  ORCHID_USER_CHECK(!env.home.empty()) << "neither XDG_CACHE_HOME nor HOME is set: pass " << option_hint;
  return std::filesystem::path(env.home) / ".cache" / "orchid";
}

}  // namespace orchid
