// The BLP with lazily added cycle cuts, solved by CBC (blp.h).
#include "orchestrate/blp.h"

#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "support/error.h"

namespace orchid::orchestrate {

namespace {

constexpr double kInf = 1e30;  // CBC's infinity for row bounds

// A linear constraint lo <= Σ coef·u[col] <= hi over columns of the reduced problem.
struct Row {
  std::vector<int> cols;
  std::vector<double> coefs;
  double lo = -kInf;
  double hi = kInf;
};

// The problem without the items that can never run: one binary column per runnable item,
// then one column y_v = Σ_{i writes v} u_i per value that has a writer or is required (it
// keeps the dependency rows sparse; integral whenever the items are, and declared integer so
// that CBC may branch on whether v is written).
struct Reduced {
  std::vector<int32_t> item_of;                // item column -> item
  std::vector<int32_t> col_of;                 // item -> column, or -1
  std::vector<std::vector<int32_t>> writers;   // value -> item columns writing it
  std::vector<int32_t> avail_col;              // value -> its y column, or -1
  std::vector<double> col_lo, col_hi, costs;   // per column; costs scaled
  double scale = 1;
  int items() const { return static_cast<int>(item_of.size()); }
};

Reduced reduce(const BlpProblem& p) {
  Reduced r;
  r.item_of = runnable_items(p);
  r.col_of.assign(p.items.size(), -1);
  r.writers.resize(static_cast<size_t>(p.num_values));
  double max_cost = 0;
  for (int32_t i : r.item_of) max_cost = std::max(max_cost, p.items[static_cast<size_t>(i)].cost);
  r.scale = max_cost > 0 ? 1000.0 / max_cost : 1.0;
  for (size_t c = 0; c < r.item_of.size(); ++c) {
    const BlpItem& it = p.items[static_cast<size_t>(r.item_of[c])];
    r.col_of[static_cast<size_t>(r.item_of[c])] = static_cast<int32_t>(c);
    for (int32_t v : it.writes) r.writers[static_cast<size_t>(v)].push_back(static_cast<int32_t>(c));
    r.costs.push_back(it.cost * r.scale), r.col_lo.push_back(0), r.col_hi.push_back(1);
  }
  std::vector<bool> required(static_cast<size_t>(p.num_values), false);
  for (int32_t v : p.required) required[static_cast<size_t>(v)] = true;
  r.avail_col.assign(static_cast<size_t>(p.num_values), -1);
  for (int32_t v = 0; v < p.num_values; ++v) {
    if (r.writers[static_cast<size_t>(v)].empty() && !required[static_cast<size_t>(v)]) continue;
    r.avail_col[static_cast<size_t>(v)] = static_cast<int32_t>(r.costs.size());
    r.costs.push_back(0), r.col_lo.push_back(required[static_cast<size_t>(v)] ? 1 : 0), r.col_hi.push_back(1);
  }
  return r;
}

// (W): y_v = Σ_{i writes v} u_i, with y_v ∈ [0, 1] (1 for required values) from the column
// bounds; (D): one row per pair (value read, value written).
std::vector<Row> base_rows(const BlpProblem& p, const Reduced& r) {
  std::vector<Row> rows;
  for (int32_t v = 0; v < p.num_values; ++v) {
    int32_t y = r.avail_col[static_cast<size_t>(v)];
    if (y < 0) continue;
    Row row;
    row.cols.push_back(y), row.coefs.push_back(1);
    for (int32_t c : r.writers[static_cast<size_t>(v)]) row.cols.push_back(c), row.coefs.push_back(-1);
    row.lo = row.hi = 0;
    rows.push_back(std::move(row));
  }
  std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> readers;  // (read, written) -> columns
  for (int c = 0; c < r.items(); ++c) {
    const BlpItem& it = p.items[static_cast<size_t>(r.item_of[static_cast<size_t>(c)])];
    for (int32_t v : it.reads)
      for (int32_t w : it.writes) readers[{v, w}].push_back(c);
  }
  for (const auto& [key, cols] : readers) {
    Row row;
    // Runnable items read only values that some runnable item writes: y_v exists.
    row.cols.push_back(r.avail_col[static_cast<size_t>(key.first)]), row.coefs.push_back(1);
    for (int32_t c : cols) row.cols.push_back(c), row.coefs.push_back(-1);
    row.lo = 0;
    rows.push_back(std::move(row));
  }
  return rows;
}

struct Solve {
  bool found = false;
  std::vector<int32_t> chosen;  // items, increasing
  double bound = 0;             // scaled
  bool optimal = false;
};

Solve run_cbc(const Reduced& r, const std::vector<Row>& rows, const BlpOptions& o, bool preprocess) {
  int n = static_cast<int>(r.costs.size());
  CoinPackedMatrix m(false, 0, 0);
  m.setDimensions(0, n);
  std::vector<double> row_lo, row_hi;
  for (const Row& row : rows) {
    m.appendRow(static_cast<int>(row.cols.size()), row.cols.data(), row.coefs.data());
    row_lo.push_back(row.lo), row_hi.push_back(row.hi);
  }
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(m, r.col_lo.data(), r.col_hi.data(), r.costs.data(), row_lo.data(), row_hi.data());
  for (int c = 0; c < n; ++c) solver.setInteger(c);  // y too: CBC may branch on "is v written"
  CbcModel model(solver);
  model.setLogLevel(0);
  CbcMain0(model);
  std::string nodes = std::to_string(o.max_nodes);
  // One thread (the default), no time limit: the search is deterministic. Five rounds of
  // cuts at the root instead of CBC's default (up to 100) halve the solve time of these
  // problems, whose LP bound the cuts raise in the first few rounds.
  std::vector<const char*> argv = {"orchid", "-log", "0", "-maxNodes", nodes.c_str(), "-allowableGap", "1e-6",
                                   "-ratioGap", "0", "-passC", "5"};
  if (!preprocess) argv.insert(argv.end(), {"-preprocess", "off"});
  argv.insert(argv.end(), {"-solve", "-quit"});
  CbcMain1(static_cast<int>(argv.size()), argv.data(), model);
  Solve s;
  const double* x = model.bestSolution();
  if (x == nullptr || model.isProvenInfeasible()) return s;
  s.found = true;
  for (int c = 0; c < r.items(); ++c)
    if (x[c] > 0.5) s.chosen.push_back(r.item_of[static_cast<size_t>(c)]);
  s.optimal = model.isProvenOptimal() && !model.isNodeLimitReached();
  s.bound = model.getBestPossibleObjValue();
  return s;
}

// Writes all of `bytes` to fd; false where it cannot.
bool write_all(int fd, const std::string& bytes) {
  for (size_t at = 0; at < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

std::string encoded(const Solve& s) {
  std::string out(reinterpret_cast<const char*>(&s.bound), sizeof s.bound);
  out += static_cast<char>(s.found), out += static_cast<char>(s.optimal);
  for (int32_t c : s.chosen) out.append(reinterpret_cast<const char*>(&c), sizeof c);
  return out;
}

std::optional<Solve> decoded(const std::string& bytes) {
  constexpr size_t head = sizeof(double) + 2;
  if (bytes.size() < head || (bytes.size() - head) % sizeof(int32_t) != 0) return std::nullopt;
  Solve s;
  std::memcpy(&s.bound, bytes.data(), sizeof s.bound);
  s.found = bytes[sizeof(double)] != 0, s.optimal = bytes[sizeof(double) + 1] != 0;
  s.chosen.resize((bytes.size() - head) / sizeof(int32_t));
  std::memcpy(s.chosen.data(), bytes.data() + head, bytes.size() - head);
  return s;
}

// run_cbc in a forked child, which sends its solve back through a pipe: Clp stops the process
// with a failed assertion on some problems (coin-or/Clp#173: ClpNonLinearCost's bounds after
// CBC's preprocessing), which must cost a solve, not the compile. The child runs the solver
// alone and ends with _exit. A forked child holds the forking thread only; the solver takes
// no lock another thread of the parent may hold (glibc resets malloc's at fork, and the
// callers that solve on several threads at once, OptimalSolver, run nothing else meanwhile),
// and it closes the descriptors it inherited from other threads' solves.
// None where the child did not finish with a whole solve.
std::optional<Solve> run_cbc_in_child(const Reduced& r, const std::vector<Row>& rows, const BlpOptions& o,
                                      bool preprocess) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]), ::close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    // Descriptors other than stdio and this solve's write end are closed: another thread's
    // pipe inherited here would keep its reader waiting for this child to end.
    ::close_range(3, static_cast<unsigned>(fds[1]) - 1, 0);
    ::close_range(static_cast<unsigned>(fds[1]) + 1, ~0U, 0);
    bool sent = write_all(fds[1], encoded(run_cbc(r, rows, o, preprocess)));
    ::_exit(sent ? 0 : 1);
  }
  ::close(fds[1]);
  std::string bytes;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return decoded(bytes);
}

