// Where Orchid keeps per-user caches by default (compiled kernel objects, the tuning
// database): $XDG_CACHE_HOME/orchid when that is set, else $HOME/.cache/orchid.
//
// Library code never reads the environment (STYLE.md rule 9): it takes explicit paths in its
// options. The CLI reads HOME and XDG_CACHE_HOME once, passes them here, and derives each
// default from the result (codegen/cpu/compiler.h, tune/db.h).
#pragma once

#include <filesystem>
#include <string>

namespace orchid {

// The two environment variables that locate the cache; empty means unset.
struct CacheEnvironment {
  std::string home;            // $HOME
  std::string xdg_cache_home;  // $XDG_CACHE_HOME
};

// $XDG_CACHE_HOME/orchid if that is an absolute path (the XDG spec says to ignore a relative
// one), else $HOME/.cache/orchid. Neither set: a UserError saying which option to pass.
std::filesystem::path orchid_cache_root(const CacheEnvironment& env, const std::string& option_hint);

}  // namespace orchid
