// search(): the workers, the kernel-level steps of Algorithm 1, and the final verification.
#include "superopt/generator.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <thread>

#include "superopt/abstract_ops.h"
#include "superopt/abstract_program.h"
#include "superopt/check_ugraph.h"
#include "superopt/dim_classes.h"
#include "superopt/generator_internal.h"
#include "superopt/text.h"
#include "support/error.h"

namespace orchid::superopt {

namespace detail {

namespace {

std::vector<int64_t> divisors_above_one(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t k = 2; k <= n; ++k)
    if (n % k == 0) out.push_back(k);
  return out;
}

}  // namespace

Worker::Worker(const ir::Graph& program, const SearchOptions& o, int index, int count, Clock::time_point deadline)
    : program_(program), o_(o), index_(index), count_(count), deadline_(deadline) {
  AbstractProgram ap = abstract_program(program, pool_);
  if (!ap.unsupported.empty()) {
    unsupported_ = ap.unsupported;
    return;
  }
  if (program.outputs().size() != 1) {
    unsupported_ = "the program has " + std::to_string(program.outputs().size()) +
                   " outputs; the search takes programs of one output";
    return;
  }
  targets_ = ap.outputs;
  oracle_ = std::make_unique<SubexprOracle>(pool_, targets_, o.oracle);
  model_ = std::make_unique<FeatureModel>(pool_);
  out_shape_ = program.type(program.outputs()[0]).shape;
  g_.name = program.name;
  DimClasses classes = input_dim_classes(program);
  reduced_ = classes.reduced;
  for (size_t i = 0; i < program.inputs().size(); ++i) {
    const ir::TensorType& t = program.type(program.inputs()[i]);
    TensorId id = g_.add_tensor(program.value(program.inputs()[i]).name, t.dtype, t.shape, Level::Kernel);
    g_.inputs.push_back(id);
    expr_.push_back(pool_.input(static_cast<int64_t>(i)));
    kernel_ordinal_.push_back(static_cast<int32_t>(kernel_tensors_.size()));
    kernel_tensors_.push_back(id);
    classes_.push_back(classes.inputs[i]);
  }
}

void Worker::run() {
  if (unsupported_.empty()) kernel(0);
  stats.oracle = oracle_ ? oracle_->stats() : OracleStats{};
}

bool Worker::expired() {
  if (expired_) return true;
  if (++steps_ % 256 == 0 && Clock::now() > deadline_) expired_ = stats.timed_out = true;
  return expired_;
}

// The search is split by the first kernel operator: worker i takes every count-th choice.
bool Worker::mine(int depth, int64_t& choice) const {
  if (depth > 0) return true;
  return choice++ % count_ == index_;
}

Mark Worker::mark() const {
  return Mark{g_.tensors.size(), g_.ops.size(), g_.blocks.size(), expr_.size(), kernel_tensors_.size(),
              kernel_ranks_.size(), graph_defined_, device_bytes_};
}

void Worker::restore(const Mark& m) {
  g_.tensors.resize(m.tensors);
  g_.ops.resize(m.ops);
  g_.blocks.resize(m.blocks);
  expr_.resize(m.exprs);
  kernel_ordinal_.resize(m.tensors);
  classes_.resize(m.tensors);
  kernel_tensors_.resize(m.kernel_ordinals);
  kernel_ranks_.resize(m.ranks);
  graph_defined_ = m.graph_defined;
  device_bytes_ = m.device_bytes;
}

TensorId Worker::new_tensor(ir::Dims shape, Level level, AbsId expr) {
  std::string name = (level == Level::Kernel ? "t" : "b") + std::to_string(g_.tensors.size());
  TensorId id = g_.add_tensor(name, ir::DType::F32, std::move(shape), level);
  expr_.push_back(expr);
  kernel_ordinal_.push_back(-1);
  classes_.emplace_back(g_.shape(id).size(), -1);
  if (level == Level::Kernel) {
    kernel_ordinal_[static_cast<size_t>(id)] = static_cast<int32_t>(kernel_tensors_.size());
    kernel_tensors_.push_back(id);
    device_bytes_ += ir::numel(g_.shape(id)) * 4;
  }
  return id;
}

// Whether a tensor of expression e may be part of a μGraph of the program (§4.3).
bool Worker::keep(AbsId e) {
  if (!o_.prune_abstract) return true;
  if (oracle_->is_subexpr(e)) return true;
  ++stats.pruned_abstract;
  return false;
}

// Pre-defined kernel operators on the current kernel tensors. In canonical form an operator
// must read a tensor at least as new as the newest the previous operator read: others are not
// even built.
std::vector<UOp> Worker::kernel_moves() const {
  std::vector<UOp> out;
  int32_t floor = o_.canonical && !kernel_ranks_.empty() ? kernel_ranks_.back().max_in : -1;
  auto ord = [&](TensorId t) { return kernel_ordinal_[static_cast<size_t>(t)]; };
  auto unary = [&](UOpType t, TensorId a) {
    UOp op;
    op.type = t;
    op.inputs = {a};
    return op;
  };
  // A sum reduces a dim whole, except one of mixed class, where blocks placed the parts of a
  // split reduction: there it adds up groups of consecutive parts.
  for (TensorId a : kernel_tensors_) {
    if (ord(a) < floor) continue;
    out.push_back(unary(UOpType::Exp, a));
    const ir::Dims& s = g_.shape(a);
    for (size_t d = 0; d < s.size(); ++d) {
      bool mixed = o_.consistent_maps && classes_[static_cast<size_t>(a)][d] < 0;
      for (int64_t k : divisors_above_one(s[d])) {
        if (o_.consistent_maps && !mixed && k != s[d]) continue;
        UOp op = unary(UOpType::Sum, a);
        op.dim = static_cast<int32_t>(d);
        op.k = k;
        out.push_back(op);
      }
    }
  }
  for (TensorId a : kernel_tensors_)
    for (TensorId b : kernel_tensors_) {
      if (std::max(ord(a), ord(b)) < floor) continue;
      const ir::Dims &sa = g_.shape(a), &sb = g_.shape(b);
      bool product = matmul_fits(sa, sb), elementwise = broadcast(sa, sb).has_value();
      for (UOpType t : {UOpType::Matmul, UOpType::Div, UOpType::Add, UOpType::Mul}) {
        if (t == UOpType::Matmul ? !product : !elementwise) continue;
        if ((t == UOpType::Add || t == UOpType::Mul) && b < a) continue;  // commutative
        UOp op;
        op.type = t;
        op.inputs = {a, b};
        out.push_back(op);
      }
    }
  return out;
}

bool Worker::push_kernel_op(UOp op) {
  ++stats.kernel_ops_tried;
  Rank r;
  for (TensorId t : op.inputs) {
    r.in.push_back(kernel_ordinal_[static_cast<size_t>(t)]);
    r.max_in = std::max(r.max_in, r.in.back());
  }
  r.type = static_cast<int32_t>(op.type);
  r.attrs = {op.dim, op.k};
  if (o_.canonical && !kernel_ranks_.empty() && !(kernel_ranks_.back() < r)) {
    ++stats.pruned_canonical;
    return false;
  }
  std::vector<ir::Dims> shapes;
  std::vector<AbsId> exprs;
  for (TensorId t : op.inputs) {
    shapes.push_back(g_.shape(t));
    exprs.push_back(expr_[static_cast<size_t>(t)]);
  }
  Shapes s = infer_shapes(op, shapes, nullptr);
  if (!s.error.empty()) {
    ++stats.pruned_shape;
    return false;
  }
  std::vector<std::vector<int32_t>> in_classes;
  for (TensorId t : op.inputs) in_classes.push_back(classes_[static_cast<size_t>(t)]);
  std::optional<std::vector<int32_t>> cls = classes_of(op, in_classes, shapes, s.out[0], reduced_);
  if (!cls && o_.consistent_maps) {
    ++stats.pruned_dims;
    return false;
  }
  if (device_bytes_ + ir::numel(s.out[0]) * 4 > o_.device_memory_bytes) {
    ++stats.pruned_memory;
    return false;
  }
  AbsId e = abstract_of(pool_, op, exprs, shapes, nullptr);
  if (!keep(e)) return false;
  op.outputs = {new_tensor(s.out[0], Level::Kernel, e)};
  if (cls) classes_[static_cast<size_t>(op.outputs[0])] = *cls;
  g_.ops.push_back(std::move(op));
  kernel_ranks_.push_back(r);
  return true;
}

void Worker::after_kernel_push(int depth, const std::vector<TensorId>& fresh) {
  for (TensorId t : fresh) candidate(t);
  if (depth + 1 < o_.max_kernel_ops) kernel(depth + 1);
}

void Worker::kernel(int depth) {
  if (expired()) return;
  int64_t choice = 0;
  for (UOp& op : kernel_moves()) {
    if (!mine(depth, choice)) continue;
    Mark m = mark();
    if (push_kernel_op(op)) after_kernel_push(depth, {g_.ops.back().outputs[0]});
    restore(m);
    if (expired()) return;
  }
  if (graph_defined_ >= o_.max_graph_defined) return;
  // Graph-defined operators on every set of up to max_block_inputs kernel tensors.
  size_t n = kernel_tensors_.size();
  for (uint64_t mask = 1; mask < (uint64_t{1} << n); ++mask) {
    if (std::popcount(mask) > o_.max_block_inputs) continue;
    std::vector<TensorId> inputs;
    for (size_t i = 0; i < n; ++i)
      if (mask >> i & 1) inputs.push_back(kernel_tensors_[i]);
    for (const ir::Dims& grid : o_.grids)
      for (int64_t loop : o_.loops) {
        if (!mine(depth, choice)) continue;
        Mark m = mark();
        open_block(inputs, grid, loop, depth);
        restore(m);
        if (expired()) return;
      }
  }
}

// A kernel tensor that computes the output abstractly (equal in the feature model, a model of
// A_eq, so every μGraph whose expression A_eq proves equal passes) is screened.
void Worker::candidate(TensorId t) {
  if (ir::numel(g_.shape(t)) != ir::numel(out_shape_)) return;
  if (!model_->same(expr_[static_cast<size_t>(t)], targets_[0])) return;
  ++stats.candidates;
  UGraph u = extract(g_, t, out_shape_);
  std::string text = print_ugraph(u);
  if (!seen_.insert(text).second) return;
  verify::CheckOptions screen = ugraph_check_options();
  screen.max_tests = o_.screen_tests;
  verify::Verdict v = check_ugraph(program_, u, screen);
  if (v.outcome == verify::Outcome::Different) {
    ++stats.rejected;
    return;
  }
  ++stats.screened;
  double cost = estimate_cost(u);
  screened.push_back(Screened{std::move(u), std::move(text), cost});
}

UGraph extract(const UGraph& g, TensorId out, const ir::Dims& shape) {
  // Kernel operators `out` depends on, found backwards.
  std::vector<bool> need(g.tensors.size(), false), keep_op(g.ops.size(), false);
  need[static_cast<size_t>(out)] = true;
  for (size_t i = g.ops.size(); i-- > 0;) {
    const UOp& op = g.ops[i];
    bool wanted = false;
    for (TensorId t : op.outputs) wanted |= need[static_cast<size_t>(t)];
    if (!wanted) continue;
    keep_op[i] = true;
    for (TensorId t : op.inputs) need[static_cast<size_t>(t)] = true;
  }
  UGraph u;
  u.name = g.name;
  std::map<TensorId, TensorId> id;
  auto copy = [&](TensorId t) {
    auto it = id.find(t);
    if (it != id.end()) return it->second;
    const UTensor& src = g.tensor(t);
    bool kernel = src.level == Level::Kernel;
    bool input = std::find(g.inputs.begin(), g.inputs.end(), t) != g.inputs.end();
    std::string name = input ? src.name : (kernel ? "t" : "b") + std::to_string(u.tensors.size());
    TensorId n = u.add_tensor(name, src.dtype, src.shape, src.level);
    id[t] = n;
    return n;
  };
  auto remap = [&](UOp op) {
    for (TensorId& t : op.inputs) t = copy(t);
    for (TensorId& t : op.outputs) t = copy(t);
    return op;
  };
  for (TensorId t : g.inputs) u.inputs.push_back(copy(t));
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (!keep_op[i]) continue;
    UOp op = g.ops[i];
    if (op.type == UOpType::Block) {
      BlockGraph b = g.blocks[static_cast<size_t>(op.body)];
      for (UOp& bop : b.ops) bop = remap(bop);
      op = remap(op);
      op.body = static_cast<int32_t>(u.blocks.size());
      u.blocks.push_back(std::move(b));
    } else {
      op = remap(op);
    }
    u.ops.push_back(std::move(op));
  }
  TensorId result = id.at(out);
  if (u.shape(result) != shape) {
    UOp view;
    view.type = UOpType::Reshape;
    view.inputs = {result};
    view.shape = shape;
    result = u.add_tensor("t" + std::to_string(u.tensors.size()), u.tensor(result).dtype, shape, Level::Kernel);
    view.outputs = {result};
    u.ops.push_back(view);
  }
  u.outputs = {result};
  verify(u);
  return u;
}

}  // namespace detail