// The solve, isolated in a child process; where the solver fails there, once more without
// CBC's preprocessing; where that fails too, a solve that found nothing (`failures` counts).
Solve solve_isolated(const Reduced& r, const std::vector<Row>& rows, const BlpOptions& o, int& failures) {
  for (bool preprocess : {true, false}) {
    if (std::optional<Solve> s = run_cbc_in_child(r, rows, o, preprocess)) return *s;
    ++failures;
  }
  return {};
}

// Tarjan's strongly connected components of a graph given by successor lists, each
// component listed once, sinks of the condensation first.
std::vector<std::vector<int32_t>> components(const std::vector<std::vector<int32_t>>& succ) {
  size_t n = succ.size();
  std::vector<int32_t> index(n, -1), low(n, 0), stack;
  std::vector<bool> on_stack(n, false);
  std::vector<std::vector<int32_t>> out;
  int32_t counter = 0;
  std::function<void(int32_t)> visit = [&](int32_t v) {
    index[static_cast<size_t>(v)] = low[static_cast<size_t>(v)] = counter++;
    stack.push_back(v), on_stack[static_cast<size_t>(v)] = true;
    for (int32_t w : succ[static_cast<size_t>(v)]) {
      if (index[static_cast<size_t>(w)] < 0) {
        visit(w);
        low[static_cast<size_t>(v)] = std::min(low[static_cast<size_t>(v)], low[static_cast<size_t>(w)]);
      } else if (on_stack[static_cast<size_t>(w)]) {
        low[static_cast<size_t>(v)] = std::min(low[static_cast<size_t>(v)], index[static_cast<size_t>(w)]);
      }
    }
    if (low[static_cast<size_t>(v)] != index[static_cast<size_t>(v)]) return;
    std::vector<int32_t> comp;
    int32_t w;
    do {
      w = stack.back(), stack.pop_back(), on_stack[static_cast<size_t>(w)] = false;
      comp.push_back(w);
    } while (w != v);
    std::sort(comp.begin(), comp.end());
    out.push_back(std::move(comp));
  };
  for (size_t v = 0; v < n; ++v)
    if (index[v] < 0) visit(static_cast<int32_t>(v));
  return out;
}

