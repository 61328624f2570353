// `orchid tune-db stats|export|import|prune`: the tuning database (tune/db.h) — what it holds
// per target, its rows as JSON and back (to carry decisions to another machine of the same
// target), and pruning rows of other targets or older than a date.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cache_root.h"
#include "commands.h"
#include "support/cache_paths.h"
#include "support/error.h"
#include "tune/db.h"

namespace orchid::cli {

namespace {

struct TuneDbOptions {
  std::string db, file, keep_target, before;
};

std::filesystem::path db_path(const TuneDbOptions& o) { return cli_tuning_db(o.db); }

nlohmann::json rows_json(const std::vector<tune::TuningDb::Row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const tune::TuningDb::Row& r : rows)
    out.push_back({{"target", r.target}, {"kernel", r.kernel}, {"schedule", r.schedule}, {"median_ns", r.m.median_ns},
                   {"spread", r.m.spread}, {"runs", r.m.runs}, {"created", r.m.created}});
  return out;
}

int stats(const TuneDbOptions& o) {
  tune::TuningDb db(db_path(o));
  std::map<std::string, std::pair<int64_t, int64_t>> per_target;
  std::vector<tune::TuningDb::Row> decisions = db.decisions();
  for (const auto& r : db.measurements()) ++per_target[r.target].first;
  for (const auto& r : decisions) ++per_target[r.target].second;
  std::printf("tuning database %s\n", db.path().c_str());
  std::printf("%lld measurements, %zu decisions\n", static_cast<long long>(db.size()), decisions.size());
  for (const auto& [target, n] : per_target)
    std::printf("  %s: %lld measurements, %lld decisions\n", for_terminal(target).c_str(),
                static_cast<long long>(n.first), static_cast<long long>(n.second));
  return 0;
}

int export_rows(const TuneDbOptions& o) {
  tune::TuningDb db(db_path(o));
  nlohmann::json j{{"measurements", rows_json(db.measurements())}, {"decisions", rows_json(db.decisions())}};
  std::ofstream out(o.file);
  ORCHID_USER_CHECK(out.good()) << "cannot write '" << o.file << "'";
  out << j.dump(1) << "\n";
  ORCHID_USER_CHECK(out.good()) << "cannot write '" << o.file << "'";
  std::printf("wrote %zu measurements and %zu decisions to %s\n", j["measurements"].size(), j["decisions"].size(),
              o.file.c_str());
  return 0;
}

int import_rows(const TuneDbOptions& o) {
  std::ifstream in(o.file);
  ORCHID_USER_CHECK(in.good()) << "cannot read '" << o.file << "'";
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    ORCHID_USER_ERROR() << "'" << o.file << "' is not JSON: " << e.what();
  }
  tune::TuningDb db(db_path(o));
  size_t counts[2] = {0, 0};
  int which = 0;
  for (const char* table : {"measurements", "decisions"}) {
    ORCHID_USER_CHECK(j.contains(table) && j[table].is_array()) << "'" << o.file << "': no \"" << table << "\" array";
    for (const nlohmann::json& r : j[table]) {
      try {
        tune::Measurement m{r.at("median_ns").get<double>(), r.at("spread").get<double>(), r.at("runs").get<int64_t>(),
                            r.at("created").get<std::string>()};
        ORCHID_USER_CHECK(std::isfinite(m.median_ns) && m.median_ns >= 0 && m.spread >= 0 && m.runs >= 0)
            << "'" << o.file << "': a row of " << table << " with a negative or non-finite time";
        const std::string t = r.at("target").get<std::string>(), k = r.at("kernel").get<std::string>(),
                          s = r.at("schedule").get<std::string>();
        if (which == 0) db.record(t, k, s, m);
        else db.decide(t, k, s, m);
      } catch (const nlohmann::json::exception& e) {
        ORCHID_USER_ERROR() << "'" << o.file << "': a row of " << table << ": " << e.what();
      }
      ++counts[which];
    }
    ++which;
  }
  std::printf("imported %zu measurements and %zu decisions into %s\n", counts[0], counts[1], db.path().c_str());
  return 0;
}

int prune(const TuneDbOptions& o) {
  ORCHID_USER_CHECK(!o.keep_target.empty() || !o.before.empty())
      << "tune-db prune: say what to remove (--keep-target TARGET, --before DATE)";
  tune::TuningDb db(db_path(o));
  std::printf("removed %lld rows\n", static_cast<long long>(db.prune(o.keep_target, o.before)));
  return 0;
}

}  // namespace

Command add_tune_db(CLI::App& app) {
  auto o = std::make_shared<TuneDbOptions>();
  CLI::App* cmd = app.add_subcommand("tune-db", "Look into, carry or prune the tuning database");
  cmd->require_subcommand(1);
  auto with_db = [&](CLI::App* c) {
    c->add_option("--db", o->db, "the tuning database (default ~/.cache/orchid/tuning.db)");
    return c;
  };
  CLI::App* st = with_db(cmd->add_subcommand("stats", "What the database holds, per target"));
  CLI::App* ex = with_db(cmd->add_subcommand("export", "Write every measurement and decision to a JSON file"));
  ex->add_option("file", o->file, "the JSON file to write")->required();
  CLI::App* im = with_db(cmd->add_subcommand("import", "Add the rows of a JSON file written by export"));
  im->add_option("file", o->file, "the JSON file to read")->required()->check(CLI::ExistingFile);
  CLI::App* pr = with_db(cmd->add_subcommand("prune", "Remove rows of other targets or older ones"));
  pr->add_option("--keep-target", o->keep_target, "remove the rows of every other target (as `stats` lists them)");
  pr->add_option("--before", o->before, "remove rows recorded before this UTC date (YYYY-MM-DD)");
  return {cmd, [o, st, ex, im, pr] {
            if (st->parsed()) return stats(*o);
            if (ex->parsed()) return export_rows(*o);
            if (im->parsed()) return import_rows(*o);
            if (pr->parsed()) return prune(*o);
            return 1;
          }};
}

}  // namespace orchid::cli
