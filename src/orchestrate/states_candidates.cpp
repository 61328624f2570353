// Candidate kernels from pairs of execution states, and the pruning rules (states.h).
#include <algorithm>

#include "orchestrate/states.h"
#include "support/error.h"

namespace orchid::orchestrate {

namespace {

// What a node-set rule sees.
struct SetInput {
  const LocalGraph& lg;
  const CandidateOptions& o;
  const NodeSet& set;
};

bool connected(const LocalGraph& lg, const NodeSet& set) {
  size_t first = set._Find_first();
  NodeSet reached, frontier;
  frontier.set(first);
  while (frontier.any()) {
    reached |= frontier;
    NodeSet next;
    for (size_t i = frontier._Find_first(); i < frontier.size(); i = frontier._Find_next(i))
      next |= lg.preds[i] | lg.succs[i];
    frontier = next & set & ~reached;
  }
  return reached == set;
}

// A rule keeps a node set or drops it; a rule that is switched off keeps everything.
struct NodeSetRule {
  const char* rule;
  const char* meaning;
  bool (*keep)(const SetInput&);
};

const NodeSetRule kNodeSetRules[] = {
    {"max-primitives", "at most CandidateOptions::max_primitives primitives per kernel",
     [](const SetInput& in) { return static_cast<int>(in.set.count()) <= in.o.max_primitives; }},
    {"connected", "a kernel's primitives are weakly connected",
     [](const SetInput& in) { return !in.o.connected || connected(in.lg, in.set); }},
    {"opaque-alone", "an opaque primitive is a kernel of its own",
     [](const SetInput& in) { return !in.o.opaque_alone || (in.set & in.lg.opaque).none() || in.set.count() == 1; }},
    {"one-linear", "at most one linear primitive, fused only with elementwise primitives, views and permutations",
     [](const SetInput& in) {
       NodeSet linear = in.set & in.lg.linear;
       if (!in.o.one_linear || linear.none()) return true;
       return linear.count() == 1 && (in.set & ~linear & ~in.lg.linear_company).none();
     }},
};
constexpr size_t kNumNodeSetRules = std::size(kNodeSetRules);

const PruneRow kOutputRows[] = {
    {"max-outputs", "at most CandidateOptions::max_outputs written values, or all possible outputs", 0, 0},
    {"sinks-written", "every primitive with no consumer in its kernel writes a value", 0, 0},
};

// Enumerates the output sets of one node set: subsets of its possible outputs `po` (indices
// into lg.values) of at most max_outputs values in lexicographic order, then the set of all
// of them when larger; counts both output rules.
class OutputSets {
 public:
  OutputSets(const LocalGraph& lg, const NodeSet& set, std::vector<int32_t> po, const CandidateOptions& o,
             std::vector<PruneRow>& rows)
      : lg_(lg), po_(std::move(po)), max_(o.max_outputs), rows_(rows) {
    for (size_t i = set._Find_first(); i < set.size(); i = set._Find_next(i))
      if ((lg.succs[i] & set).none()) sinks_.set(i);
    // All non-empty subsets, saturating (a count past 2^62 is not meant to be read).
    size_t m = std::min<size_t>(po_.size(), 62);
    int64_t& before = rows_[kNumNodeSetRules].before;
    before = std::min(before + ((int64_t{1} << m) - 1), int64_t{1} << 62);
  }

  // Calls emit(values) for each output set that passes both rules.
  template <class Emit>
  void run(Emit emit) {
    std::vector<int32_t> pick;
    choose(0, pick, emit);
    if (static_cast<int>(po_.size()) > max_) offer(po_, emit);
  }

 private:
  template <class Emit>
  void choose(size_t from, std::vector<int32_t>& pick, Emit& emit) {
    for (size_t i = from; i < po_.size(); ++i) {
      pick.push_back(po_[i]);
      offer(pick, emit);
      if (static_cast<int>(pick.size()) < max_) choose(i + 1, pick, emit);
      pick.pop_back();
    }
  }

  template <class Emit>
  void offer(const std::vector<int32_t>& values, Emit& emit) {
    ++rows_[kNumNodeSetRules].after;
    ++rows_[kNumNodeSetRules + 1].before;
    NodeSet written;
    for (int32_t v : values) written.set(static_cast<size_t>(lg_.values[static_cast<size_t>(v)].producer));
    if ((sinks_ & ~written).any()) return;
    ++rows_[kNumNodeSetRules + 1].after;
    emit(values);
  }

  const LocalGraph& lg_;
  std::vector<int32_t> po_;
  int max_;
  NodeSet sinks_;
  std::vector<PruneRow>& rows_;
};

// The rows of the table before anything is counted.
std::vector<PruneRow> empty_rows() {
  std::vector<PruneRow> rows;
  for (const NodeSetRule& r : kNodeSetRules) rows.push_back({r.rule, r.meaning, 0, 0});
  for (const PruneRow& r : kOutputRows) rows.push_back(r);
  return rows;
}

// Whether the node set passes every node-set rule, counting each.
bool keep_node_set(const SetInput& in, std::vector<PruneRow>& rows) {
  for (size_t r = 0; r < kNumNodeSetRules; ++r) {
    ++rows[r].before;
    if (!kNodeSetRules[r].keep(in)) return false;
    ++rows[r].after;
  }
  return true;
}

// The candidates of one node set that passed the node-set rules.
void add_candidates(const LocalGraph& lg, const NodeSet& set, const CandidateOptions& o, CandidateSet& out) {
  std::vector<int32_t> po;
  std::vector<ir::ValueId> reads;
  for (size_t k = 0; k < lg.values.size(); ++k) {
    const LocalValue& lv = lg.values[k];
    bool inside = set.test(static_cast<size_t>(lv.producer));
    if (inside && (lv.external || (lv.consumers & ~set).any())) po.push_back(static_cast<int32_t>(k));
    if (!inside && (lv.consumers & set).any()) reads.push_back(lv.id);
  }
  std::vector<ir::NodeId> nodes;
  for (size_t i = set._Find_first(); i < set.size(); i = set._Find_next(i)) nodes.push_back(lg.nodes[i]);
  OutputSets sets(lg, set, std::move(po), o, out.pruning);
  sets.run([&](const std::vector<int32_t>& values) {
    Candidate c;
    c.set = set;
    c.kernel.nodes = nodes;
    c.reads = reads;
    for (int32_t v : values) c.kernel.outputs.push_back(lg.values[static_cast<size_t>(v)].id);
    out.candidates.push_back(std::move(c));
  });
}

}  // namespace

CandidateSet enumerate_candidates(const LocalGraph& lg, const std::vector<NodeSet>& states, const CandidateOptions& o) {
  ORCHID_CHECK(o.max_primitives >= 1 && o.max_outputs >= 1) << "candidate limits must be at least 1";
  CandidateSet out;
  out.pruning = empty_rows();
  for (const NodeSet& d2 : states) {
    NodeSet maximal;  // nodes of d2 without a successor in d2
    for (size_t i = d2._Find_first(); i < d2.size(); i = d2._Find_next(i))
      if ((lg.succs[i] & d2).none()) maximal.set(i);
    for (const NodeSet& d1 : states) {
      // The canonical pair of d2 \ d1: d1 ⊂ d2 and no maximal node of d2 in d1.
      if ((d1 & ~d2).any() || (d1 & maximal).any() || d1 == d2) continue;
      NodeSet set = d2 & ~d1;
      if (!keep_node_set({lg, o, set}, out.pruning)) continue;
      ++out.node_sets;
      add_candidates(lg, set, o, out);
    }
  }
  return out;
}

}  // namespace orchid::orchestrate
