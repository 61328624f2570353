// Partitioning a large primitive graph into subgraphs that are orchestrated one at a time, so
// that the number of execution states of each stays tractable (Korch §4: it grows
// exponentially with the width of a graph; DESIGN.md "orchestrate").
//
// Subgraphs are runs of consecutive nodes in node order (a topological order), so each is
// convex and every edge between subgraphs goes forward. A cut between two runs forces the
// values crossing it — produced before it and read after it — to memory: the earlier subgraph
// must write them, later ones read them as inputs, and no kernel spans the cut.
//
// Cut positions are chosen by dynamic programming over node positions: runs of at most
// max_nodes nodes minimising first the number of values crossing the cuts (a value crossing
// k cuts counts k times), then the number of runs; ties go to the earliest cut. A run with
// more than max_states execution states is split again the same way with half its length
// (down to single nodes, which have two states). Cuts inside the keep_whole ranges cost as
// many values as no graph has.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace orchid::orchestrate {

struct PartitionOptions {
  int max_nodes = 32;          // nodes per subgraph (at most kMaxSubgraphNodes)
  int64_t max_states = 1500;   // execution states per subgraph
  // Node ranges [first, last] (ids) that a cut splits only where no other cut can do: those
  // of candidates other generators propose (optimal.h), which a cut through would leave out.
  // A cut inside one counts as 2^32 values crossing.
  std::vector<std::pair<int32_t, int32_t>> keep_whole;
};

struct Subgraph {
  std::vector<ir::NodeId> nodes;      // consecutive ids, increasing
  std::vector<ir::ValueId> required;  // values its nodes produce that must be written: graph
                                      // outputs and values read by later subgraphs; increasing
};

// The boundary before node `before`: the values produced before it and read after it.
struct Cut {
  ir::NodeId before;
  std::vector<ir::ValueId> values;  // increasing
};

struct Partition {
  std::vector<Subgraph> subgraphs;  // in node order; empty for a graph without nodes
  std::vector<Cut> cuts;            // one between each two consecutive subgraphs
};

Partition partition_graph(const ir::Graph& g, const PartitionOptions& o);

}  // namespace orchid::orchestrate
