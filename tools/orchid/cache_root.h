// Where the CLI keeps its caches: $XDG_CACHE_HOME/orchid or ~/.cache/orchid (support/cache_paths.h).
#pragma once

#include <filesystem>
#include <string>

namespace orchid::cli {

// The cache root from the environment; `flag` names the option that overrides it in the
// message when neither variable is set.
std::filesystem::path cli_cache_root(const std::string& flag);
// The tuning database: `given` when not empty, else tuning.db under the cache root.
std::filesystem::path cli_tuning_db(const std::string& given);

}  // namespace orchid::cli
