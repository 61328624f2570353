#include "tune/db.h"

#include <sqlite3.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <optional>
#include <system_error>
#include <thread>

#include "support/error.h"

namespace orchid::tune {

namespace fs = std::filesystem;

namespace {

// How long a statement waits for another connection's write lock before it fails.
constexpr int kBusyTimeoutMs = 30000;

// The schema of version kSchemaVersion. Every value in a statement is a bound parameter;
// SQL text is never built from values.
constexpr const char* kCreateSchemaVersion =
    "CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL)";
constexpr const char* kCreateMeasurements =
    "CREATE TABLE IF NOT EXISTS measurements("
    "target TEXT NOT NULL, kernel TEXT NOT NULL, schedule TEXT NOT NULL, "
    "median_ns REAL NOT NULL, spread REAL NOT NULL, runs INTEGER NOT NULL, created TEXT NOT NULL, "
    "PRIMARY KEY(target, kernel, schedule)) WITHOUT ROWID";

// The schedule the tuner decided on for a kernel (schedule search, driver/tune.h), with its
// time. Added to version 1 files as they are opened: older Orchids ignore the table.
constexpr const char* kCreateDecisions =
    "CREATE TABLE IF NOT EXISTS decisions("
    "target TEXT NOT NULL, kernel TEXT NOT NULL, schedule TEXT NOT NULL, "
    "median_ns REAL NOT NULL, spread REAL NOT NULL, runs INTEGER NOT NULL, created TEXT NOT NULL, "
    "PRIMARY KEY(target, kernel)) WITHOUT ROWID";
constexpr const char* kDecision =
    "SELECT schedule, median_ns, spread, runs, created FROM decisions WHERE target = ?1 AND kernel = ?2";
constexpr const char* kDecide =
    "INSERT INTO decisions(target, kernel, schedule, median_ns, spread, runs, created) "
    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, COALESCE(?7, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))) "
    "ON CONFLICT(target, kernel) DO UPDATE SET schedule = excluded.schedule, median_ns = excluded.median_ns, "
    "spread = excluded.spread, runs = excluded.runs, created = excluded.created";

// The μGraphs the superoptimizer found for a program (src/superopt): keyed by the target, the
// program's canonical signature and the search options; the result is the search's text.
// Added to version 1 files as they are opened, as decisions was.
constexpr const char* kCreateSuperopt =
    "CREATE TABLE IF NOT EXISTS superopt_results("
    "target TEXT NOT NULL, program TEXT NOT NULL, options TEXT NOT NULL, result TEXT NOT NULL, "
    "created TEXT NOT NULL, PRIMARY KEY(target, program, options)) WITHOUT ROWID";
constexpr const char* kSuperoptResult =
    "SELECT result FROM superopt_results WHERE target = ?1 AND program = ?2 AND options = ?3";
constexpr const char* kRecordSuperopt =
    "INSERT INTO superopt_results(target, program, options, result, created) "
    "VALUES(?1, ?2, ?3, ?4, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) "
    "ON CONFLICT(target, program, options) DO UPDATE SET result = excluded.result, created = excluded.created";

constexpr const char* kLookup =
    "SELECT median_ns, spread, runs, created FROM measurements "
    "WHERE target = ?1 AND kernel = ?2 AND schedule = ?3";
// A NULL ?7 stamps the current time (UTC).
constexpr const char* kRecord =
    "INSERT INTO measurements(target, kernel, schedule, median_ns, spread, runs, created) "
    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, COALESCE(?7, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))) "
    "ON CONFLICT(target, kernel, schedule) DO UPDATE SET median_ns = excluded.median_ns, "
    "spread = excluded.spread, runs = excluded.runs, created = excluded.created";
// Text compares bytewise (BINARY collation): the order is the same everywhere.
constexpr const char* kSchedulesFor =
    "SELECT schedule, median_ns, spread, runs, created FROM measurements "
    "WHERE target = ?1 AND kernel = ?2 ORDER BY median_ns, schedule";
