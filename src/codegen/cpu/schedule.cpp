// Schedules: canonical text and defaults (schedule.h).
#include "codegen/cpu/schedule.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include "codegen/cpu/lower.h"
#include "ir/stats.h"
#include "support/error.h"

namespace orchid::codegen::cpu {

namespace {

bool one_of(int v, std::initializer_list<int> allowed) {
  return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

int64_t parse_int(const std::string& s, const std::string& text) {
  try {
    size_t used = 0;
    long long v = std::stoll(s, &used);
    if (used == s.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  ORCHID_USER_ERROR() << "schedule \"" << text << "\": \"" << s << "\" is not a non-negative integer";
  return 0;
}

ir::Dims parse_dims(const std::string& value, const std::string& text) {
  ir::Dims dims;
  if (value == "-") return dims;
  std::istringstream in(value);
  std::string d;
  while (std::getline(in, d, 'x')) dims.push_back(parse_int(d, text));
  return dims;
}

}  // namespace

std::string dims_text(const ir::Dims& dims) {
  std::string text;
  for (size_t d = 0; d < dims.size(); ++d) text += (d ? "x" : "") + std::to_string(dims[d]);
  return text.empty() ? std::string("-") : text;
}

std::string levels_text(const ir::Dims& inner, int split) {
  return inner.empty() ? "" : " inner=" + dims_text(inner) + " split=" + std::to_string(split);
}

std::string schedule_str(const Schedule& s) {
  std::string text = "tile=" + dims_text(s.tile) + " vec=" + std::to_string(s.vector_width) +
                     " unroll=" + std::to_string(s.unroll) + " inline=" + (s.inline_single_use ? "1" : "0") +
                     " stream=" + (s.stream ? "1" : "0") + " prefetch=" + std::to_string(s.prefetch) +
                     " gemm=" + (s.gemm ? "1" : "0");
  return text + levels_text(s.inner, s.split);
}

Schedule parse_schedule(const std::string& text) {
  Schedule s;
  std::istringstream in(text);
  std::string field;
  while (in >> field) {
    auto eq = field.find('=');
    ORCHID_USER_CHECK(eq != std::string::npos) << "schedule \"" << text << "\": expected key=value, got \"" << field << "\"";
    std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "tile") {
      s.tile = parse_dims(value, text);
    } else if (key == "inner") {
      s.inner = parse_dims(value, text);
    } else if (key == "split") {
      int64_t split = parse_int(value, text);
      ORCHID_USER_CHECK(split <= (1 << 20)) << "schedule \"" << text << "\": split is too large";
      s.split = static_cast<int>(split);
    } else if (key == "vec") {
      s.vector_width = static_cast<int>(parse_int(value, text));
      ORCHID_USER_CHECK(one_of(s.vector_width, {1, 4, 8, 16})) << "schedule \"" << text << "\": vec must be 1, 4, 8 or 16";
    } else if (key == "unroll") {
      s.unroll = static_cast<int>(parse_int(value, text));
      ORCHID_USER_CHECK(one_of(s.unroll, {1, 2, 4, 8})) << "schedule \"" << text << "\": unroll must be 1, 2, 4 or 8";
    } else if (key == "inline") {
      ORCHID_USER_CHECK(value == "0" || value == "1") << "schedule \"" << text << "\": inline must be 0 or 1";
      s.inline_single_use = value == "1";
    } else if (key == "stream") {
      ORCHID_USER_CHECK(value == "0" || value == "1") << "schedule \"" << text << "\": stream must be 0 or 1";
      s.stream = value == "1";
    } else if (key == "prefetch") {
      int64_t bytes = parse_int(value, text);
      ORCHID_USER_CHECK(bytes % 64 == 0 && bytes <= (1 << 20))
          << "schedule \"" << text << "\": prefetch must be a multiple of 64 up to 1048576";
      s.prefetch = static_cast<int>(bytes);
    } else if (key == "gemm") {
      ORCHID_USER_CHECK(value == "0" || value == "1") << "schedule \"" << text << "\": gemm must be 0 or 1";
      s.gemm = value == "1";
    } else {
      ORCHID_USER_ERROR() << "schedule \"" << text << "\": unknown key \"" << key << "\"";
    }
  }
  return s;
}

namespace {

// What a task should touch: its input regions, its output tiles and its scratch then stay in
// the core's L1 and L2 between the passes over them (a softmax row of 4096 floats with its
// output and scratch rows is 48 KiB).
constexpr int64_t kTaskBudget = 64 * 1024;
// Tasks are not cut below this much work (work_per_element times the anchor's elements), nor
// into more than kMaxTasks.
constexpr int64_t kMinTaskWork = 4096;
constexpr int64_t kMaxTasks = 1 << 16;
// Kernels writing this much stream their outputs past the caches; kernels reading this much
// prefetch the next task's inputs, one task's part of them ahead but from kMinPrefetch to
// kMaxPrefetch bytes (further ahead, lines arrive too early to stay in L1).
constexpr int64_t kStreamBytes = 16 << 20;
constexpr int64_t kMinPrefetch = 4 << 10, kMaxPrefetch = 16 << 10;

struct TaskBytes {
  int64_t touched = 0;  // scratch, input regions and output tiles
  int64_t part = 0;     // regions of the inputs it reads part of
  // The shortest side of the first task's region of a transposing layout primitive, along the
  // dims it is blocked in (lower.h, transposing_dim); INT64_MAX without one.
  int64_t transpose_side = INT64_MAX;
};

// A region bound of the first task (grid coordinates all 0).
int64_t first_task(const TaskBound& b, const KernelLowering& kl) {
  return b.affine ? std::clamp(b.c, b.lo, b.hi) : kl.table[static_cast<size_t>(b.column)];
}

TaskBytes task_bytes(const ir::Graph& g, const tile::Kernel& k, const Schedule& s) {
  KernelLowering kl = lower_kernel(g, k, s);
  TaskBytes bytes{kl.scratch_bytes + kl.task_io_bytes, kl.task_part_bytes};
  for (const NodeLowering& nl : kl.nodes) {
    if (nl.transpose_dim < 0 || kl.tasks == 0) continue;
    for (size_t d : {static_cast<size_t>(nl.transpose_dim), nl.lo.size() - 1}) {
      int64_t side = first_task(nl.hi[d], kl) - first_task(nl.lo[d], kl);
      int64_t whole = g.node(nl.node).domain[d];
      bytes.transpose_side = std::min(bytes.transpose_side, side >= whole ? INT64_MAX : side);
    }
  }
  return bytes;
}

// The tasks of `tile` over `shape` (a tile dim below 1 counts as 1).
int64_t tile_tasks(const ir::Dims& shape, const ir::Dims& tile) {
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) n *= ceil_div(shape[d], std::max<int64_t>(1, tile[d]));
  return n;
}

// Halves tile dims, outermost first, while a task touches more than the budget and halving
// shrinks that by a quarter at least (when it does not — a whole matrix every task reads, say
// — smaller tasks would only read it more often), not below a transpose's blocks along a dim,
// nor the innermost dim below the vector's lanes. Returns what a task then reads part of.
int64_t fit_task(const ir::Graph& g, const tile::Kernel& k, const ir::Dims& shape, double work, Schedule& s) {
  TaskBytes bytes = task_bytes(g, k, s);
  for (size_t d = 0; d < s.tile.size() && bytes.touched > kTaskBudget; ++d) {
    while (s.tile[d] > 1 && bytes.touched > kTaskBudget) {
      Schedule half = s;
      half.tile[d] = (s.tile[d] + 1) / 2;
      // The innermost dim keeps a vector's lanes: cut below them, its loops run on a part of
      // the lanes and read parts of cache lines (efficientvit's [1, 16, 1024, 16] relu and its
      // row sums ran 1.6-9.6x slower in tiles of 4 or 8 columns).
      if (d + 1 == s.tile.size() && half.tile[d] < s.vector_width) break;
      int64_t elements = 1;
      for (size_t j = 0; j < shape.size(); ++j) elements *= std::min(std::max<int64_t>(1, half.tile[j]), shape[j]);
      if (tile_tasks(shape, half.tile) > kMaxTasks || static_cast<double>(elements) * work < kMinTaskWork)
        return bytes.part;
      TaskBytes smaller = task_bytes(g, k, half);
      if (smaller.touched * 4 > bytes.touched * 3) break;
      // A transpose keeps blocks of whole cache lines: it reads along one dim, writes along another.
      if (smaller.transpose_side < kTransposeBlock && bytes.transpose_side >= kTransposeBlock) break;
      s = half;
      bytes = smaller;
    }
  }
  return bytes.part;
}

// Equal pieces of at most `most` (rounded up to `multiple`) covering `extent`.
int64_t even_tile(int64_t extent, int64_t most, int64_t multiple) {
  int64_t t = ceil_div(extent, ceil_div(extent, most));
  return std::min(extent, ceil_div(t, multiple) * multiple);
}

// Tiles for a kernel whose anchor is computed by the GEMM micro-kernel: one batch index and
// up to 384 rows x 512 columns per task (a task packs its operand regions, K (tm + tn)
// elements, for tm tn K multiply-adds, so larger tiles pack less: 1024^3 ran 1.12x faster
// than at 192 x 256; a block of its A panels, 384 KiB, then fits L2, and B is packed 32
// columns at a time), over as many middle indices (a conv's output rows) as make about 256
// columns in all; halved along the middle dims, then the columns, then the rows, until every
// core has two tasks; then, where the tasks are few and not a multiple of the cores, cut into
// a few more row tiles where that makes one (4096 x 256 x 256 ran 1.10x faster in 12 tasks
// than in 11 on 2 cores).
ir::Dims gemm_tiles(const ir::Dims& shape, const GemmFactors& f, int cores) {
  ir::Dims tile(shape.size(), 1);
  tile[f.m] = even_tile(shape[f.m], 384, kGemmMr);
  tile[f.n] = even_tile(shape[f.n], 512, kGemmNr);
  int64_t columns = std::max<int64_t>(1, 256 / tile[f.n]);
  for (size_t d = f.n; d-- > f.m + 1;) {
    tile[d] = even_tile(shape[d], columns, 1);
    columns = std::max<int64_t>(1, columns / tile[d]);
  }
  auto halve_middle = [&] {
    for (size_t d = f.m + 1; d < f.n; ++d)
      if (tile[d] >= 2) return tile[d] = even_tile(shape[d], tile[d] / 2, 1), true;
    return false;
  };
  while (tile_tasks(shape, tile) < 2 * cores) {
    if (halve_middle()) continue;
    if (tile[f.n] >= 2 * 64) tile[f.n] = even_tile(shape[f.n], tile[f.n] / 2, kGemmNr);
    else if (tile[f.m] >= 2 * 24) tile[f.m] = even_tile(shape[f.m], tile[f.m] / 2, kGemmMr);
    else break;
  }
  // Few tasks that the cores cannot share evenly (11 on 2 cores: one core runs 6, 9% longer
  // than 5.5) take a few more row tiles, up to `cores` more, where that makes a multiple.
  const int64_t rows = ceil_div(shape[f.m], tile[f.m]), now = tile_tasks(shape, tile);
  for (int64_t more = 1; now % cores != 0 && now < 8 * cores && more <= cores; ++more) {
    ir::Dims cut = tile;
    cut[f.m] = even_tile(shape[f.m], ceil_div(shape[f.m], rows + more), kGemmMr);
    if (cut[f.m] < 24) break;
    if (tile_tasks(shape, cut) % cores == 0) return cut;
  }
  return tile;
}

// A kernel's anchor computed by the GEMM micro-kernel: its primitive and factors.
struct GemmAnchor {
  ir::NodeId node;
  GemmFactors f;
};

// Whether the tasks of schedule s compute more columns of the kernel's GEMM than their tiles
// hold: a reduction along its rows in the kernel (a softmax after a matmul) needs whole rows,
// so every task cutting them would compute the whole rows again.
bool gemm_recomputes_columns(const ir::Graph& g, const tile::Kernel& k, const Schedule& s, const GemmAnchor& a) {
  KernelLowering kl = lower_kernel(g, k, s);
  if (kl.tasks == 0) return false;
  for (const NodeLowering& nl : kl.nodes)
    if (nl.node == a.node)
      return nl.gemm && first_task(nl.hi[a.f.n], kl) - first_task(nl.lo[a.f.n], kl) > s.tile[a.f.n];
  return false;
}

// Tiles of whole rows for a GEMM anchor whose rows the kernel reduces: up to 192 rows (every
// task packs all of B, so fewer rows would pack it more often), halved until every core has
// two tasks, not below 24.
ir::Dims whole_row_tiles(const ir::Dims& shape, const GemmFactors& f, int cores) {
  ir::Dims tile(shape.size(), 1);
  tile[f.n] = shape[f.n];
  tile[f.m] = even_tile(shape[f.m], 192, kGemmMr);
  for (size_t d = f.m + 1; d < f.n; ++d) tile[d] = 1;
  while (tile_tasks(shape, tile) < 2 * cores && tile[f.m] >= 2 * 24)
    tile[f.m] = even_tile(shape[f.m], tile[f.m] / 2, kGemmMr);
  return tile;
}

// The primitive computing the kernel's anchor (of `shape`) with the GEMM micro-kernel, if any.
// A kernel may hold other products before it (attention's two), of other shapes and ranks.
std::optional<GemmAnchor> gemm_anchor(const ir::Graph& g, const tile::Kernel& k, const ir::Dims& shape) {
  for (ir::NodeId n : k.nodes) {
    const ir::Primitive& p = g.node(n);
    if (p.domain != shape || !uses_gemm(g, p, Schedule{})) continue;
    if (std::optional<GemmFactors> f = gemm_factors(g, p)) return GemmAnchor{n, *f};
  }
  return std::nullopt;
}

// The work of a kernel per element of its anchor (of `shape`), at least 1: its primitives'
// FLOPs (ir/stats.h: each operator once per domain point and term, a reduction's combine
// once), over the anchor's elements. Task sizes count these, so that a reduction of few
// outputs over long rows (softmax's statistics over 5 x 1024 rows of 1024: 5120 outputs) is
// still cut into tasks for every core, while layout primitives, which compute nothing, count
// nothing (counted per point, vit_small's head transposes took tasks of 99 rows and ran 2x
// slower).
double work_per_element(const ir::Graph& g, const tile::Kernel& k, const ir::Dims& shape) {
  double flops = 0;
  for (ir::NodeId n : k.nodes) flops += static_cast<double>(ir::primitive_flops(g.node(n)));
  int64_t elements = ir::numel(shape);
  return elements > 0 ? std::max(1.0, flops / static_cast<double>(elements)) : 1.0;
}

// Splits the anchor's outer dims first (whole rows stay in one task) until there are 4 tasks
// per core, while tasks keep 16K FLOPs at least (where that cuts them short: as many as the
// cores share evenly, where that is more than one), and not across a transpose's blocks. Dims
// of one index are passed over, except in a kernel with a transpose, which fit_task cuts along
// its blocks instead (cut here, segformer's transposes of [1, 16384, 32] took tasks of
// 2048 x 16 and ran 1.5-2x slower than in 16384 x 16).
void split_for_cores(const ir::Graph& g, const tile::Kernel& k, const ir::Dims& shape, double work, int cores,
                     Schedule& s) {
  const double min_task = 16 * 1024;
  const int64_t want_tasks = 4 * std::max(1, cores);
  bool transposes = false;
  for (ir::NodeId n : k.nodes) transposes = transposes || transposing_dim(g.node(n)) >= 0;
  int64_t total = ir::numel(shape), tasks = 1;
  for (size_t d = 0; d < shape.size() && tasks < want_tasks; ++d) {
    if (shape[d] == 1 && !transposes) continue;
    int64_t inner = total / std::max<int64_t>(1, shape[d]) / tasks;  // elements per task below d
    const int64_t wanted = std::min<int64_t>(shape[d], ceil_div(want_tasks, tasks));
    int64_t split = wanted;
    while (split > 1 && static_cast<double>(inner * ceil_div(shape[d], split)) * work < min_task) --split;
    auto pieces = [&](int64_t n) { return ceil_div(shape[d], ceil_div(shape[d], n)); };
    if (split < wanted)
      for (int64_t even = split; even > 1; --even)
        if (tasks * pieces(even) % std::max(1, cores) == 0) {
          split = even;
          break;
        }
    if (split <= 1) break;
    Schedule cut = s;
    cut.tile[d] = ceil_div(shape[d], split);
    if (transposes && task_bytes(g, k, cut).transpose_side < kTransposeBlock) continue;
    s = cut;
    tasks *= pieces(split);
  }
}

}  // namespace

Schedule default_schedule(const ir::Graph& g, const tile::Kernel& k, int cores) {
  ORCHID_CHECK(!k.outputs.empty()) << "a kernel without outputs";
  const ir::Dims& shape = g.type(k.outputs[anchor_output(g, k)]).shape;
  Schedule s;
  s.tile = shape;
  s.vector_width = 16;
  s.unroll = 4;
  int64_t written = 0;
  for (ir::ValueId v : k.outputs) written += g.type(v).numel() * ir::dtype_bytes(g.type(v).dtype);
  s.stream = written >= kStreamBytes;
  if (std::optional<GemmAnchor> a = gemm_anchor(g, k, shape)) {
    s.tile = gemm_tiles(shape, a->f, std::max(1, cores));
    if (gemm_recomputes_columns(g, k, s, *a)) s.tile = whole_row_tiles(shape, a->f, std::max(1, cores));
    return s;
  }
  const double work = work_per_element(g, k, shape);
  split_for_cores(g, k, shape, work, cores, s);
  if (ir::numel(shape) == 0) return s;
  int64_t part = fit_task(g, k, shape, work, s);
  // The next task's part of the inputs lies about one task's part ahead.
  int64_t read = 0;
  for (ir::ValueId v : tile::kernel_inputs(g, k)) read += g.type(v).numel() * ir::dtype_bytes(g.type(v).dtype);
  if (read >= kStreamBytes) s.prefetch = static_cast<int>(std::clamp((part + 63) / 64 * 64, kMinPrefetch, kMaxPrefetch));
  return s;
}

}  // namespace orchid::codegen::cpu
