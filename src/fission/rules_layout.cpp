// Fission rules of the reshaping and rearranging ONNX operators. Contiguous reshapes
// (Reshape, Flatten, Squeeze, Unsqueeze, and transposes that only move dims of size 1) become
// zero-copy views; Transpose, Concat, Split and Tile become layout primitives (pure index
// remapping); Expand and Tile along dims of size 1 become broadcasts.
#include <algorithm>
#include <numeric>

#include "fission/rules.h"
#include "fission/rules_layout_common.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using layout::normalize_axes;

// Whether permuting x's dims by perm keeps its elements in memory order: the dims of size
// other than 1 stay in their relative order.
bool keeps_memory_order(const ir::Dims& shape, const std::vector<int64_t>& perm) {
  int64_t last = -1;
  for (int64_t p : perm) {
    if (shape[static_cast<size_t>(p)] == 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

// The new shape of Reshape: 0 copies the input dim (unless allowzero), -1 is inferred.
ir::Dims reshape_target(const RuleContext& ctx, const ir::Dims& in,
                        const std::vector<int64_t>& want, bool allowzero) {
  ir::Dims out;
  int64_t infer = -1, known = 1;
  for (size_t k = 0; k < want.size(); ++k) {
    int64_t d = want[k];
    if (d == 0 && !allowzero) {
      ORCHID_USER_CHECK(k < in.size())
          << ctx.where() << "shape entry " << k
          << " is 0 (copy the input dim) but the input has rank " << in.size();
      d = in[k];
    }
    if (d == -1) {
      ORCHID_USER_CHECK(infer < 0)
          << ctx.where() << "shape " << ir::dims_str(want) << " has more than one -1";
      infer = static_cast<int64_t>(k);
    } else {
      ORCHID_USER_CHECK(d >= 0) << ctx.where() << "shape " << ir::dims_str(want)
                                << " has an invalid entry " << d;
      ORCHID_USER_CHECK(!__builtin_mul_overflow(known, d, &known))
          << ctx.where() << "shape " << ir::dims_str(want) << " has more elements than fit in 64 bits";
    }
    out.push_back(d);
  }
  if (infer >= 0) {
    ORCHID_USER_CHECK(known != 0 && ir::numel(in) % known == 0)
        << ctx.where() << "cannot infer the -1 of shape " << ir::dims_str(want) << " for input "
        << ir::dims_str(in);
    out[static_cast<size_t>(infer)] = ir::numel(in) / known;
  }
  ORCHID_USER_CHECK(ir::checked_numel(out) == ir::numel(in))
      << ctx.where() << "cannot reshape " << ir::dims_str(in) << " (" << ir::numel(in)
      << " elements) to " << ir::dims_str(out);
  return out;
}

// The inputs of a Concat that are not empty along the axis, checked against input 0, and the
// output's shape.
std::vector<ValueId> concat_parts(const RuleContext& ctx, int64_t axis, ir::Dims* out_shape) {
  ir::TensorType t0 = ctx.type(0);
  *out_shape = t0.shape;
  (*out_shape)[static_cast<size_t>(axis)] = 0;
  std::vector<ValueId> parts;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    ir::TensorType t = ctx.type(k);
    ORCHID_USER_CHECK(t.dtype == t0.dtype && t.rank() == t0.rank())
        << ctx.where() << "input " << k << " (" << ir::type_str(t) << ") does not match input 0 ("
        << ir::type_str(t0) << ")";
    for (size_t d = 0; d < t.shape.size(); ++d)
      ORCHID_USER_CHECK(static_cast<int64_t>(d) == axis || t.shape[d] == t0.shape[d])
          << ctx.where() << "input " << k << " " << ir::dims_str(t.shape) << " and input 0 "
          << ir::dims_str(t0.shape) << " differ outside axis " << axis;
    int64_t size = t.shape[static_cast<size_t>(axis)];
    if (size > 0) parts.push_back(ctx.input(k));
    (*out_shape)[static_cast<size_t>(axis)] += size;
  }
  return parts;
}

// The sizes of Split's outputs along the axis.
std::vector<int64_t> split_sizes(const RuleContext& ctx, int64_t dim, size_t outputs) {
  std::optional<std::vector<int64_t>> given;
  if (ctx.version() >= 13) {
    given = layout::optional_ints(ctx, 1);
  } else if (ctx.version() == 1 && ctx.has_input(1)) {
    std::vector<double> f = layout::static_floats(ctx, 1);
    given = std::vector<int64_t>(f.begin(), f.end());
  } else if (ctx.has_attr("split")) {
    given = ctx.attr_ints("split", {});
  }
  if (given && given->empty()) given.reset();  // an empty list asks for equal parts
  if (!given) {
    ORCHID_USER_CHECK(dim % static_cast<int64_t>(outputs) == 0)
        << ctx.where() << "dim " << dim << " does not split into " << outputs << " equal parts";
    return std::vector<int64_t>(outputs, dim / static_cast<int64_t>(outputs));
  }
  ORCHID_USER_CHECK(given->size() == outputs)
      << ctx.where() << "split has " << given->size() << " entries for " << outputs << " outputs";
  int64_t sum = 0;
  for (int64_t s : *given) {
    ORCHID_USER_CHECK(s >= 0) << ctx.where() << "split has a negative entry " << s;
    sum += s;
  }
  ORCHID_USER_CHECK(sum == dim) << ctx.where() << "split sizes sum to " << sum << ", the dim is "
                                << dim;
  return *given;
}

}  // namespace

std::vector<ValueId> rule_Transpose(RuleContext& ctx) {
  ir::Dims s = ctx.shape(0);
  std::vector<int64_t> perm(s.size());
  std::iota(perm.rbegin(), perm.rend(), 0);
  perm = ctx.attr_ints("perm", perm);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool valid = sorted.size() == s.size();
  for (size_t k = 0; k < sorted.size(); ++k) valid &= sorted[k] == static_cast<int64_t>(k);
  ORCHID_USER_CHECK(valid) << ctx.where() << "perm " << ir::dims_str(perm)
                           << " is not a permutation of the " << s.size() << " dims";
  if (!keeps_memory_order(s, perm)) return {transpose(ctx, ctx.input(0), perm)};
  ir::Dims out;
  for (int64_t p : perm) out.push_back(s[static_cast<size_t>(p)]);
  return {view(ctx, ctx.input(0), out)};
}

std::vector<ValueId> rule_Reshape(RuleContext& ctx) {
  std::vector<int64_t> want =
      ctx.version() < 5 ? layout::required_attr_ints(ctx, "shape") : layout::static_ints(ctx, 1);
  bool allowzero = ctx.version() >= 14 && ctx.attr_int("allowzero", 0) != 0;
  bool zero = std::find(want.begin(), want.end(), 0) != want.end();
  bool infer = std::find(want.begin(), want.end(), -1) != want.end();
  ORCHID_USER_CHECK(!(allowzero && zero && infer))
      << ctx.where() << "shape " << ir::dims_str(want) << " has both 0 and -1 with allowzero=1";
  return {view(ctx, ctx.input(0), reshape_target(ctx, ctx.shape(0), want, allowzero))};
}

std::vector<ValueId> rule_Flatten(RuleContext& ctx) {
  ir::Dims s = ctx.shape(0);
  auto rank = static_cast<int64_t>(s.size());
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < 0 && ctx.version() >= 11) axis += rank;
  ORCHID_USER_CHECK(axis >= 0 && axis <= rank)
      << ctx.where() << "axis " << ctx.attr_int("axis", 1) << " is out of range for rank " << rank;
  ir::Dims head(s.begin(), s.begin() + axis), tail(s.begin() + axis, s.end());
  return {view(ctx, ctx.input(0), {ir::numel(head), ir::numel(tail)})};
}