namespace {

void add(SearchStats& into, const SearchStats& s) {
  into.kernel_ops_tried += s.kernel_ops_tried;
  into.block_ops_tried += s.block_ops_tried;
  into.blocks_opened += s.blocks_opened;
  into.blocks_closed += s.blocks_closed;
  into.pruned_shape += s.pruned_shape;
  into.pruned_dims += s.pruned_dims;
  into.pruned_memory += s.pruned_memory;
  into.pruned_abstract += s.pruned_abstract;
  into.pruned_canonical += s.pruned_canonical;
  into.candidates += s.candidates;
  into.screened += s.screened;
  into.rejected += s.rejected;
  into.timed_out |= s.timed_out;
  OracleStats& o = into.oracle;
  o.queries += s.oracle.queries;
  o.cache_hits += s.oracle.cache_hits;
  o.proven += s.oracle.proven;
  o.refuted += s.oracle.refuted;
  o.unknown += s.oracle.unknown;
  o.solver_seconds += s.oracle.solver_seconds;
  o.solver_calls += s.oracle.solver_calls;
  o.precheck_proven += s.oracle.precheck_proven;
  o.precheck_refuted += s.oracle.precheck_refuted;
}

}  // namespace

SearchResult search(const ir::Graph& program, const SearchOptions& o) {
  auto start = detail::Clock::now();
  auto deadline = start + std::chrono::milliseconds(static_cast<int64_t>(o.time_limit_s * 1000));
  int count = std::max(1, o.threads);
  std::vector<std::unique_ptr<detail::Worker>> workers;
  for (int i = 0; i < count; ++i) workers.push_back(std::make_unique<detail::Worker>(program, o, i, count, deadline));
  SearchResult result;
  if (!workers[0]->unsupported().empty()) {
    result.unsupported = workers[0]->unsupported();
    return result;
  }
  std::vector<std::thread> threads;
  for (int i = 1; i < count; ++i) threads.emplace_back([&, i] { workers[static_cast<size_t>(i)]->run(); });
  workers[0]->run();
  for (std::thread& t : threads) t.join();
  // Merged in a fixed order: cheapest first, ties by text; each verified in full.
  std::vector<detail::Screened> all;
  std::set<std::string> texts;
  for (auto& w : workers) {
    add(result.stats, w->stats);
    for (detail::Screened& s : w->screened)
      if (texts.insert(s.text).second) all.push_back(std::move(s));
  }
  std::sort(all.begin(), all.end(), [](const detail::Screened& a, const detail::Screened& b) {
    return a.cost != b.cost ? a.cost < b.cost : a.text < b.text;
  });
  for (detail::Screened& s : all) {
    if (static_cast<int>(result.found.size()) >= o.max_results) {
      result.unverified.push_back(std::move(s.g));
      continue;
    }
    verify::Verdict v = check_ugraph(program, s.g);
    if (v.outcome != verify::Outcome::Equivalent) {
      ++result.stats.rejected;
      continue;
    }
    ++result.stats.verified;
    result.found.push_back(std::move(s.g));
    result.cost.push_back(s.cost);
  }
  result.stats.seconds = std::chrono::duration<double>(detail::Clock::now() - start).count();
  return result;
}

std::string describe(const SearchStats& s) {
  std::ostringstream os;
  os << s.seconds << " s" << (s.timed_out ? " (time limit reached)" : "") << "; operators tried: "
     << s.kernel_ops_tried << " kernel, " << s.block_ops_tried << " block; block graphs: " << s.blocks_opened
     << " opened, " << s.blocks_closed << " closed; pruned: " << s.pruned_canonical
     << " by canonical form, " << s.pruned_shape << " by shape, " << s.pruned_dims << " by dim classes, " << s.pruned_memory << " by memory, "
     << s.pruned_abstract << " by abstract expression; candidates " << s.candidates << ", screened "
     << s.screened << ", verified " << s.verified << ", rejected " << s.rejected << "; solver: "
     << s.oracle.queries << " queries (" << s.oracle.cache_hits << " cached, " << s.oracle.solver_calls
     << " to Z3 in " << s.oracle.solver_seconds << " s, " << s.oracle.unknown << " unknown)";
  return os.str();
}

}  // namespace orchid::superopt
