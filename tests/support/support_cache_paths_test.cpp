// The default cache root: XDG_CACHE_HOME when absolute, else HOME/.cache, else a UserError.
#include <gtest/gtest.h>

#include "support/cache_paths.h"
#include "testlib/errors.h"

namespace orchid {
namespace {

TEST(CachePaths, XdgCacheHomeWinsWhenAbsolute) {
  EXPECT_EQ(orchid_cache_root({"/home/u", "/var/cache/u"}, "--x"), "/var/cache/u/orchid");
  EXPECT_EQ(orchid_cache_root({"/home/u", ""}, "--x"), "/home/u/.cache/orchid");
  // The XDG base-directory spec says to ignore a relative value.
  EXPECT_EQ(orchid_cache_root({"/home/u", "rel/cache"}, "--x"), "/home/u/.cache/orchid");
}

TEST(CachePaths, NoHomeIsAUserErrorNamingTheOption) {
  std::string msg = testlib::error_of([] { orchid_cache_root({"", ""}, "--db FILE"); });
  EXPECT_NE(msg.find("neither XDG_CACHE_HOME nor HOME is set: pass --db FILE"), std::string::npos) << msg;
}

}  // namespace
}  // namespace orchid
