// Abstract expressions (Mirage §4.3, Table 1): first-order terms that abstract the
// tensor-valued function computed on an edge of a μGraph (or by a primitive of the reference
// program) by ignoring the differences between elements of one tensor.
//
//   input(n)    any element of input tensor n of the program
//   add(a, b)   a + b          mul(a, b)   a · b          div(a, b)   a / b
//   exp(a)      e^a
//   sum(k, a)   a sum of k terms, each abstracted by a (k ≥ 1: the number of elements summed)
//
// Meaning is given only by the axioms of Table 2 (see subexpr_oracle.h); the terms themselves
// are plain syntax. AbsPool interns them: structurally identical terms get the same id, ids
// are dense, assigned in creation order (so a term's operands always have smaller ids than
// the term), and equal sequences of calls give equal ids on every run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace orchid::superopt {

enum class AbsOp : uint8_t { Input, Add, Mul, Div, Exp, Sum };

using AbsId = int32_t;  // index into an AbsPool

struct AbsNode {
  AbsOp op = AbsOp::Input;
  AbsId a = -1;   // first operand (Add, Mul, Div, Exp, Sum); -1 for Input
  AbsId b = -1;   // second operand (Add, Mul, Div); -1 otherwise
  int64_t k = 0;  // Input: the input number; Sum: the extent (≥ 2 once interned); else 0
  bool operator==(const AbsNode&) const = default;
};

// Number of operands of a term of kind op (Input 0, Exp and Sum 1, the others 2).
int abs_op_arity(AbsOp op);
const char* abs_op_name(AbsOp op);

class AbsPool {
 public:
  // The constructors apply only simplifications that are axioms of Table 2 (so a term and its
  // interned form are equal under A_eq):
  //  - add and mul order their operands by id (commutativity), so add(x, y) == add(y, x);
  //  - sum(1, a) is a (identity reduction).
  // Nested sums are kept as written (sum(i, sum(j, x)) is not merged into sum(i·j, x)), so
  // the abstract expression of a μGraph mirrors its structure; the oracle's normal form
  // merges them.
  AbsId input(int64_t n);  // n ≥ 0
  AbsId add(AbsId x, AbsId y);
  AbsId mul(AbsId x, AbsId y);
  AbsId div(AbsId x, AbsId y);
  AbsId exp(AbsId x);
  AbsId sum(int64_t k, AbsId x);  // k ≥ 1

  const AbsNode& node(AbsId id) const;
  size_t size() const { return nodes_.size(); }

  // "sum(64, mul(in0, in1))": inputs print as in<n>, operands in stored order.
  std::string to_string(AbsId id) const;

 private:
  struct NodeHash {
    size_t operator()(const AbsNode& n) const;
  };
  AbsId intern(const AbsNode& n);
  void check_id(AbsId id) const;

  std::vector<AbsNode> nodes_;
  std::unordered_map<AbsNode, AbsId, NodeHash> ids_;  // lookup only; never iterated
};

}  // namespace orchid::superopt