constexpr const char* kSize = "SELECT COUNT(*) FROM measurements";

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  ORCHID_USER_ERROR() << "tuning database " << quoted(path) << ": " << what;
}

// A file SQLite finds damaged (not a database at all, or a malformed one): opening it moves
// it aside (open_recovering) where other errors stop.
class CorruptFile : public UserError {
 public:
  CorruptFile(const fs::path& path, const std::string& what)
      : UserError("tuning database " + quoted(path) + ": " + what), what_(what) {}
  const std::string& reason() const { return what_; }

 private:
  std::string what_;
};

// SQLite answered "busy" or "locked". Its busy handler waits for locks, but not everywhere:
// a connection opening while another sets up or recovers the write-ahead log is answered at
// once, so opening tries again (open_database).
class Busy : public UserError {
 public:
  using UserError::UserError;
};

// Fails with the connection's last error: CorruptFile where SQLite says the file is damaged,
// Busy where another connection holds it.
[[noreturn]] void fail_sqlite(sqlite3* db, const fs::path& path, const std::string& what) {
  int code = sqlite3_errcode(db) & 0xff;
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) throw CorruptFile(path, what);
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED) throw Busy("tuning database " + quoted(path) + ": " + what);
  fail(path, what);
}

struct CloseConnection {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Connection = std::unique_ptr<sqlite3, CloseConnection>;

// A prepared statement with typed binding and reading; errors name the database's path.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const fs::path& path) : db_(db), path_(&path) {
    sqlite3_stmt* s = nullptr;
    check(sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr));
    stmt_.reset(s);
  }

  void bind(int i, const std::string& text) {
    check(sqlite3_bind_text64(stmt_.get(), i, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bind(int i, double v) { check(sqlite3_bind_double(stmt_.get(), i, v)); }
  void bind(int i, int64_t v) { check(sqlite3_bind_int64(stmt_.get(), i, v)); }
  void bind_null(int i) { check(sqlite3_bind_null(stmt_.get(), i)); }

  // True while there is a row to read.
  bool step() {
    int rc = sqlite3_step(stmt_.get());
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    check(rc);
    return false;
  }
  double real(int col) const { return sqlite3_column_double(stmt_.get(), col); }
  int64_t integer(int col) const { return sqlite3_column_int64(stmt_.get(), col); }
  std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), col));
    return p ? std::string(p, size_t(sqlite3_column_bytes(stmt_.get(), col))) : std::string();
  }
  // Ends the statement's read or write and forgets its bindings.
  void reset() {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
  }

 private:
  void check(int rc) const {
    if (rc != SQLITE_OK) fail_sqlite(db_, *path_, sqlite3_errmsg(db_));
  }
  struct Finalize {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  sqlite3* db_;
  const fs::path* path_;
  std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
};

// Resets a statement when a use of it ends, normally or by an exception, so that no
// unfinished read keeps a snapshot (and a lock on the WAL) open.
class Use {
 public:
  explicit Use(Statement& s) : s_(s) { s_.reset(); }
  ~Use() { s_.reset(); }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;
  Statement* operator->() { return &s_; }
  Statement& operator*() { return s_; }

 private:
  Statement& s_;
};

void exec(sqlite3* db, const char* sql, const fs::path& path) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) == SQLITE_OK) return;
  std::string msg = err ? err : sqlite3_errmsg(db);
  sqlite3_free(err);
  fail_sqlite(db, path, msg);
}

// A write transaction, taken at once (IMMEDIATE) so that concurrent openers of a new file
// create the schema one after the other; rolled back unless committed.
class Transaction {
 public:
  Transaction(sqlite3* db, const fs::path& path) : db_(db), path_(path) {
    exec(db, "BEGIN IMMEDIATE", path);
  }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    exec(db_, "COMMIT", path_);
    done_ = true;
  }

 private:
  sqlite3* db_;
  const fs::path& path_;
  bool done_ = false;
};

