// Fission rule of Einsum (numpy.einsum's semantics, which ONNX's reference uses).
//
// The equation is parsed into one label per dim of each operand and of the output: letters
// (a-z, A-Z), and for "..." one label per broadcast dim (aligned right across operands). A
// label's extent is the numpy broadcast of the dims it names (equal, or 1); a dim of 1 under
// a larger extent is read at 0. Labels not in the output are contracted (summed over). Then:
//  - no contraction, one operand: a layout primitive (transpose, diagonal);
//  - no contraction, several operands: each operand aligned to the output's labels (a view,
//    or a layout primitive where it permutes or takes a diagonal), then one elementwise
//    product;
//  - a contraction of two float operands whose every label is batch (both operands and the
//    output), row (first operand and output), column (second and output) or contracted (both
//    operands only): Korch's matmul — each operand viewed (transposed only where its labels
//    are not already in order) as [batch, rows, k] / [batch, k, cols], one matmul primitive,
//    then a view and a transpose to the output's order;
//  - any other contraction: one sum reduction over the contracted labels of the product of
//    the operands' loads, which is exactly the definition.
#include <algorithm>
#include <map>

#include "fission/builders.h"
#include "fission/linear_common.h"
#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::Dims;

constexpr int kEllipsis = -1;     // marks "..." in a parsed term
constexpr int kBroadcast = 1000;  // label of broadcast dim j: kBroadcast + j

struct Equation {
  std::vector<std::vector<int>> inputs;  // one label per dim of each operand
  std::vector<int> output;               // one label per output dim
  std::map<int, int64_t> extent;         // per label
  std::vector<int> contracted;           // labels not in the output, by first appearance
};

std::string equation_text(const RuleContext& ctx) {
  ORCHID_USER_CHECK(ctx.has_attr("equation")) << ctx.where() << "attribute 'equation' is required";
  std::string eq;
  for (char c : ctx.attr_string("equation", "")) if (c != ' ') eq += c;
  return eq;
}

// The labels of one term: letters as their character codes, "..." as kEllipsis (once).
std::vector<int> parse_term(const RuleContext& ctx, const std::string& term, const std::string& eq) {
  std::vector<int> out;
  for (size_t i = 0; i < term.size(); ++i) {
    char c = term[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      out.push_back(c);
      continue;
    }
    bool ellipsis = term.compare(i, 3, "...") == 0;
    ORCHID_USER_CHECK(ellipsis) << ctx.where() << "equation '" << eq << "': unexpected character '" << c
                                << "' (terms are letters and at most one '...')";
    ORCHID_USER_CHECK(std::count(out.begin(), out.end(), kEllipsis) == 0)
        << ctx.where() << "equation '" << eq << "': term '" << term << "' has two ellipses";
    out.push_back(kEllipsis);
    i += 2;
  }
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep) parts.emplace_back();
    else parts.back().push_back(c);
  }
  return parts;
}

// Operand k's term, checked against its rank; *ell_rank is the number of dims its "..."
// stands for.
std::vector<int> checked_term(const RuleContext& ctx, std::vector<int> term, size_t k,
                                const std::string& eq, int64_t* ell_rank) {
  auto rank = static_cast<int64_t>(ctx.type(k).rank());
  auto e = std::find(term.begin(), term.end(), kEllipsis);
  int64_t letters = static_cast<int64_t>(term.size()) - (e != term.end());
  *ell_rank = rank - letters;
  ORCHID_USER_CHECK(e != term.end() ? *ell_rank >= 0 : *ell_rank == 0)
      << ctx.where() << "equation '" << eq << "': term " << k << " has " << letters << " letters"
      << (e != term.end() ? " and '...'" : "") << " for input " << k << " of rank " << rank;
  return term;
}

// Replaces each ellipsis by broadcast labels aligned right among `total` broadcast dims.
std::vector<int> with_broadcast_labels(std::vector<int> term, int64_t rank_here, int64_t total) {
  auto e = std::find(term.begin(), term.end(), kEllipsis);
  if (e == term.end()) return term;
  std::vector<int> labels;
  for (int64_t j = total - rank_here; j < total; ++j) labels.push_back(kBroadcast + static_cast<int>(j));
  size_t at = static_cast<size_t>(e - term.begin());
  term.erase(e);
  term.insert(term.begin() + static_cast<ptrdiff_t>(at), labels.begin(), labels.end());
  return term;
}