std::vector<ValueId> rule_Squeeze(RuleContext& ctx) {
  ir::Dims s = ctx.shape(0);
  auto rank = static_cast<int64_t>(s.size());
  std::optional<std::vector<int64_t>> axes =
      ctx.version() >= 13
          ? layout::optional_ints(ctx, 1)
          : (ctx.has_attr("axes") ? std::optional(ctx.attr_ints("axes", {})) : std::nullopt);
  if (axes && axes->empty() && std::count(s.begin(), s.end(), 1) > 0)
    ctx.unsupported(
        "an empty axes input (ONNX does not say whether it squeezes all dims of size 1 or none)");
  std::vector<bool> drop(s.size(), false);
  if (!axes) {
    for (size_t d = 0; d < s.size(); ++d) drop[d] = s[d] == 1;
  } else {
    for (int64_t a : normalize_axes(ctx, *axes, rank)) {
      ORCHID_USER_CHECK(s[static_cast<size_t>(a)] == 1)
          << ctx.where() << "cannot squeeze axis " << a << " of size " << s[static_cast<size_t>(a)];
      drop[static_cast<size_t>(a)] = true;
    }
  }
  ir::Dims out;
  for (size_t d = 0; d < s.size(); ++d)
    if (!drop[d]) out.push_back(s[d]);
  return {view(ctx, ctx.input(0), out)};
}