// The cuts that forbid the cycles among the blocked items of a schedule (see blp.h).
std::vector<Row> cycle_cuts(const BlpProblem& p, const Reduced& r, const Schedule& s) {
  std::vector<bool> present(static_cast<size_t>(p.num_values), false);
  for (int32_t i : s.order)
    for (int32_t v : p.items[static_cast<size_t>(i)].writes) present[static_cast<size_t>(v)] = true;
  std::map<int32_t, int32_t> pos;  // blocked item -> its index in s.blocked
  for (size_t k = 0; k < s.blocked.size(); ++k) pos[s.blocked[k]] = static_cast<int32_t>(k);
  std::vector<int32_t> read_of(s.blocked.size(), -1);  // r_k: a read no scheduled item wrote
  std::vector<std::vector<int32_t>> succ(s.blocked.size());
  for (size_t k = 0; k < s.blocked.size(); ++k) {
    for (int32_t v : p.items[static_cast<size_t>(s.blocked[k])].reads) {
      if (present[static_cast<size_t>(v)]) continue;
      read_of[k] = v;
      for (int32_t c : r.writers[static_cast<size_t>(v)]) {
        auto it = pos.find(r.item_of[static_cast<size_t>(c)]);
        if (it != pos.end()) succ[k].push_back(it->second);
      }
      break;
    }
    ORCHID_CHECK(read_of[k] >= 0) << "blocked item " << s.blocked[k] << " has all its reads";
  }
  std::vector<std::vector<int32_t>> comps = components(succ);
  std::vector<int32_t> comp_of(s.blocked.size(), -1);
  for (size_t c = 0; c < comps.size(); ++c)
    for (int32_t k : comps[c]) comp_of[static_cast<size_t>(k)] = static_cast<int32_t>(c);
  std::vector<Row> cuts;
  for (size_t c = 0; c < comps.size(); ++c) {
    bool sink = true;
    for (int32_t k : comps[c])
      for (int32_t j : succ[static_cast<size_t>(k)]) sink &= comp_of[static_cast<size_t>(j)] == static_cast<int32_t>(c);
    if (!sink) continue;
    std::map<int, double> coef;  // column -> coefficient
    for (int32_t k : comps[c]) coef[r.col_of[static_cast<size_t>(s.blocked[static_cast<size_t>(k)])]] = 1;
    for (int32_t k : comps[c])
      for (int32_t w : r.writers[static_cast<size_t>(read_of[static_cast<size_t>(k)])])
        if (!coef.count(w) || coef[w] < 0) coef[w] = -1;
    Row row;
    for (auto [col, a] : coef) row.cols.push_back(col), row.coefs.push_back(a);
    row.hi = static_cast<double>(comps[c].size()) - 1;
    cuts.push_back(std::move(row));
  }
  return cuts;
}

}  // namespace