// The output labels: the explicit right-hand side, or (implicit) the broadcast labels and then
// the letters used exactly once, in alphabetical order.
std::vector<int> output_labels(const RuleContext& ctx, const Equation& q, const std::string* rhs,
                               int64_t broadcast_rank, const std::string& eq) {
  std::vector<int> bl;
  for (int64_t j = 0; j < broadcast_rank; ++j) bl.push_back(kBroadcast + static_cast<int>(j));
  std::map<int, int> uses;
  for (const auto& in : q.inputs) for (int l : in) ++uses[l];
  if (!rhs) {
    std::vector<int> out = bl;
    for (const auto& [l, n] : uses) if (l < kBroadcast && n == 1) out.push_back(l);
    return out;
  }
  std::vector<int> term = parse_term(ctx, *rhs, eq);
  bool has_ellipsis = std::count(term.begin(), term.end(), kEllipsis) > 0;
  ORCHID_USER_CHECK(has_ellipsis || broadcast_rank == 0)
      << ctx.where() << "equation '" << eq << "': the inputs have " << broadcast_rank
      << " broadcast dims ('...') but the output has no '...'";
  for (int l : term) {
    if (l == kEllipsis) continue;
    ORCHID_USER_CHECK(uses.count(l)) << ctx.where() << "equation '" << eq << "': output label '"
                                     << static_cast<char>(l) << "' appears in no input";
    ORCHID_USER_CHECK(std::count(term.begin(), term.end(), l) == 1)
        << ctx.where() << "equation '" << eq << "': output label '" << static_cast<char>(l) << "' appears twice";
  }
  return with_broadcast_labels(term, broadcast_rank, broadcast_rank);
}

std::string label_name(int l) {
  return l >= kBroadcast ? "'...'" : std::string("'") + static_cast<char>(l) + "'";
}

// Each label's extent: the numpy broadcast of the dims it names.
void label_extents(const RuleContext& ctx, Equation& q, const std::string& eq) {
  for (size_t k = 0; k < q.inputs.size(); ++k) {
    const Dims s = ctx.shape(k);
    for (size_t j = 0; j < s.size(); ++j) {
      auto [it, fresh] = q.extent.emplace(q.inputs[k][j], s[j]);
      int64_t& e = it->second;
      ORCHID_USER_CHECK(fresh || e == s[j] || e == 1 || s[j] == 1)
          << ctx.where() << "equation '" << eq << "': dim " << j << " of input " << k << " has size "
          << s[j] << " where its label " << label_name(q.inputs[k][j]) << " has size " << e;
      if (e == 1) e = s[j];
    }
  }
}

Equation parse_equation(const RuleContext& ctx) {
  std::string eq = equation_text(ctx);
  size_t arrow = eq.find("->");
  ORCHID_USER_CHECK(arrow == std::string::npos || eq.find("->", arrow + 2) == std::string::npos)
      << ctx.where() << "equation '" << eq << "' has two '->'";
  std::string lhs = eq.substr(0, arrow), rhs = arrow == std::string::npos ? "" : eq.substr(arrow + 2);
  std::vector<std::string> terms = split(lhs, ',');
  ORCHID_USER_CHECK(terms.size() == ctx.num_inputs())
      << ctx.where() << "equation '" << eq << "' has " << terms.size() << " terms for " << ctx.num_inputs()
      << " inputs";
  Equation q;
  std::vector<int64_t> ell(terms.size());
  int64_t broadcast_rank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    ORCHID_USER_CHECK(ctx.dtype(k) == ctx.dtype(0)) << ctx.where() << "input " << k << " is "
                                                    << ir::dtype_name(ctx.dtype(k)) << ", input 0 is "
                                                    << ir::dtype_name(ctx.dtype(0));
    q.inputs.push_back(checked_term(ctx, parse_term(ctx, terms[k], eq), k, eq, &ell[k]));
    broadcast_rank = std::max(broadcast_rank, ell[k]);
  }
  for (size_t k = 0; k < terms.size(); ++k)
    q.inputs[k] = with_broadcast_labels(q.inputs[k], ell[k], broadcast_rank);
  label_extents(ctx, q, eq);
  q.output = output_labels(ctx, q, arrow == std::string::npos ? nullptr : &rhs, broadcast_rank, eq);
  for (const auto& in : q.inputs)
    for (int l : in)
      if (std::count(q.output.begin(), q.output.end(), l) == 0 &&
          std::count(q.contracted.begin(), q.contracted.end(), l) == 0)
        q.contracted.push_back(l);
  return q;
}

