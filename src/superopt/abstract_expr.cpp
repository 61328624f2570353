#include "superopt/abstract_expr.h"

#include <utility>

#include "support/error.h"

namespace orchid::superopt {

int abs_op_arity(AbsOp op) {
  switch (op) {
    case AbsOp::Input:
      return 0;
    case AbsOp::Exp:
    case AbsOp::Sum:
      return 1;
    case AbsOp::Add:
    case AbsOp::Mul:
    case AbsOp::Div:
      return 2;
  }
  return 0;
}

const char* abs_op_name(AbsOp op) {
  switch (op) {
    case AbsOp::Input:
      return "input";
    case AbsOp::Add:
      return "add";
    case AbsOp::Mul:
      return "mul";
    case AbsOp::Div:
      return "div";
    case AbsOp::Exp:
      return "exp";
    case AbsOp::Sum:
      return "sum";
  }
  return "?";
}

size_t AbsPool::NodeHash::operator()(const AbsNode& n) const {
  uint64_t h = static_cast<uint64_t>(n.op);
  for (uint64_t v : {static_cast<uint64_t>(static_cast<uint32_t>(n.a)),
                     static_cast<uint64_t>(static_cast<uint32_t>(n.b)), static_cast<uint64_t>(n.k)})
    h = (h ^ v) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
  return static_cast<size_t>(h ^ (h >> 29));
}

void AbsPool::check_id(AbsId id) const {
  ORCHID_CHECK(id >= 0 && static_cast<size_t>(id) < nodes_.size())
      << "abstract expression id " << id << " is not in the pool (size " << nodes_.size() << ")";
}

AbsId AbsPool::intern(const AbsNode& n) {
  auto it = ids_.find(n);
  if (it != ids_.end()) return it->second;
  ORCHID_CHECK(nodes_.size() < static_cast<size_t>(INT32_MAX)) << "abstract expression pool is full";
  AbsId id = static_cast<AbsId>(nodes_.size());
  nodes_.push_back(n);
  ids_.emplace(n, id);
  return id;
}

AbsId AbsPool::input(int64_t n) {
  ORCHID_CHECK(n >= 0) << "input number " << n << " is negative";
  return intern(AbsNode{AbsOp::Input, -1, -1, n});
}

AbsId AbsPool::add(AbsId x, AbsId y) {
  check_id(x);
  check_id(y);
  if (y < x) std::swap(x, y);
  return intern(AbsNode{AbsOp::Add, x, y, 0});
}

AbsId AbsPool::mul(AbsId x, AbsId y) {
  check_id(x);
  check_id(y);
  if (y < x) std::swap(x, y);
  return intern(AbsNode{AbsOp::Mul, x, y, 0});
}

AbsId AbsPool::div(AbsId x, AbsId y) {
  check_id(x);
  check_id(y);
  return intern(AbsNode{AbsOp::Div, x, y, 0});
}

AbsId AbsPool::exp(AbsId x) {
  check_id(x);
  return intern(AbsNode{AbsOp::Exp, x, -1, 0});
}

AbsId AbsPool::sum(int64_t k, AbsId x) {
  check_id(x);
  ORCHID_CHECK(k >= 1) << "sum over " << k << " elements: the extent must be at least 1";
  if (k == 1) return x;
  return intern(AbsNode{AbsOp::Sum, x, -1, k});
}

const AbsNode& AbsPool::node(AbsId id) const {
  check_id(id);
  return nodes_[static_cast<size_t>(id)];
}

std::string AbsPool::to_string(AbsId id) const {
  const AbsNode& n = node(id);
  switch (n.op) {
    case AbsOp::Input:
      return "in" + std::to_string(n.k);
    case AbsOp::Exp:
      return "exp(" + to_string(n.a) + ")";
    case AbsOp::Sum:
      return "sum(" + std::to_string(n.k) + ", " + to_string(n.a) + ")";
    case AbsOp::Add:
    case AbsOp::Mul:
    case AbsOp::Div:
      return std::string(abs_op_name(n.op)) + "(" + to_string(n.a) + ", " + to_string(n.b) + ")";
  }
  return "?";
}

}  // namespace orchid::superopt
