// Loop nests of computed primitives, and the text writer (internal to codegen/cpu).
#pragma once

#include <string>
#include <vector>

#include "codegen/cpu/emit.h"
#include "codegen/cpu/lower.h"
#include "codegen/cpu/schedule.h"

namespace orchid::codegen::cpu::detail {

// Indented lines of C++.
class Writer {
 public:
  void line(const std::string& s) { out_ += std::string(2 * depth_, ' ') + s + "\n"; }
  void open(const std::string& s) { line(s); ++depth_; }
  void close() { --depth_; line("}"); }
  // The pragmas in front of an innermost loop: vector lanes and unrolling.
  void simd_pragmas(const Schedule& s, const std::string& clauses = "");
  void table(const std::string& name, const std::vector<int64_t>& values);
  const std::string& text() const { return out_; }

 private:
  std::string out_;
  int depth_ = 0;
};

// The loop nest computing a primitive over its region in the current task.
void emit_node(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, ExprEmitter& ex,
               Writer& w);

}  // namespace orchid::codegen::cpu::detail
