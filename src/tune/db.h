// The tuning database: measured kernel times, cached across runs and processes (DESIGN.md,
// "Cost loop"). SQLite, one file (the CLI's default: ~/.cache/orchid/tuning.db; --db
// overrides).
//
// A measurement is keyed by three canonical strings, each built by its caller:
//   target   — the target fingerprint: ISA flags + compiler version + Orchid codegen version;
//              a different machine or compiler never reads another's times;
//   kernel   — the canonical kernel signature (its text or a hash of it);
//   schedule — the canonical text of the schedule (the decisions, not the generated code:
//              code is regenerated from them, as in TVM's database).
// Beside the measurements, one decision per (target, kernel): the schedule tuning chose, which
// a later compile of the same kernel on the same target uses without measuring.
//
// Several processes may share a file: it runs in WAL mode (readers never block the writer)
// with a busy timeout, so a writer waits for another's transaction instead of failing.
// A TuningDb is one connection: use it from one thread at a time (open one per thread).
//
// A damaged file (SQLite finds it is not a database, or its quick integrity check fails) is
// moved aside to "<file>.corrupt-<UTC time>" with its write-ahead log, and a new database
// started in its place; note() says so, for the caller to tell the user. A lock file beside
// it ("<file>.lock") keeps two processes from both moving it.
// Other errors — a path that cannot be created or opened, a file that is not a tuning
// database, a schema newer than this Orchid knows, a failing statement — are UserErrors
// naming the path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/cache_paths.h"

namespace orchid::tune {

struct Measurement {
  double median_ns = 0;  // median wall time of one run of the kernel, in nanoseconds
  // Relative dispersion of the runs around the median (e.g. interquartile range / median);
  // the tuner's statistical stop compares candidates with it.
  double spread = 0;
  int64_t runs = 0;      // timed runs the median was taken over
  // When it was recorded, UTC, "YYYY-MM-DDTHH:MM:SSZ". record() fills it in when empty;
  // it is for people reading the database, never part of a decision.
  std::string created;

  bool operator==(const Measurement&) const = default;
};

// The CLI's default database file: <orchid_cache_root>/tuning.db.
std::filesystem::path default_tuning_db_path(const CacheEnvironment& env);

class TuningDb {
 public:
  // The schema this code reads and writes; a file with a newer one is refused.
  static constexpr int kSchemaVersion = 1;

  // Opens the database at `path`, creating it (and its parent folders) when missing.
  explicit TuningDb(const std::filesystem::path& path);
  ~TuningDb();
  TuningDb(TuningDb&&) noexcept;
  TuningDb& operator=(TuningDb&&) noexcept;
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  const std::filesystem::path& path() const;
  // Empty, or what opening the file did beyond the ordinary: a damaged file moved aside.
  const std::string& note() const;

  std::optional<Measurement> lookup(const std::string& target, const std::string& kernel,
                                    const std::string& schedule);
  // Inserts, or replaces the measurement stored under the same three keys.
  void record(const std::string& target, const std::string& kernel, const std::string& schedule,
              const Measurement& m);
  // Every schedule measured for (target, kernel), fastest first; ties by schedule text.
  std::vector<std::pair<std::string, Measurement>> schedules_for(const std::string& target,
                                                                 const std::string& kernel);
  // The schedule decided on for (target, kernel) by tuning, with its time; one per kernel.
  std::optional<std::pair<std::string, Measurement>> decision(const std::string& target, const std::string& kernel);
  // Inserts, or replaces the decision stored for (target, kernel).
  void decide(const std::string& target, const std::string& kernel, const std::string& schedule,
              const Measurement& m);
  // The superoptimizer's result for (target, program signature, search options), as the text
  // it stored; one per key.
  std::optional<std::string> superopt_result(const std::string& target, const std::string& program,
                                             const std::string& options);
  // Inserts, or replaces the result stored under the same keys.
  void record_superopt(const std::string& target, const std::string& program, const std::string& options,
                       const std::string& result);
  // The number of measurements stored, over all targets.
  int64_t size();

  // Every row of either table, ordered by target, kernel and schedule: for export and stats.
  struct Row {
    std::string target, kernel, schedule;
    Measurement m;
    bool operator==(const Row&) const = default;
  };
  std::vector<Row> measurements();
  std::vector<Row> decisions();
  // Removes the rows (measurements, decisions and superoptimizer results) of targets other than `keep_target` (empty:
  // every target kept) and those created before `before` ("YYYY-MM-DD..." compared as text;
  // empty: none); returns how many went.
  int64_t prune(const std::string& keep_target, const std::string& before);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace orchid::tune