BlpResult solve_blp(const BlpProblem& p, const BlpOptions& o) {
  auto start = std::chrono::steady_clock::now();
  for (int32_t v : p.required) ORCHID_CHECK(v >= 0 && v < p.num_values) << "required value " << v << " of " << p.num_values;
  for (const BlpItem& it : p.items) ORCHID_CHECK(std::isfinite(it.cost) && it.cost >= 0) << "item cost " << it.cost;
  BlpResult res;
  if (p.required.empty()) {  // nothing to write: the empty choice
    res.feasible = res.optimal = true;
    return res;
  }
  Reduced r = reduce(p);
  std::vector<Row> rows = base_rows(p, r);
  res.columns = r.items();
  double last_bound = 0;  // of the last solve that found a choice: valid, the cuts being valid
  while (res.rounds < o.max_rounds) {
    ++res.rounds;
    res.rows = static_cast<int64_t>(rows.size());
    Solve solve = solve_isolated(r, rows, o, res.solver_failures);
    if (!solve.found) break;
    last_bound = solve.bound / r.scale;
    Schedule s = schedule_items(p, solve.chosen);
    if (s.blocked.empty()) {
      res.feasible = true;
      res.order = std::move(s.order);
      for (int32_t i : res.order) res.objective += p.items[static_cast<size_t>(i)].cost;
      res.optimal = solve.optimal;
      res.bound = res.optimal ? res.objective : std::min(res.objective, solve.bound / r.scale);
      break;
    }
    std::vector<Row> cuts = cycle_cuts(p, r, s);
    ORCHID_CHECK(!cuts.empty()) << "blocked items without a cycle to cut";
    res.cycle_cuts += static_cast<int>(cuts.size());
    for (Row& c : cuts) rows.push_back(std::move(c));
  }
  if (!res.feasible && !p.fallback.empty()) {
    Schedule s = schedule_items(p, p.fallback);
    ORCHID_CHECK(s.blocked.empty()) << "the fallback choice is not schedulable";
    res.feasible = res.used_fallback = true;
    res.order = std::move(s.order);
    res.objective = 0;
    for (int32_t i : res.order) res.objective += p.items[static_cast<size_t>(i)].cost;
    res.bound = std::min(res.objective, last_bound);
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return res;
}

}  // namespace orchid::orchestrate