// ---- Lowering ----

int64_t position(const std::vector<int>& labels, int l) {
  return std::find(labels.begin(), labels.end(), l) - labels.begin();
}

bool contains(const std::vector<int>& labels, int l) {
  return std::find(labels.begin(), labels.end(), l) != labels.end();
}

Dims extents(const Equation& q, const std::vector<int>& labels) {
  Dims d;
  for (int l : labels) d.push_back(q.extent.at(l));
  return d;
}

// The indices of operand k in a primitive whose domain variables are the output labels and
// whose reduction variables are the contracted labels (a broadcast dim of 1 reads 0).
std::vector<Expr> operand_index(const RuleContext& ctx, const Equation& q, size_t k) {
  const Dims s = ctx.shape(k);
  std::vector<Expr> idx;
  for (size_t j = 0; j < s.size(); ++j) {
    int l = q.inputs[k][j];
    if (s[j] == 1 && q.extent.at(l) != 1) idx.push_back(ir::const_i64(0));
    else if (contains(q.output, l)) idx.push_back(ir::dvar(static_cast<int32_t>(position(q.output, l))));
    else idx.push_back(ir::rvar(static_cast<int32_t>(position(q.contracted, l))));
  }
  return idx;
}

// Operand k with one dim per output label (its own size where it has the label, else 1).
ValueId aligned_operand(RuleContext& ctx, const Equation& q, size_t k) {
  const std::vector<int>& in = q.inputs[k];
  const Dims s = ctx.shape(k);
  Dims shape;
  std::vector<int> order;  // the operand's labels in output order
  for (int l : q.output) {
    bool has = contains(in, l);
    shape.push_back(has ? s[static_cast<size_t>(position(in, l))] : 1);
    if (has) order.push_back(l);
  }
  if (order == in) return view(ctx, ctx.input(k), shape, "aligned" + std::to_string(k));
  return remap(ctx, ctx.input(k), shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx;
    for (size_t j = 0; j < in.size(); ++j) {
      auto p = static_cast<size_t>(position(q.output, in[j]));
      idx.push_back(shape[p] == 1 ? ir::const_i64(0) : i[p]);
    }
    return idx;
  }, "aligned" + std::to_string(k));
}

// sum over the contracted labels of the product of the operands' loads.
ValueId contract(RuleContext& ctx, const Equation& q) {
  PrimBuilder b(ctx.graph());
  Expr body;
  for (size_t k = 0; k < q.inputs.size(); ++k) {
    Expr v = b.load(ctx.input(k), operand_index(ctx, q, k));
    body = body.defined() ? body * v : v;
  }
  ir::Primitive p = b.make(ir::PrimOp::Reduce);
  p.domain = extents(q, q.output);
  p.reduce_domain = extents(q, q.contracted);
  p.reduce = ir::ReduceOp::Sum;
  p.bodies = {body};
  ir::TensorType out{ctx.dtype(0), p.domain};
  return ctx.emit1(std::move(p), out);
}

// The labels of a two-operand contraction by role; `ok` when every label has one of the four
// roles, each operand's labels are distinct and no dim broadcasts.
struct MatMulRoles {
  std::vector<int> batch, rows, k, cols;
  bool ok = false;
};