Connection open_connection(const fs::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) fail(path, "cannot create its folder: " + ec.message());
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  Connection db(raw);
  if (rc != SQLITE_OK) fail(path, db ? sqlite3_errmsg(db.get()) : "out of memory");
  sqlite3_extended_result_codes(db.get(), 1);
  sqlite3_busy_timeout(db.get(), kBusyTimeoutMs);
  // WAL: readers and one writer at once across processes; NORMAL sync is durable against a
  // crash of the process (a power cut may lose the last measurements, never the file).
  exec(db.get(), "PRAGMA journal_mode = WAL", path);
  exec(db.get(), "PRAGMA synchronous = NORMAL", path);
  return db;
}

int64_t count_rows(sqlite3* db, const char* sql, const fs::path& path) {
  Statement s(db, sql, path);
  return s.step() ? s.integer(0) : 0;
}

// The version a file's schema_version table holds; nullopt when it holds none.
std::optional<int64_t> stored_version(sqlite3* db, const fs::path& path) {
  Statement version(db, "SELECT version FROM schema_version", path);
  if (!version.step()) return std::nullopt;
  return version.integer(0);
}

// Creates the schema in a new file, or checks the version of an existing one.
void ensure_schema(sqlite3* db, const fs::path& path) {
  Transaction t(db, path);
  bool has_version = count_rows(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'schema_version'", path) > 0;
  bool has_tables = count_rows(db, "SELECT COUNT(*) FROM sqlite_master", path) > 0;
  if (!has_version && has_tables) fail(path, "an SQLite database, but not a tuning database (no schema_version table)");
  exec(db, kCreateSchemaVersion, path);
  std::optional<int64_t> version = stored_version(db, path);
  if (!version) {
    Statement insert(db, "INSERT INTO schema_version(version) VALUES(?1)", path);
    insert.bind(1, int64_t(TuningDb::kSchemaVersion));
    insert.step();
  } else if (*version != TuningDb::kSchemaVersion) {
    fail(path, "schema version " + std::to_string(*version) + ", but this Orchid reads version " +
                   std::to_string(TuningDb::kSchemaVersion));
  }
  exec(db, kCreateMeasurements, path);
  exec(db, kCreateDecisions, path);
  exec(db, kCreateSuperopt, path);
  t.commit();
}

// SQLite's quick integrity check: damaged pages, indexes out of step with their tables.
void check_integrity(sqlite3* db, const fs::path& path) {
  Statement check(db, "PRAGMA quick_check", path);
  std::string first = check.step() ? check.text(0) : std::string("no answer");
  if (first != "ok") throw CorruptFile(path, "damaged: " + first);
}

// A connection to a checked database with the schema; tried again, on a new connection,
// while another process keeps it busy, for up to kBusyTimeoutMs.
Connection open_database(const fs::path& path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (int attempt = 0;; ++attempt) {
    try {
      Connection db = open_connection(path);
      check_integrity(db.get(), path);
      ensure_schema(db.get(), path);
      return db;
    } catch (const Busy&) {
      if (std::chrono::steady_clock::now() >= deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(1 << std::min(attempt, 7)));
    }
  }
}

// An exclusive lock on a file beside the database, held while one process decides whether
// to move a damaged database aside: two processes that both found it damaged then do not
// both move it (the second would move the first's new database away).
class RecoveryLock {
 public:
  explicit RecoveryLock(const fs::path& db_path) {
    fs::path lock = db_path.string() + ".lock";
    fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(db_path, "cannot open its lock file " + quoted(lock) + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) fail(db_path, "cannot lock " + quoted(lock) + ": " + std::strerror(errno));
  }
  ~RecoveryLock() { ::close(fd_); }
  RecoveryLock(const RecoveryLock&) = delete;
  RecoveryLock& operator=(const RecoveryLock&) = delete;

 private:
  int fd_ = -1;
};

// Renames the database file and its write-ahead log to a free name beside it,
// "<file>.corrupt-<UTC time>[.N]"; drops its shared-memory index. Returns the new name. The
// log and the index go first: once the file is renamed, a process that opens the path
// (outside the recovery lock) may start a new database there, and its own log and index
// must not be moved or removed.
fs::path move_aside(const fs::path& path) {
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  fs::path aside = path.string() + ".corrupt-" + stamp;
  for (int n = 1; fs::exists(aside); ++n) aside = path.string() + ".corrupt-" + stamp + "." + std::to_string(n);
  std::error_code ec;
  fs::path wal = path.string() + "-wal";
  if (fs::exists(wal)) fs::rename(wal, aside.string() + "-wal", ec);
  fs::remove(path.string() + "-shm", ec);
  fs::rename(path, aside, ec);
  if (ec) fail(path, "damaged, and it cannot be moved aside to " + quoted(aside) + ": " + ec.message());
  return aside;
}

// Opens the database; a damaged file is moved aside (under RecoveryLock, once it is still
// damaged) and a new one started, `note` saying so.
Connection open_recovering(const fs::path& path, std::string* note) {
  try {
    return open_database(path);
  } catch (const CorruptFile&) {
  }
  RecoveryLock lock(path);
  try {
    return open_database(path);  // another process may have moved it aside meanwhile
  } catch (const CorruptFile& e) {
    fs::path aside = move_aside(path);
    *note = "tuning database " + quoted(path) + ": " + e.reason() + "; moved aside to " + quoted(aside) +
            ", starting a new one";
  }
  return open_database(path);
}

}  // namespace

