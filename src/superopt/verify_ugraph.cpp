// verify(UGraph): the structural rules of μGraphs (ugraph.h), each broken one reported with
// the operator and tensor that break it.
#include <set>

#include "superopt/ugraph.h"
#include "support/error.h"

namespace orchid::superopt {

namespace {

class Verifier {
 public:
  explicit Verifier(const UGraph& g)
      : g_(g), defined_(g.tensors.size(), false), block_used_(g.blocks.size(), false),
        thread_used_(g.threads.size(), false) {}

  void run() {
    names();
    for (TensorId t : g_.inputs) define(t, Level::Kernel, "graph input");
    for (size_t i = 0; i < g_.ops.size(); ++i) kernel_op(g_.ops[i], i);
    for (TensorId t : g_.outputs) {
      check_id(t, "graph output");
      need(defined_[static_cast<size_t>(t)], "graph output %" + g_.tensor(t).name + " is never computed");
      need(g_.tensor(t).level == Level::Kernel, "graph output %" + g_.tensor(t).name + " is not a kernel tensor");
    }
    need(!g_.outputs.empty(), "has no outputs");
    for (size_t t = 0; t < g_.tensors.size(); ++t)
      need(defined_[t], "tensor %" + g_.tensors[t].name + " is never computed");
    for (size_t b = 0; b < g_.blocks.size(); ++b) need(block_used_[b], "block graph " + std::to_string(b) + " is used by no operator");
    for (size_t t = 0; t < g_.threads.size(); ++t) need(thread_used_[t], "thread graph " + std::to_string(t) + " is used by no operator");
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw UserError("μgraph @" + g_.name + ": " + where_ + (where_.empty() ? "" : ": ") + msg);
  }
  void need(bool cond, const std::string& msg) const {
    if (!cond) fail(msg);
  }

  void names() {
    std::set<std::string_view> seen;
    for (const UTensor& t : g_.tensors) {
      need(!t.name.empty(), "a tensor has no name");
      need(seen.insert(t.name).second, "two tensors are named %" + t.name);
      for (int64_t d : t.shape) need(d >= 1, "tensor %" + t.name + " has shape " + ir::dims_str(t.shape));
    }
  }

  void check_id(TensorId t, const std::string& what) const {
    need(t >= 0 && static_cast<size_t>(t) < g_.tensors.size(), what + " names tensor " + std::to_string(t) + ", which does not exist");
  }

  void define(TensorId t, Level level, const std::string& what) {
    check_id(t, what);
    const UTensor& u = g_.tensor(t);
    need(!defined_[static_cast<size_t>(t)], "%" + u.name + " is computed twice");
    need(u.level == level, what + " %" + u.name + " is a " + std::string(level_name(u.level)) +
                               " tensor, not a " + std::string(level_name(level)) + " one");
    defined_[static_cast<size_t>(t)] = true;
  }

  void use(TensorId t, Level level) const {
    check_id(t, "an input");
    const UTensor& u = g_.tensor(t);
    need(defined_[static_cast<size_t>(t)], "reads %" + u.name + " before it is computed");
    need(u.level == level, "reads %" + u.name + ", a " + std::string(level_name(u.level)) +
                               " tensor, where " + std::string(level_name(level)) + " tensors live");
  }

  std::string describe(const UOp& op, const char* level, size_t index) const {
    std::string s = std::string(level) + " op " + std::to_string(index) + " (" + std::string(uop_name(op.type));
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      TensorId t = op.outputs[i];
      bool ok = t >= 0 && static_cast<size_t>(t) < g_.tensors.size();
      s += (i ? ", %" : " → %") + (ok ? g_.tensor(t).name : std::string("?"));
    }
    return s + ")";
  }

  // Shapes of op's outputs must be what its inputs and attributes give.
  void shapes(const UOp& op, const BlockGraph* block) const {
    std::vector<ir::Dims> in;
    for (TensorId t : op.inputs) in.push_back(g_.shape(t));
    Shapes s = infer_shapes(op, in, block);
    need(s.error.empty(), s.error);
    need(s.out.size() == op.outputs.size(), "has " + std::to_string(op.outputs.size()) + " outputs, expected " + std::to_string(s.out.size()));
    for (size_t i = 0; i < s.out.size(); ++i)
      need(g_.shape(op.outputs[i]) == s.out[i], "%" + g_.tensor(op.outputs[i]).name + " has shape " +
                                                     ir::dims_str(g_.shape(op.outputs[i])) + ", the operator gives " + ir::dims_str(s.out[i]));
  }

  void kernel_op(const UOp& op, size_t index) {
    where_ = describe(op, "kernel", index);
    need(uop_allowed(op.type, Level::Kernel), "is not a kernel operator");
    for (TensorId t : op.inputs) use(t, Level::Kernel);
    if (op.type == UOpType::Block) {
      block(op);
      where_ = describe(op, "kernel", index);
    } else {
      shapes(op, nullptr);
    }
    for (TensorId t : op.outputs) define(t, Level::Kernel, "result");
  }

