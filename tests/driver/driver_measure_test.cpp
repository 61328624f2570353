// Timing candidates (driver/measure.h, time_alternating) through the built `orchid` binary:
// the candidates of one call are written, then timed together in one helper process (`orchid
// time-artifacts`); candidates of one key and implementation are written and timed once; one
// that cannot be loaded fails alone; where the helper fails as a whole, each candidate is timed
// in a process of its own; times are recorded, and a second call reads them back.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "driver/artifact.h"
#include "driver/implement.h"
#include "driver/measure.h"
#include "driver/plan_builder.h"
#include "ir/parser.h"
#include "orchestrate/strategies.h"
#include "testlib/temp_dir.h"
#include "tune/db.h"

namespace orchid::driver {
namespace {

namespace fs = std::filesystem;

const char* kSmall = R"(graph @small {
  input %x : f32[64,64]
  %y : f32[64,64] = elementwise(%x) { max(%x[i0, i1], 0:f32) }
  output %y
})";

const char* kLarger = R"(graph @larger {
  input %x : f32[256,256]
  %y : f32[256,256] = elementwise(%x) { exp(%x[i0, i1]) }
  output %y
})";

struct Timing {
  testlib::TempDir dir{"orchid_measure"};
  ir::Graph small = ir::parse_graph(kSmall), larger = ir::parse_graph(kLarger);
  BuildOptions build;
  MeasureOptions measure;
  tune::TuningDb db{dir.file("tuning.db")};
  std::atomic<int> writes{0};  // written from the write threads

  Timing() {
    build.compiler.cache_dir = fs::temp_directory_path() / "orchid-test-objects";
    build.cores = 2;
    measure.orchid_exe = ORCHID_BIN;
    measure.work_dir = dir.file("candidates");
    measure.min_seconds = 0.005;
    measure.min_runs = 2;
    measure.db = &db;
    measure.target = "test";
    fs::create_directories(measure.work_dir);
  }

  // The graph compiled whole (greedy kernels) under `key`; each write counted.
  TimedArtifact item(const ir::Graph& g, const std::string& key) {
    return {key, "impl", [this, &g](const fs::path& out) {
              ++writes;
              BuiltArtifact a = build_artifact(g, implement(g, orchestrate::orchestrate(g, orchestrate::Strategy::Greedy)), build);
              write_artifact(a, out.string());
            }};
  }
};

// A program that logs its arguments' first word (the command) to `log`, then runs orchid.
std::string logging_orchid(const testlib::TempDir& dir, const std::string& log) {
  std::string script = dir.file("orchid-logged", "#!/bin/sh\necho \"$1\" >> '" + log + "'\nexec '" +
                                                    std::string(ORCHID_BIN) + "' \"$@\"\n");
  fs::permissions(script, fs::perms::owner_all);
  return script;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(Measure, CandidatesOfOneKeyAreWrittenAndTimedOnceInOneProcessAndRecorded) {
  Timing t;
  std::string log = t.dir.file("commands.txt");
  t.measure.orchid_exe = logging_orchid(t.dir, log);
  std::vector<TimedArtifact> items = {t.item(t.small, "a"), t.item(t.larger, "b"), t.item(t.small, "a")};
  std::vector<CandidateTime> first = time_alternating(items, t.measure, 2);
  EXPECT_EQ(t.writes, 2);
  ASSERT_EQ(first.size(), 3u);
  for (const CandidateTime& c : first) {
    ASSERT_TRUE(c.ms) << c.failure;
    EXPECT_GT(*c.ms, 0);
    EXPECT_FALSE(c.cached);
  }
  EXPECT_EQ(*first[0].ms, *first[2].ms);
  EXPECT_EQ(read_text(log), "time-artifacts\n");  // one helper process for both rounds
  ASSERT_TRUE(t.db.lookup("test", "a", "impl"));
  EXPECT_DOUBLE_EQ(t.db.lookup("test", "a", "impl")->median_ns, *first[0].ms * 1e6);
  // Every directory written is gone.
  EXPECT_TRUE(fs::is_empty(t.measure.work_dir));

  std::vector<CandidateTime> again = time_alternating(items, t.measure, 2);
  EXPECT_EQ(t.writes, 2);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(again[i].cached);
    EXPECT_DOUBLE_EQ(*again[i].ms, *first[i].ms);
  }
}

// MeasureOptions::flush_bytes reaches the helper as --flush-bytes.
TEST(Measure, TheHelperFlushesWhereTheOptionsAsk) {
  Timing t;
  std::string log = t.dir.file("arguments.txt");
  std::string script = t.dir.file("orchid-args", "#!/bin/sh\necho \"$*\" >> '" + log + "'\nexec '" +
                                                     std::string(ORCHID_BIN) + "' \"$@\"\n");
  fs::permissions(script, fs::perms::owner_all);
  t.measure.orchid_exe = script;
  t.measure.flush_bytes = 65536;
  std::vector<CandidateTime> times = time_alternating({t.item(t.small, "a"), t.item(t.larger, "b")}, t.measure, 1);
  for (const CandidateTime& c : times) EXPECT_TRUE(c.ms) << c.failure;
  EXPECT_NE(read_text(log).find(" --flush-bytes 65536"), std::string::npos) << read_text(log);
}

TEST(Measure, ACandidateThatCannotBeLoadedFailsAlone) {
  Timing t;
  TimedArtifact broken{"broken", "impl", [](const fs::path& out) {
                         fs::create_directories(out);
                         std::ofstream(out / "plan.json") << "{ not a plan";
                       }};
  std::vector<CandidateTime> r = time_alternating({t.item(t.small, "a"), broken, t.item(t.larger, "b")}, t.measure, 1);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(r[0].ms) << r[0].failure;
  EXPECT_TRUE(r[2].ms) << r[2].failure;
  EXPECT_FALSE(r[1].ms);
  EXPECT_NE(r[1].failure.find("plan.json"), std::string::npos) << r[1].failure;
  EXPECT_FALSE(t.db.lookup("test", "broken", "impl"));
}

TEST(Measure, WhereTheHelperFailsAsAWholeEachIsTimedInAProcessOfItsOwn) {
  Timing t;
  // A program that times nothing together (as a helper that crashes) but runs artifacts alone.
  std::string script = t.dir.file("orchid-alone", std::string("#!/bin/sh\n[ \"$1\" = time-artifacts ] && exit 9\nexec '") +
                                                      ORCHID_BIN + "' \"$@\"\n");
  fs::permissions(script, fs::perms::owner_all);
  t.measure.orchid_exe = script;
  std::vector<std::vector<double>> rounds;
  std::string failure;
  rounds = time_rounds({t.item(t.small, "a"), t.item(t.larger, "b")}, t.measure, 2, &failure);
  EXPECT_EQ(failure, "");
  ASSERT_EQ(rounds.size(), 2u);
  for (const std::vector<double>& r : rounds) {
    ASSERT_EQ(r.size(), 2u);
    for (double ms : r) EXPECT_GT(ms, 0);
  }
}

}  // namespace
}  // namespace orchid::driver