std::vector<ValueId> rule_Unsqueeze(RuleContext& ctx) {
  ir::Dims s = ctx.shape(0);
  std::vector<int64_t> axes =
      ctx.version() >= 13 ? layout::static_ints(ctx, 1) : layout::required_attr_ints(ctx, "axes");
  auto rank = static_cast<int64_t>(s.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t a : normalize_axes(ctx, axes, rank)) inserted[static_cast<size_t>(a)] = true;
  ir::Dims out;
  for (size_t d = 0, k = 0; d < inserted.size(); ++d) out.push_back(inserted[d] ? 1 : s[k++]);
  return {view(ctx, ctx.input(0), out)};
}

std::vector<ValueId> rule_Concat(RuleContext& ctx) {
  ORCHID_USER_CHECK(ctx.num_inputs() >= 1) << ctx.where() << "needs at least one input";
  int64_t raw = ctx.version() == 1 ? ctx.attr_int("axis", 1) : ctx.required_attr_int("axis");
  int64_t axis = ctx.normalize_axis(raw, ctx.type(0).rank());
  ir::Dims out_shape;
  std::vector<ValueId> parts = concat_parts(ctx, axis, &out_shape);
  if (parts.size() == 1 && ctx.graph().type(parts[0]).shape == out_shape) return {parts[0]};
  if (parts.empty()) parts.push_back(ctx.input(0));  // every input empty along the axis
  return {concat(ctx, parts, static_cast<size_t>(axis))};
}

std::vector<ValueId> rule_Split(RuleContext& ctx) {
  ir::Dims s = ctx.shape(0);
  int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), static_cast<int64_t>(s.size()));
  size_t outputs = ctx.node().outputs.size();
  ORCHID_USER_CHECK(outputs >= 1) << ctx.where() << "has no outputs";
  std::vector<int64_t> sizes = split_sizes(ctx, s[static_cast<size_t>(axis)], outputs);
  std::vector<ValueId> outs;
  int64_t offset = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<int64_t> starts(s.size(), 0), steps(s.size(), 1);
    ir::Dims lens = s;
    starts[static_cast<size_t>(axis)] = offset;
    lens[static_cast<size_t>(axis)] = sizes[k];
    outs.push_back(
        layout::strided_slice(ctx, ctx.input(0), starts, lens, steps, std::to_string(k)));
    offset += sizes[k];
  }
  return outs;
}

std::vector<ValueId> rule_Expand(RuleContext& ctx) {
  ir::Dims shape = broadcast_shapes(ctx, {ctx.shape(0), layout::static_ints(ctx, 1)});
  return {broadcast_to(ctx, ctx.input(0), shape)};
}

std::vector<ValueId> rule_Tile(RuleContext& ctx) {
  ir::Dims s = ctx.shape(0);
  std::vector<int64_t> repeats;
  if (ctx.version() < 6) {  // Tile-1: `tiles` copies along `axis`, both scalar inputs
    std::vector<double> tiles = layout::static_floats(ctx, 1), axis = layout::static_floats(ctx, 2);
    ORCHID_USER_CHECK(tiles.size() == 1 && axis.size() == 1)
        << ctx.where() << "tiles and axis must be scalars";
    repeats.assign(s.size(), 1);
    repeats[static_cast<size_t>(ctx.normalize_axis(
        static_cast<int64_t>(axis[0]), ctx.type(0).rank()))] = static_cast<int64_t>(tiles[0]);
  } else {
    repeats = layout::static_ints(ctx, 1);
  }
  ORCHID_USER_CHECK(repeats.size() == s.size())
      << ctx.where() << "repeats " << ir::dims_str(repeats) << " do not match rank " << s.size();
  ir::Dims out;
  bool broadcast = true;  // only dims of size 1 are repeated
  for (size_t d = 0; d < s.size(); ++d) {
    ORCHID_USER_CHECK(repeats[d] >= 0)
        << ctx.where() << "repeats has a negative entry " << repeats[d];
    out.push_back(s[d] * repeats[d]);
    broadcast &= repeats[d] == 1 || s[d] == 1;
  }
  if (broadcast) return {broadcast_to(ctx, ctx.input(0), out)};
  return {remap(ctx, ctx.input(0), out, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx;
    for (size_t d = 0; d < s.size(); ++d)
      idx.push_back(s[d] == 1 && out[d] != 0       ? ir::const_i64(0)
                    : repeats[d] <= 1 || s[d] == 0 ? i[d]
                                                   : ir::mod(i[d], s[d]));
    return idx;
  })};
}

}  // namespace orchid::fission
