// print_ugraph: the text form (text.h). The parser reads back exactly what this writes.
#include <cstdio>
#include <sstream>

#include "ir/text_internal.h"
#include "superopt/text.h"

namespace orchid::superopt {

namespace {

class Printer {
 public:
  explicit Printer(const UGraph& g) : g_(g) {}

  std::string run() {
    os_ << "ugraph @" << name(g_.name) << " {\n";
    for (TensorId t : g_.inputs) os_ << "  input " << ref(t) << " : " << type(t) << "\n";
    for (const UOp& op : g_.ops) kernel_op(op);
    os_ << "  output ";
    for (size_t i = 0; i < g_.outputs.size(); ++i) os_ << (i ? ", " : "") << ref(g_.outputs[i]);
    os_ << "\n}\n";
    return os_.str();
  }

 private:
  static std::string name(const std::string& n) {
    return ir::detail::is_plain_name(n) ? n : ir::detail::quote_string(n);
  }
  std::string ref(TensorId t) const { return "%" + name(g_.tensor(t).name); }
  std::string type(TensorId t) const {
    const UTensor& u = g_.tensor(t);
    return std::string(ir::dtype_name(u.dtype)) + ir::dims_str(u.shape);
  }
  std::string operands(const UOp& op) const {
    std::string s = "(";
    for (size_t i = 0; i < op.inputs.size(); ++i) s += (i ? ", " : "") + ref(op.inputs[i]);
    return s + ")";
  }
  static std::string dim(int32_t d) { return d == kReplica ? "rep" : std::to_string(d); }
  static std::string map(const DimMap& m, const char* grid_name) {
    std::string s = std::string(" ") + grid_name + "=[";
    for (size_t i = 0; i < m.grid.size(); ++i) s += (i ? "," : "") + dim(m.grid[i]);
    return s + "] fmap=" + dim(m.loop);
  }

  std::string attrs(const UOp& op) const {
    switch (op.type) {
      case UOpType::Sum:
      case UOpType::Repeat: return " dim=" + std::to_string(op.dim) + " k=" + std::to_string(op.k);
      case UOpType::InIter: return map(op.map, "imap");
      case UOpType::OutAccum: return map(op.map, "omap");
      case UOpType::Transpose: {
        std::string s = " perm=[";
        for (size_t i = 0; i < op.shape.size(); ++i) s += (i ? "," : "") + std::to_string(op.shape[i]);
        return s + "]";
      }
      case UOpType::Scale: {
        char c[48];
        std::snprintf(c, sizeof c, " by=%.9g", op.factor);
        return c;
      }
      case UOpType::Matmul:
      case UOpType::ConcatMatmul:
      case UOpType::Add:
      case UOpType::Mul:
      case UOpType::Div:
      case UOpType::Exp:
      case UOpType::Reshape:
      case UOpType::Block:
      case UOpType::Thread: return "";
    }
    return "";
  }

  void plain_op(const UOp& op, const std::string& indent) {
    os_ << indent;
    for (size_t i = 0; i < op.outputs.size(); ++i)
      os_ << (i ? ", " : "") << ref(op.outputs[i]) << " : " << type(op.outputs[i]);
    os_ << " = " << uop_name(op.type) << operands(op) << attrs(op) << "\n";
  }

  void kernel_op(const UOp& op) {
    if (op.type != UOpType::Block) return plain_op(op, "  ");
    const BlockGraph& b = g_.blocks[static_cast<size_t>(op.body)];
    os_ << "  block" << operands(op) << " grid=" << ir::dims_str(b.grid) << " loop=" << b.loop << " {\n";
    for (const UOp& bop : b.ops) {
      if (bop.type != UOpType::Thread) {
        plain_op(bop, "    ");
        continue;
      }
      os_ << "    thread" << operands(bop) << " store=[";
      for (size_t i = 0; i < bop.outputs.size(); ++i) os_ << (i ? ", " : "") << ref(bop.outputs[i]);
      os_ << "] {\n";
      for (const UOp& top : g_.threads[static_cast<size_t>(bop.body)].ops) plain_op(top, "      ");
      os_ << "    }\n";
    }
    os_ << "  }\n";
  }

  const UGraph& g_;
  std::ostringstream os_;
};

}  // namespace

std::string print_ugraph(const UGraph& g) { return Printer(g).run(); }

}  // namespace orchid::superopt