struct TuningDb::Impl {
  // Declared in this order so that statements are finalized before the connection closes.
  fs::path path;
  std::string note;  // what opening did beyond the ordinary (a damaged file moved aside)
  Connection db;
  Statement lookup, record, schedules_for, size, decision, decide, superopt_result, record_superopt;

  explicit Impl(const fs::path& p)
      : path(p),
        db(open_recovering(path, &note)),
        lookup(db.get(), kLookup, path),
        record(db.get(), kRecord, path),
        schedules_for(db.get(), kSchedulesFor, path),
        size(db.get(), kSize, path),
        decision(db.get(), kDecision, path),
        decide(db.get(), kDecide, path),
        superopt_result(db.get(), kSuperoptResult, path),
        record_superopt(db.get(), kRecordSuperopt, path) {}
};

fs::path default_tuning_db_path(const CacheEnvironment& env) {
  return orchid_cache_root(env, "--db FILE") / "tuning.db";
}

TuningDb::TuningDb(const fs::path& path) : impl_(std::make_unique<Impl>(path)) {}
TuningDb::~TuningDb() = default;
TuningDb::TuningDb(TuningDb&&) noexcept = default;
TuningDb& TuningDb::operator=(TuningDb&&) noexcept = default;

const fs::path& TuningDb::path() const { return impl_->path; }
const std::string& TuningDb::note() const { return impl_->note; }

namespace {

Measurement read_measurement(const Statement& s, int first_col) {
  return {s.real(first_col), s.real(first_col + 1), s.integer(first_col + 2), s.text(first_col + 3)};
}

void bind_measurement(Statement& q, int first, const Measurement& m) {
  // SQLite stores NaN as NULL; a time that is not a finite non-negative number is a bug.
  ORCHID_CHECK(std::isfinite(m.median_ns) && m.median_ns >= 0 && std::isfinite(m.spread) && m.runs >= 0)
      << "bad measurement: median_ns " << m.median_ns << ", spread " << m.spread << ", runs " << m.runs;
  q.bind(first, m.median_ns);
  q.bind(first + 1, m.spread);
  q.bind(first + 2, m.runs);
  if (m.created.empty())
    q.bind_null(first + 3);
  else
    q.bind(first + 3, m.created);
}


}  // namespace

