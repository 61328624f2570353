#include "superopt/threads.h"

#include <algorithm>
#include <map>

namespace orchid::superopt {

namespace {

// Fuses the trees of one block graph; returns its new operator list.
std::vector<UOp> fuse_block(UGraph& g, const BlockGraph& b) {
  std::map<TensorId, int> readers;
  std::map<TensorId, size_t> producer;
  for (size_t i = 0; i < b.ops.size(); ++i) {
    for (TensorId t : b.ops[i].inputs) ++readers[t];
    for (TensorId t : b.ops[i].outputs) producer[t] = i;
  }
  // root[i]: the operator whose result op i's tree is stored as (itself when not fused into
  // a reader).
  std::vector<size_t> root(b.ops.size());
  for (size_t i = b.ops.size(); i-- > 0;) {
    root[i] = i;
    const UOp& op = b.ops[i];
    if (!is_elementwise(op.type) || readers[op.outputs[0]] != 1) continue;
    for (size_t j = i + 1; j < b.ops.size(); ++j) {
      const UOp& r = b.ops[j];
      bool reads = std::find(r.inputs.begin(), r.inputs.end(), op.outputs[0]) != r.inputs.end();
      if (reads && is_elementwise(r.type)) root[i] = root[j];
      if (reads) break;
    }
  }
  std::map<size_t, std::vector<size_t>> members;  // root -> its tree's operators, in order
  for (size_t i = 0; i < b.ops.size(); ++i) members[root[i]].push_back(i);
  std::vector<UOp> out;
  for (size_t i = 0; i < b.ops.size(); ++i) {
    if (root[i] != i) continue;  // emitted with its root
    const std::vector<size_t>& tree = members[i];
    if (tree.size() < 2) {
      out.push_back(b.ops[i]);
      continue;
    }
    UOp thread;
    thread.type = UOpType::Thread;
    ThreadGraph tg;
    for (size_t k : tree) {
      const UOp& op = b.ops[k];
      for (TensorId t : op.inputs) {
        auto p = producer.find(t);
        bool inside = p != producer.end() && root[p->second] == i;
        if (!inside && std::find(thread.inputs.begin(), thread.inputs.end(), t) == thread.inputs.end())
          thread.inputs.push_back(t);
      }
      if (k != i) g.tensors[static_cast<size_t>(op.outputs[0])].level = Level::Thread;
      tg.ops.push_back(op);
    }
    thread.outputs = {b.ops[i].outputs[0]};
    thread.body = static_cast<int32_t>(g.threads.size());
    g.threads.push_back(std::move(tg));
    out.push_back(std::move(thread));
  }
  return out;
}

}  // namespace

UGraph with_thread_graphs(const UGraph& g) {
  UGraph out = g;
  for (BlockGraph& b : out.blocks) {
    BlockGraph copy = b;
    b.ops = fuse_block(out, copy);
  }
  verify(out);
  return out;
}

}  // namespace orchid::superopt
