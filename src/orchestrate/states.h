// Execution states and candidate kernels of one subgraph (Korch §4.1, Algorithm 1).
//
// An execution state is a down-closed set of primitives: with a node it holds all its
// producers (Definition 2). Every convex set of primitives is the difference D2 \ D1 of two
// states D1 ⊂ D2 (Theorem 1), and each such set is a candidate kernel's primitives. A
// candidate kernel is such a set plus the values it writes to memory: a subset of its
// *possible outputs* — the values its primitives produce that a primitive outside the set
// reads or the graph outputs (Definition 3, per value rather than per primitive, since a
// primitive may have several outputs). Several outputs per kernel are allowed.
//
// Each convex set P is generated exactly once, from its canonical pair: D2 = the down-closure
// of P and D1 = D2 \ P. A pair D1 ⊂ D2 is canonical iff no maximal node of D2 (one without a
// successor in D2) lies in D1; so distinct sets are counted and listed without a hash table.
//
// Pruning is data: kNodeSetRules below filters node sets in order, then output sets are
// chosen by kOutputRules; each rule's counts before and after it are returned (PruneRow) for
// the report. Costs are not known here: the caller drops candidates its cost oracle cannot
// price (the "finite-cost" row).
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tile/kernel.h"

namespace orchid::orchestrate {

// The most primitives one subgraph may hold (the partition keeps subgraphs far smaller).
inline constexpr int kMaxSubgraphNodes = 128;
// A set of a subgraph's nodes by local index (position in LocalGraph::nodes).
using NodeSet = std::bitset<kMaxSubgraphNodes>;

// A value that a node of the subgraph produces.
struct LocalValue {
  ir::ValueId id;
  int32_t producer = 0;  // local index
  NodeSet consumers;     // local consumers
  bool external = false; // a graph output, or read by a node outside the subgraph
};

// The nodes of a subgraph with local indices, the edges between them and their kinds.
struct LocalGraph {
  std::vector<ir::NodeId> nodes;  // local index -> node, increasing (a topological order)
  std::vector<NodeSet> preds;     // per local node: its producers inside the subgraph
  std::vector<NodeSet> succs;     // per local node: its consumers inside the subgraph
  std::vector<LocalValue> values; // values the nodes produce, increasing id
  NodeSet opaque, linear;         // nodes of those kinds
  NodeSet linear_company;         // elementwise nodes, views and permutations: what may join a linear one
  int32_t size() const { return static_cast<int32_t>(nodes.size()); }
};
// `nodes` increasing, at most kMaxSubgraphNodes of them.
LocalGraph local_graph(const ir::Graph& g, const std::vector<ir::NodeId>& nodes);

// Execution states found by depth-first search from the empty state (Algorithm 1), each
// once (deduplicated by a hash set of bitsets that decides nothing about order), in the
// order the search finds them; the empty state first. The search stops once `max_states`
// states are known; `complete` says whether it finished.
struct ExecutionStates {
  std::vector<NodeSet> states;
  bool complete = true;
};
ExecutionStates execution_states(const LocalGraph& lg, int64_t max_states);

// How candidates are pruned. Every limit here is a row of the pruning table.
struct CandidateOptions {
  int max_primitives = 16;     // "max-primitives": primitives per kernel
  bool connected = true;       // "connected": a kernel's primitives are weakly connected
  bool opaque_alone = true;    // "opaque-alone": an opaque primitive is a kernel of its own
  bool one_linear = true;      // "one-linear": at most one linear primitive, and with it only
                               // elementwise primitives, views and permutations (prologue and epilogue)
  int max_outputs = 3;         // "max-outputs": values one kernel writes, except that the set
                               // of all its possible outputs is always a candidate
};

// One rule's effect, summed over whatever was enumerated (node sets for the node-set rules,
// candidates — node set plus output set — for the output rules).
struct PruneRow {
  std::string rule;
  std::string meaning;
  int64_t before = 0;
  int64_t after = 0;
};

// A candidate kernel of a subgraph.
struct Candidate {
  NodeSet set;                      // its primitives, by local index
  tile::Kernel kernel;              // nodes increasing; outputs increasing
  std::vector<ir::ValueId> reads;   // values it reads that nodes of the subgraph produce,
                                    // increasing (others come from graph inputs, constants
                                    // or earlier subgraphs, and are always present)
};

struct CandidateSet {
  std::vector<Candidate> candidates;  // grouped by node set, sets in the order of their pairs
                                      // (D2, then D1, each in state order)
  std::vector<PruneRow> pruning;      // node-set rules, then output rules
  int64_t node_sets = 0;              // convex sets that passed the node-set rules
};

// Candidates of the subgraph `lg` from its states (which must be complete).
CandidateSet enumerate_candidates(const LocalGraph& lg, const std::vector<NodeSet>& states, const CandidateOptions& o);

// Adds `rows` into `total` (same rules in the same order, or `total` empty).
void add_pruning(std::vector<PruneRow>& total, const std::vector<PruneRow>& rows);

}  // namespace orchid::orchestrate