std::optional<Measurement> TuningDb::lookup(const std::string& target, const std::string& kernel,
                                            const std::string& schedule) {
  Use q(impl_->lookup);
  q->bind(1, target);
  q->bind(2, kernel);
  q->bind(3, schedule);
  if (!q->step()) return std::nullopt;
  return read_measurement(impl_->lookup, 0);
}

void TuningDb::record(const std::string& target, const std::string& kernel, const std::string& schedule,
                      const Measurement& m) {
  Use q(impl_->record);
  q->bind(1, target);
  q->bind(2, kernel);
  q->bind(3, schedule);
  bind_measurement(*q, 4, m);
  q->step();
}

std::vector<std::pair<std::string, Measurement>> TuningDb::schedules_for(const std::string& target,
                                                                         const std::string& kernel) {
  Use q(impl_->schedules_for);
  q->bind(1, target);
  q->bind(2, kernel);
  std::vector<std::pair<std::string, Measurement>> out;
  while (q->step()) out.emplace_back(impl_->schedules_for.text(0), read_measurement(impl_->schedules_for, 1));
  return out;
}


std::optional<std::pair<std::string, Measurement>> TuningDb::decision(const std::string& target,
                                                                      const std::string& kernel) {
  Use q(impl_->decision);
  q->bind(1, target);
  q->bind(2, kernel);
  if (!q->step()) return std::nullopt;
  return std::make_pair(impl_->decision.text(0), read_measurement(impl_->decision, 1));
}

void TuningDb::decide(const std::string& target, const std::string& kernel, const std::string& schedule,
                      const Measurement& m) {
  Use q(impl_->decide);
  q->bind(1, target);
  q->bind(2, kernel);
  q->bind(3, schedule);
  bind_measurement(*q, 4, m);
  q->step();
}

std::optional<std::string> TuningDb::superopt_result(const std::string& target, const std::string& program,
                                                     const std::string& options) {
  Use q(impl_->superopt_result);
  q->bind(1, target);
  q->bind(2, program);
  q->bind(3, options);
  if (!q->step()) return std::nullopt;
  return impl_->superopt_result.text(0);
}

void TuningDb::record_superopt(const std::string& target, const std::string& program, const std::string& options,
                               const std::string& result) {
  Use q(impl_->record_superopt);
  q->bind(1, target);
  q->bind(2, program);
  q->bind(3, options);
  q->bind(4, result);
  q->step();
}

namespace {

std::vector<TuningDb::Row> all_rows(sqlite3* db, const fs::path& path, const char* table) {
  std::string sql = std::string("SELECT target, kernel, schedule, median_ns, spread, runs, created FROM ") + table +
                    " ORDER BY target, kernel, schedule";
  Statement q(db, sql.c_str(), path);
  std::vector<TuningDb::Row> out;
  while (q.step()) out.push_back({q.text(0), q.text(1), q.text(2), read_measurement(q, 3)});
  return out;
}

}  // namespace

std::vector<TuningDb::Row> TuningDb::measurements() { return all_rows(impl_->db.get(), impl_->path, "measurements"); }
std::vector<TuningDb::Row> TuningDb::decisions() { return all_rows(impl_->db.get(), impl_->path, "decisions"); }

int64_t TuningDb::prune(const std::string& keep_target, const std::string& before) {
  int64_t removed = 0;
  Transaction t(impl_->db.get(), impl_->path);
  for (const char* table : {"measurements", "decisions", "superopt_results"}) {
    std::string sql = std::string("DELETE FROM ") + table +
                      " WHERE (?1 <> '' AND target <> ?1) OR (?2 <> '' AND created < ?2)";
    Statement q(impl_->db.get(), sql.c_str(), impl_->path);
    q.bind(1, keep_target);
    q.bind(2, before);
    q.step();
    removed += sqlite3_changes(impl_->db.get());
  }
  t.commit();
  return removed;
}

int64_t TuningDb::size() {
  Use q(impl_->size);
  return q->step() ? impl_->size.integer(0) : 0;
}

}  // namespace orchid::tune
