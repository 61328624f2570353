// Orchestration strategies that need no solver (DESIGN.md, "Orchestration strategies"): they
// partition a primitive graph into kernels by fixed rules, for ablation against the BLP and
// for users who want a framework's behaviour.
//
// A kernel (tile::Kernel) is a convex set of primitives (Korch §4, Definition 1: no path
// leaves the set and re-enters it) plus the values it writes to memory. Every strategy here
// returns a partition: each primitive in exactly one kernel, kernels in an execution order,
// and each kernel's outputs exactly the values that must be materialised — those read by
// another kernel or listed as graph outputs (sorted by value id). Kernels list their nodes in
// increasing id order; the kernel order is the topological order of the kernel graph that
// takes, among the kernels ready to run, the one whose first node comes first. The same graph
// always gives the same kernels.
//
// ---- primitive ----  one kernel per primitive, in node order.
//
// ---- per-op ----  one kernel per source ONNX op, as a framework runs it. Primitive::name is
// the provenance (fission gives every primitive of one ONNX node that node's name). Nodes are
// visited in order; a node with an empty name is a kernel of its own; otherwise it joins a
// kernel of the same name if the kernels stay orderable (see greedy) and the kernel keeps an
// opaque primitive alone and at most one linear primitive — first a kernel holding one of its
// producers (latest producer first), then any other of that name (latest created first). An
// op whose primitives do not form a convex set is split into convex pieces this way.
//
// ---- greedy ----  rule-based fusion as TVM (FuseOps) and TensorRT do. Primitives have a
// pattern: injective (elementwise, broadcast, layout, view), reduction (reduce), linear
// (matmul, conv) or opaque. A group has a kind: injective (only injective primitives so far),
// reduction (a reduction and what fused around it), linear (one linear primitive and its
// epilogue) or opaque (one opaque primitive). A node is *constant* when it depends on no graph
// input (views of weights, statistics computed from them: work that can run once, at load
// time); constant and other nodes never share a group, so a conv's bias add joins the conv and
// not the view of its bias. Nodes are visited in order; a node n may join the group G of one
// of its producers when all of:
//   (0) n and G are both constant or both not;
//   (1) the rule table allows it:
//         G injective: n injective (an injective chain) or n a reduction (the reduction
//                      absorbs its injective prologue; G becomes a reduction group);
//         G reduction: n elementwise, broadcast or view (the epilogue; when G has rows P,
//                      n's domain must start with P), or n a reduction over the same rows P
//                      (both row reductions, below);
//         G linear:    n elementwise (bias, activation, residual add — the epilogue), or,
//                      for a conv, n a view or permutation (ir/movement.h) of the group's
//                      latest result; after one, no further elementwise node joins;
//         G opaque:    nothing.
//       An opaque node never joins a group; a linear node joins only, when it is a conv, the
//       group giving it its src when that group holds nothing but views and permutations
//       and writes no graph output (a transformer's tokens [1, HW, C] transposed and viewed
//       as NCHW); a view or permutation joins a conv only when the value it reads is no graph
//       output (a oneDNN step writes one output): a linear primitive
//       absorbs no other prologue and never shares a kernel with a reduction or another
//       linear primitive. A view or permutation whose result reaches a conv's src through
//       views and permutations only joins nothing but such a group, and never a conv's
//       epilogue. So a conv between two permutations is one kernel, which a oneDNN step runs
//       channels-last in place (onednn_pattern.h).
//   (2) no value n reads from G is materialised (below);
//   (3) the kernels stay orderable (below);
//   (4) G holds fewer than 256 primitives (grouping.h: a longer chain would make one
//       expression too deep to emit and too large to compile).
// Candidates are tried in decreasing order of the producer's id (the latest producer's group
// first, which is also the one least likely to break convexity); the first allowed is taken,
// else n starts a new group of its own kind.
//
// Orderable. Joining n to G must leave no path in the kernel graph (an edge X -> Y where a
// node of X feeds one of Y) from G to a kernel holding a producer of n. Then the kernel graph
// stays acyclic and G ∪ {n} convex. Convexity of each kernel alone is not enough for a
// partition: convex kernels {a, a'} and {b, b'} with edges a -> b and b' -> a' each need an
// output of the other.
//
// Rows. A reduce primitive with domain D is a *row reduction over rows P = D[0:k]* for the
// largest k such that D[j] = 1 for every j ≥ k, every load in its bodies has index j equal to
// the domain variable ij for j < k, and no domain variable appears anywhere else (in the
// other indices, in predicates or outside loads). So a task computing one row p ∈ P reads
// only row p of its inputs and reduces their trailing dims: softmax or layer normalisation
// over the last axes of [B, S, N] (domain [B, S, 1] or [B, S], loads x[i0, i1, r0]) has rows
// [B, S]. Two reductions are over the same rows when both are row reductions with equal P. A
// reduction group records the rows of its reductions (none when its first reduction is not a
// row reduction; such a group takes epilogues of any domain but no further reduction). Hence
// softmax (reduce-max, broadcast, sub, exp, reduce-sum, broadcast, div) and layer
// normalisation (moments, then the normalisation) over trailing axes are one kernel each; a
// softmax over a middle axis is not (its reductions are not row reductions).
//
// Materialised values. A value with several consumers is materialised — its producer ends a
// kernel — unless all its consumers are in the producer's kernel. After a pass over all
// nodes, every value read both inside and outside its producer's group is marked
// materialised, and the pass runs again; marks only accumulate, so this stops (in practice
// after one or two passes). Graph outputs are written to memory too, but do not stop fusion.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "tile/kernel.h"

namespace orchid::orchestrate {

// Optimal is the BLP of optimal.h: it needs costs, so orchestrate() does not take it.
enum class Strategy { Primitive, PerOp, Greedy, Optimal };

// "primitive", "per-op", "greedy", "optimal"; nullopt for anything else.
std::optional<Strategy> parse_strategy(std::string_view text);

// The strategy of a compile that names none: optimal where kernels are measured on this CPU;
// greedy for a GPU (the cost loop measures on the CPU) and without measuring (then nothing
// checks the BLP's analytic choice against greedy's plan).
Strategy default_strategy(bool cuda, bool measuring);
std::string_view strategy_name(Strategy s);

// Kernels in an execution order: every kernel's inputs are graph inputs, constants or outputs
// of earlier kernels. The result passes check_kernels.
std::vector<tile::Kernel> orchestrate(const ir::Graph& g, Strategy s);

// What is wrong with `kernels` as a partition of g into kernels, one message per problem
// (empty when it is valid): a node in no kernel or in two; an empty kernel; a kernel that is
// not convex; an opaque primitive sharing its kernel; two linear primitives in one kernel; a
// kernel output that no node of the kernel computes, listed twice, or that neither a later
// kernel reads nor the graph outputs (extra); a value read by another kernel or listed as a
// graph output that its kernel does not output (missing); a kernel reading a value that a
// later kernel computes (order). Messages name the kernel by position and nodes as the
// verifier does (`node 3 (%y = reduce, from "Softmax_1")`).
std::vector<std::string> kernel_problems(const ir::Graph& g, const std::vector<tile::Kernel>& kernels);

// InternalError listing kernel_problems unless there are none.
void check_kernels(const ir::Graph& g, const std::vector<tile::Kernel>& kernels);

}  // namespace orchid::orchestrate