MatMulRoles matmul_roles(const RuleContext& ctx, const Equation& q) {
  MatMulRoles r;
  if (q.inputs.size() != 2 || !ir::is_float(ctx.dtype(0))) return r;
  const std::vector<int>& a = q.inputs[0];
  const std::vector<int>& b = q.inputs[1];
  for (size_t k = 0; k < 2; ++k) {
    const Dims s = ctx.shape(k);
    for (size_t j = 0; j < s.size(); ++j)
      if (s[j] != q.extent.at(q.inputs[k][j]) || std::count(q.inputs[k].begin(), q.inputs[k].end(), q.inputs[k][j]) > 1)
        return r;
  }
  for (int l : a) {
    bool in_b = contains(b, l), in_out = contains(q.output, l);
    if (in_b && in_out) r.batch.push_back(l);
    else if (in_out) r.rows.push_back(l);
    else if (in_b) r.k.push_back(l);
    else return r;  // summed over in A alone
  }
  for (int l : b) {
    if (contains(a, l)) continue;
    if (!contains(q.output, l)) return r;  // summed over in B alone
    r.cols.push_back(l);
  }
  r.ok = !r.k.empty();
  return r;
}

std::vector<int> concat(std::vector<int> a, const std::vector<int>& b, const std::vector<int>& c) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

int64_t count_of(const Equation& q, const std::vector<int>& labels) { return ir::numel(extents(q, labels)); }

// Operand k as a [batch, first, second] matrix stack for matmul; `*trans` is set where the
// operand is stored as [batch, second, first] and can be read transposed instead.
ValueId matrix_stack(RuleContext& ctx, const Equation& q, size_t k, const std::vector<int>& batch,
                     const std::vector<int>& first, const std::vector<int>& second, bool* trans) {
  const std::vector<int>& in = q.inputs[k];
  std::string name = "operand" + std::to_string(k);
  Dims mat = {count_of(q, batch), count_of(q, first), count_of(q, second)};
  *trans = in == concat(batch, second, first) && in != concat(batch, first, second);
  if (*trans) return view(ctx, ctx.input(k), {mat[0], mat[2], mat[1]}, name);
  std::vector<int> want = concat(batch, first, second);
  std::vector<int64_t> perm;
  for (int l : want) perm.push_back(position(in, l));
  return view(ctx, transpose(ctx, ctx.input(k), perm, name + "_t"), mat, name);
}

ValueId einsum_matmul(RuleContext& ctx, const Equation& q, const MatMulRoles& r) {
  ir::MatMulAttrs attrs;
  ValueId a = matrix_stack(ctx, q, 0, r.batch, r.rows, r.k, &attrs.trans_a);
  ValueId b = matrix_stack(ctx, q, 1, r.batch, r.k, r.cols, &attrs.trans_b);
  ValueId c = matmul(ctx, a, b, attrs);
  std::vector<int> cur = concat(r.batch, r.rows, r.cols);
  c = view(ctx, c, extents(q, cur), "unflat");
  std::vector<int64_t> perm;
  for (int l : q.output) perm.push_back(position(cur, l));
  return transpose(ctx, c, perm);
}

}  // namespace

std::vector<ValueId> rule_Einsum(RuleContext& ctx) {
  using D = DType;
  ORCHID_USER_CHECK(ctx.num_inputs() >= 1) << ctx.where() << "needs at least one input";
  require_dtype(ctx, 0, {D::U8, D::U16, D::U32, D::U64, D::I8, D::I16, D::I32, D::I64, D::F16, D::F32, D::F64},
                "Einsum-12");
  Equation q = parse_equation(ctx);
  if (!q.contracted.empty()) {
    MatMulRoles r = matmul_roles(ctx, q);
    return {r.ok ? einsum_matmul(ctx, q, r) : contract(ctx, q)};
  }
  if (q.inputs.size() == 1) {
    if (q.inputs[0] == q.output) return {ctx.input(0)};
    return {remap(ctx, ctx.input(0), extents(q, q.output), [&](const std::vector<Expr>&) {
      return operand_index(ctx, q, 0);
    })};
  }
  std::vector<ValueId> aligned;
  for (size_t k = 0; k < q.inputs.size(); ++k) aligned.push_back(aligned_operand(ctx, q, k));
  return {ew_map(ctx, aligned, ctx.dtype(0), [](const std::vector<Expr>& v) {
    Expr prod = v[0];
    for (size_t k = 1; k < v.size(); ++k) prod = prod * v[k];
    return prod;
  })};
}

}  // namespace orchid::fission
