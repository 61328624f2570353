// The tuning database: round trips, upserts, decisions, persistence, sharing one file between
// connections and processes, a writer killed mid-write, strings that would break string-built
// SQL, ordering, damaged files moved aside, and error messages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "support/error.h"
#include "support/subprocess.h"
#include "testlib/errors.h"
#include "testlib/temp_dir.h"
#include "tune/db.h"

namespace orchid::tune {
namespace {

Measurement m(double median_ns, double spread = 0.01, int64_t runs = 10, std::string created = "2026-01-02T03:04:05Z") {
  return {median_ns, spread, runs, std::move(created)};
}

TEST(TuningDb, RecordsAndLooksUp) {
  testlib::TempDir dir("orchid_tune_db");
  TuningDb db(dir.file("tuning.db"));
  EXPECT_EQ(db.size(), 0);
  EXPECT_EQ(db.lookup("t", "k", "s"), std::nullopt);
  db.record("t", "k", "s", m(1234.5, 0.02, 30));
  EXPECT_EQ(db.lookup("t", "k", "s"), m(1234.5, 0.02, 30));
  EXPECT_EQ(db.size(), 1);
  // Each of the three keys matters.
  EXPECT_EQ(db.lookup("t2", "k", "s"), std::nullopt);
  EXPECT_EQ(db.lookup("t", "k2", "s"), std::nullopt);
  EXPECT_EQ(db.lookup("t", "k", "s2"), std::nullopt);
  EXPECT_EQ(db.path(), dir.file("tuning.db"));
}

TEST(TuningDb, FillsInTheTimeOfRecording) {
  testlib::TempDir dir("orchid_tune_db");
  TuningDb db(dir.file("tuning.db"));
  db.record("t", "k", "s", m(5, 0, 1, ""));
  std::optional<Measurement> got = db.lookup("t", "k", "s");
  ASSERT_TRUE(got);
  EXPECT_TRUE(std::regex_match(got->created, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << got->created;
}

TEST(TuningDb, RecordReplacesTheMeasurementUnderTheSameKeys) {
  testlib::TempDir dir("orchid_tune_db");
  TuningDb db(dir.file("tuning.db"));
  db.record("t", "k", "s", m(100));
  db.record("t", "k", "s", m(80, 0.5, 7, "2026-02-02T00:00:00Z"));
  EXPECT_EQ(db.size(), 1);
  EXPECT_EQ(db.lookup("t", "k", "s"), m(80, 0.5, 7, "2026-02-02T00:00:00Z"));
}

// One decision per (target, kernel): replaced, kept apart from the measurements, and read back
// after reopening.
TEST(TuningDb, DecisionsAreOnePerKernelAndPersist) {
  testlib::TempDir dir("orchid_tune_db");
  {
    TuningDb db(dir.file("tuning.db"));
    EXPECT_EQ(db.decision("t", "k"), std::nullopt);
    db.decide("t", "k", "tile=8x0 vec=16", m(100));
    db.decide("t", "k", "tile=4x0 vec=8", m(90));
    db.decide("t", "k2", "tile=1 vec=1", m(5));
    EXPECT_EQ(db.size(), 0);  // no measurement
  }
  TuningDb db(dir.file("tuning.db"));
  EXPECT_EQ(db.decision("t", "k"), std::make_pair(std::string("tile=4x0 vec=8"), m(90)));
  EXPECT_EQ(db.decision("t", "k2"), std::make_pair(std::string("tile=1 vec=1"), m(5)));
  EXPECT_EQ(db.decision("t2", "k"), std::nullopt);
}

// The superoptimizer's results: one per (target, program, options), replaced in place, pruned
// with the other rows of a target.
TEST(TuningDb, SuperoptResultsAreOnePerKeyAndPruned) {
  testlib::TempDir dir("orchid_tune_db");
  {
    TuningDb db(dir.file("tuning.db"));
    EXPECT_EQ(db.superopt_result("t", "p", "o"), std::nullopt);
    db.record_superopt("t", "p", "o", "first");
    db.record_superopt("t", "p", "o", "second");
    db.record_superopt("t", "p", "o2", "other options");
    db.record_superopt("t2", "p", "o", "other target");
  }
  TuningDb db(dir.file("tuning.db"));
  EXPECT_EQ(db.superopt_result("t", "p", "o"), "second");
  EXPECT_EQ(db.superopt_result("t", "p", "o2"), "other options");
  EXPECT_EQ(db.prune("t", ""), 1);
  EXPECT_EQ(db.superopt_result("t2", "p", "o"), std::nullopt);
  EXPECT_EQ(db.superopt_result("t", "p", "o"), "second");
}

TEST(TuningDb, PersistsAcrossReopening) {
  testlib::TempDir dir("orchid_tune_db");
  std::string path = dir.file("nested/folders/tuning.db");  // parents are created
  {
    TuningDb db(path);
    db.record("t", "k", "s", m(42));
  }
  TuningDb again(path);
  EXPECT_EQ(again.size(), 1);
  EXPECT_EQ(again.lookup("t", "k", "s"), m(42));
}

TEST(TuningDb, TwoConnectionsOnOneFileSeeEachOthersWrites) {
  testlib::TempDir dir("orchid_tune_db");
  TuningDb a(dir.file("tuning.db"));
  TuningDb b(dir.file("tuning.db"));
  a.record("t", "k", "from-a", m(1));
  EXPECT_EQ(b.lookup("t", "k", "from-a"), m(1));
  b.record("t", "k", "from-b", m(2));
  EXPECT_EQ(a.lookup("t", "k", "from-b"), m(2));
  EXPECT_EQ(a.size(), 2);
  EXPECT_EQ(b.size(), 2);
}

TEST(TuningDb, ConcurrentWritersWaitForEachOther) {
  testlib::TempDir dir("orchid_tune_db");
  std::string path = dir.file("tuning.db");
  TuningDb(path).size();  // the schema exists before the writers start
  auto writer = [&](const std::string& who) {
    TuningDb db(path);
    for (int i = 0; i < 200; ++i) db.record("t", who, std::to_string(i), m(i));
  };
  std::thread one(writer, "one");
  std::thread two(writer, "two");
  one.join();
  two.join();
  EXPECT_EQ(TuningDb(path).size(), 400);
}

TEST(TuningDb, AnotherProcessSharesTheFile) {
  // A second process (this test binary, running ChildProcessWriter) opens the file while this
  // one holds it open: it reads what we wrote and we read what it wrote, so no connection
  // holds a lock between calls.
  testlib::TempDir dir("orchid_tune_db");
  std::string path = dir.file("tuning.db");
  TuningDb db(path);
  db.record("t", "k", "parent", m(1));
  if (::access("/proc/self/exe", R_OK) != 0) GTEST_SKIP() << "no /proc/self/exe";
  SubprocessOptions options;
  options.environment = std::vector<std::string>{"ORCHID_TUNE_DB_CHILD=" + path};
  options.timeout_s = 60;
  SubprocessResult r = run_subprocess(
      {"/proc/self/exe", "--gtest_filter=TuningDb.ChildProcessWriter"}, options);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(db.lookup("t", "k", "child"), m(2));
  EXPECT_EQ(db.size(), 2);
}

// The other side of AnotherProcessSharesTheFile: does nothing unless run by it.
TEST(TuningDb, ChildProcessWriter) {
  const char* path = std::getenv("ORCHID_TUNE_DB_CHILD");
  if (path == nullptr) GTEST_SKIP() << "runs only as AnotherProcessSharesTheFile's child";
  TuningDb db(path);
  ASSERT_EQ(db.lookup("t", "k", "parent"), m(1));
  db.record("t", "k", "child", m(2));
}

TEST(TuningDb, OddStringsAreStoredVerbatim) {
  testlib::TempDir dir("orchid_tune_db");
  TuningDb db(dir.file("tuning.db"));
  std::vector<std::string> keys = {"",
                                   "it's",
                                   "\"double\"",
                                   "'); DROP TABLE measurements; --",
                                   "%_*?[]",
                                   "tab\tnew\nline\r",
                                   "unicode: \xce\xbb \xe2\x88\x91 \xf0\x9f\x8c\xb8",
                                   "\\backslash\\",
                                   std::string(100000, 'x')};
  for (size_t i = 0; i < keys.size(); ++i) db.record(keys[i], keys[i], keys[i], m(double(i)));
  EXPECT_EQ(db.size(), int64_t(keys.size()));
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(db.lookup(keys[i], keys[i], keys[i]), m(double(i))) << keys[i];
    auto all = db.schedules_for(keys[i], keys[i]);
    ASSERT_EQ(all.size(), 1u) << keys[i];
    EXPECT_EQ(all[0].first, keys[i]);
  }
  // LIKE-style and case-insensitive matching never happen.
  EXPECT_EQ(db.lookup("%", "%", "%"), std::nullopt);
  EXPECT_EQ(db.lookup("IT'S", "IT'S", "IT'S"), std::nullopt);
}

TEST(TuningDb, SchedulesForListsOneKernelFastestFirst) {
  testlib::TempDir dir("orchid_tune_db");
  TuningDb db(dir.file("tuning.db"));
  db.record("t", "k", "slow", m(300));
  db.record("t", "k", "fast", m(100));
  db.record("t", "k", "tie-b", m(200));
  db.record("t", "k", "tie-a", m(200));
  db.record("t", "other-kernel", "x", m(1));
  db.record("other-target", "k", "y", m(1));
  auto all = db.schedules_for("t", "k");
  std::vector<std::string> order;
  for (const auto& [schedule, measurement] : all) order.push_back(schedule);
  EXPECT_EQ(order, (std::vector<std::string>{"fast", "tie-a", "tie-b", "slow"}));
  EXPECT_EQ(all[0].second, m(100));
  EXPECT_TRUE(db.schedules_for("t", "missing").empty());
}

// The files in `dir` whose names hold `part`.
std::vector<std::string> files_with(const std::string& dir, const std::string& part) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(part) != std::string::npos) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(TuningDb, ACorruptFileIsMovedAsideAndANewOneStarted) {
  testlib::TempDir dir("orchid_tune_db");
  std::string junk = std::string(4096, 'z') + " this is not an SQLite database";
  std::string path = dir.file("corrupt.db", junk);
  TuningDb db(path);
  std::vector<std::string> aside = files_with(dir.str(), ".corrupt-");
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(read_all(aside[0]), junk);  // kept, not deleted
  EXPECT_TRUE(std::regex_match(db.note(), std::regex("tuning database '" + path +
                                                     "': file is not a database; moved aside to '" + path +
                                                     R"(\.corrupt-\d{8}T\d{6}Z', starting a new one)")))
      << db.note();
  db.record("t", "k", "s", m(7));
  EXPECT_EQ(TuningDb(path).lookup("t", "k", "s"), m(7));
  EXPECT_EQ(TuningDb(path).note(), "");
}

TEST(TuningDb, DamagedPagesAreMovedAside) {
  testlib::TempDir dir("orchid_tune_db");
  std::string path = dir.file("tuning.db");
  {
    TuningDb db(path);
    for (int i = 0; i < 2000; ++i) db.record("t", "kernel " + std::to_string(i), std::string(100, 's'), m(i));
  }
  {  // a checkpointed file (the connection closed); its pages past the first two overwritten
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(3 * 4096);
    std::string garbage(8 * 4096, '\x5a');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  TuningDb db(path);
  EXPECT_NE(db.note().find("': damaged: "), std::string::npos) << db.note();
  EXPECT_EQ(files_with(dir.str(), ".corrupt-").size(), 1u);
  EXPECT_EQ(db.size(), 0);
}

// Runs ProcessWriter children at once, each recording `records` measurements under its own name.
void run_writers_at_once(const std::string& path, int writers, int records) {
  if (::access("/proc/self/exe", R_OK) != 0) GTEST_SKIP() << "no /proc/self/exe";
  std::vector<std::thread> threads;
  std::vector<SubprocessResult> results(static_cast<size_t>(writers));
  for (int w = 0; w < writers; ++w)
    threads.emplace_back([&, w] {
      SubprocessOptions options;
      options.environment = std::vector<std::string>{"ORCHID_TUNE_DB_WRITER=" + path, "ORCHID_TUNE_DB_WHO=w" + std::to_string(w),
                                                     "ORCHID_TUNE_DB_RECORDS=" + std::to_string(records)};
      options.timeout_s = 120;
      results[static_cast<size_t>(w)] = run_subprocess({"/proc/self/exe", "--gtest_filter=TuningDb.ProcessWriter"}, options);
    });
  for (std::thread& t : threads) t.join();
  for (const SubprocessResult& r : results) ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(TuningDb, ProcessesWritingAtOnceLoseNoRecord) {
  testlib::TempDir dir("orchid_tune_db");
  std::string path = dir.file("tuning.db");
  run_writers_at_once(path, 3, 300);
  TuningDb db(path);
  EXPECT_EQ(db.size(), 900);
  for (int w = 0; w < 3; ++w)
    for (int i = 0; i < 300; ++i)
      EXPECT_EQ(db.lookup("t", "w" + std::to_string(w), std::to_string(i)), m(i)) << w << " " << i;
}

TEST(TuningDb, ProcessesFindingOneCorruptFileMoveItAsideOnce) {
  testlib::TempDir dir("orchid_tune_db");
  std::string path = dir.file("tuning.db", std::string(8192, 'q'));
  run_writers_at_once(path, 3, 100);
  EXPECT_EQ(files_with(dir.str(), ".corrupt-").size(), 1u);
  EXPECT_EQ(TuningDb(path).size(), 300);
}

// A writer killed (SIGKILL) in the middle of its writes leaves a sound database: nothing is
// moved aside on opening, every record it committed is there in full, the one it was writing
// is there whole or not at all, and writing goes on.
TEST(TuningDb, AWriterKilledMidWriteLeavesASoundDatabase) {
  if (::access("/proc/self/exe", R_OK) != 0) GTEST_SKIP() << "no /proc/self/exe";
  testlib::TempDir dir("orchid_tune_db");
  std::string path = dir.file("tuning.db");
  TuningDb(path).record("t", "before", "0", m(1));
  SubprocessOptions options;
  options.environment = std::vector<std::string>{"ORCHID_TUNE_DB_WRITER=" + path, "ORCHID_TUNE_DB_WHO=killed",
                                                 "ORCHID_TUNE_DB_RECORDS=100000000"};
  options.timeout_s = 1.0;  // then SIGKILL, mid-write
  SubprocessResult r = run_subprocess({"/proc/self/exe", "--gtest_filter=TuningDb.ProcessWriter"}, options);
  ASSERT_TRUE(r.timed_out) << r.out << r.err;
  TuningDb db(path);
  EXPECT_EQ(db.note(), "");
  EXPECT_EQ(db.lookup("t", "before", "0"), m(1));
  int64_t written = db.size() - 1;
  EXPECT_GT(written, 0);
  for (int64_t i = 0; i < written; ++i) ASSERT_EQ(db.lookup("t", "killed", std::to_string(i)), m(double(i))) << i;
  EXPECT_EQ(db.lookup("t", "killed", std::to_string(written)), std::nullopt);
  db.record("t", "after", "0", m(2));
  EXPECT_EQ(TuningDb(path).lookup("t", "after", "0"), m(2));
}

// The other side of the two tests above: does nothing unless run by them.
TEST(TuningDb, ProcessWriter) {
  const char* path = std::getenv("ORCHID_TUNE_DB_WRITER");
  if (path == nullptr) GTEST_SKIP() << "runs only as a child of ProcessesWritingAtOnceLoseNoRecord";
  std::string who = std::getenv("ORCHID_TUNE_DB_WHO");
  int records = std::atoi(std::getenv("ORCHID_TUNE_DB_RECORDS"));
  TuningDb db(path);
  for (int i = 0; i < records; ++i) db.record("t", who, std::to_string(i), m(i));
}

TEST(TuningDb, AnUnwritablePathIsAUserErrorNamingIt) {
  testlib::TempDir dir("orchid_tune_db");
  std::string blocker = dir.file("a-file", "not a folder");
  std::string path = blocker + "/sub/tuning.db";
  std::string msg = testlib::error_of([&] { TuningDb db(path); });
  EXPECT_NE(msg.find("tuning database '" + path + "': cannot create its folder"), std::string::npos) << msg;
  std::string msg2 = testlib::error_of([&] { TuningDb db(dir.str()); });  // a folder
  EXPECT_NE(msg2.find("tuning database '" + dir.str() + "'"), std::string::npos) << msg2;
}

// Runs SQL on a file through Python's sqlite3 module, to make files TuningDb would not write.
bool python_sql(const std::string& path, const std::string& sql) {
  if (::access("/usr/bin/python3", X_OK) != 0) return false;
  SubprocessResult r = run_subprocess(
      {"/usr/bin/python3", "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()",
       path, sql});
  return r.exit_code == 0;
}

TEST(TuningDb, AnotherSqliteDatabaseIsRefused) {
  testlib::TempDir dir("orchid_tune_db");
  std::string path = dir.file("other.db");
  if (!python_sql(path, "CREATE TABLE songs(title TEXT);")) GTEST_SKIP() << "no python3 with sqlite3";
  std::string msg = testlib::error_of([&] { TuningDb db(path); });
  EXPECT_NE(msg.find("tuning database '" + path + "': an SQLite database, but not a tuning database"), std::string::npos)
      << msg;
}

TEST(TuningDb, ANewerSchemaIsRefused) {
  testlib::TempDir dir("orchid_tune_db");
  std::string path = dir.file("newer.db");
  { TuningDb db(path); }
  if (!python_sql(path, "UPDATE schema_version SET version = 99;")) GTEST_SKIP() << "no python3 with sqlite3";
  std::string msg = testlib::error_of([&] { TuningDb db(path); });
  EXPECT_NE(msg.find("schema version 99, but this Orchid reads version 1"), std::string::npos) << msg;
}

TEST(TuningDb, ABrokenMeasurementIsAnInternalError) {
  testlib::TempDir dir("orchid_tune_db");
  TuningDb db(dir.file("tuning.db"));
  EXPECT_THROW(db.record("t", "k", "s", m(std::nan(""))), InternalError);
  EXPECT_THROW(db.record("t", "k", "s", m(-1)), InternalError);
  EXPECT_EQ(db.size(), 0);
}

TEST(TuningDb, MovesKeepTheConnection) {
  testlib::TempDir dir("orchid_tune_db");
  TuningDb a(dir.file("tuning.db"));
  a.record("t", "k", "s", m(3));
  TuningDb b = std::move(a);
  EXPECT_EQ(b.lookup("t", "k", "s"), m(3));
}

TEST(TuningDb, DefaultPathIsUnderTheUsersCache) {
  EXPECT_EQ(default_tuning_db_path({"/home/u", ""}), "/home/u/.cache/orchid/tuning.db");
  std::string msg = testlib::error_of([] { default_tuning_db_path({"", ""}); });
  EXPECT_NE(msg.find("pass --db FILE"), std::string::npos) << msg;
}

}  // namespace
}  // namespace orchid::tune