  void block(const UOp& op) {
    need(op.body >= 0 && static_cast<size_t>(op.body) < g_.blocks.size(), "names block graph " + std::to_string(op.body) + ", which does not exist");
    need(!block_used_[static_cast<size_t>(op.body)], "reuses block graph " + std::to_string(op.body));
    block_used_[static_cast<size_t>(op.body)] = true;
    const BlockGraph& b = g_.blocks[static_cast<size_t>(op.body)];
    need(!b.grid.empty() && b.grid.size() <= 3, "a grid has 1 to 3 dims, not " + std::to_string(b.grid.size()));
    for (int64_t n : b.grid) need(n >= 1, "grid " + ir::dims_str(b.grid) + " has an empty dim");
    need(b.loop >= 1, "the for-loop runs " + std::to_string(b.loop) + " times");
    std::string outer = where_;
    size_t next_in = 0, next_out = 0;
    std::vector<bool> read(g_.tensors.size(), false);
    for (size_t i = 0; i < b.ops.size(); ++i) {
      const UOp& bop = b.ops[i];
      where_ = outer + ", block " + describe(bop, "", i).substr(1);
      need(uop_allowed(bop.type, Level::Block), "is not a block operator");
      if (bop.type == UOpType::InIter) {
        need(next_in < op.inputs.size() && bop.inputs.size() == 1 && bop.inputs[0] == op.inputs[next_in],
             "in_iter ops must read the block operator's inputs, in order, one each");
        ++next_in;
        shapes(bop, &b);
        for (TensorId t : bop.outputs) define(t, Level::Block, "in_iter result");
        continue;
      }
      for (TensorId t : bop.inputs) {
        use(t, Level::Block);
        read[static_cast<size_t>(t)] = true;
      }
      if (bop.type == UOpType::OutAccum) {
        need(next_out < op.outputs.size() && bop.outputs.size() == 1 && bop.outputs[0] == op.outputs[next_out],
             "out_accum ops must write the block operator's outputs, in order, one each");
        ++next_out;
        shapes(bop, &b);
        continue;  // the kernel operator defines its outputs
      }
      need(next_out == 0, "follows an out_accum: out_accum ops come last");
      if (bop.type == UOpType::Thread) {
        thread(bop);
        continue;
      }
      shapes(bop, &b);
      for (TensorId t : bop.outputs) define(t, Level::Block, "result");
    }
    where_ = outer;
    need(next_in == op.inputs.size(), "has " + std::to_string(op.inputs.size()) + " inputs but " + std::to_string(next_in) + " in_iter ops");
    need(next_out == op.outputs.size(), "has " + std::to_string(op.outputs.size()) + " outputs but " + std::to_string(next_out) + " out_accum ops");
    for (const UOp& bop : b.ops)
      for (TensorId t : bop.outputs)
        if (g_.tensor(t).level == Level::Block)
          need(read[static_cast<size_t>(t)], "block tensor %" + g_.tensor(t).name + " is never read");
  }

  void thread(const UOp& op) {
    need(op.body >= 0 && static_cast<size_t>(op.body) < g_.threads.size(), "names thread graph " + std::to_string(op.body) + ", which does not exist");
    need(!thread_used_[static_cast<size_t>(op.body)], "reuses thread graph " + std::to_string(op.body));
    thread_used_[static_cast<size_t>(op.body)] = true;
    const ThreadGraph& tg = g_.threads[static_cast<size_t>(op.body)];
    std::set<TensorId> inputs(op.inputs.begin(), op.inputs.end()), stored(op.outputs.begin(), op.outputs.end());
    std::set<TensorId> mine, read;
    for (const UOp& top : tg.ops) {
      need(uop_allowed(top.type, Level::Thread), std::string(uop_name(top.type)) + " is not a thread operator");
      for (TensorId t : top.inputs) {
        check_id(t, "a thread operand");
        need(inputs.count(t) || mine.count(t), "a thread operator reads %" + g_.tensor(t).name + ", which is neither an input of the thread graph nor computed in it");
        read.insert(t);
      }
      shapes(top, nullptr);
      for (TensorId t : top.outputs) {
        define(t, stored.count(t) ? Level::Block : Level::Thread, "thread result");
        mine.insert(t);
      }
    }
    for (TensorId t : op.outputs) need(mine.count(t) > 0, "stores %" + g_.tensor(t).name + ", which it does not compute");
    for (TensorId t : mine) need(stored.count(t) || read.count(t), "thread result %" + g_.tensor(t).name + " is neither read nor stored");
  }

  const UGraph& g_;
  std::vector<bool> defined_;
  std::vector<bool> block_used_;
  std::vector<bool> thread_used_;
  std::string where_;
};

}  // namespace

void verify(const UGraph& g) { Verifier(g).run(); }

}  // namespace orchid::superopt
