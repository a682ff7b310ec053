#include "passes/schedule.h"

#include <algorithm>

#include "core/error.h"
#include "kernel/symbols.h"

namespace lockstep {

using namespace kir;

namespace {

// Whether dim d is the same at every length (a symbolic plan's dims may vary).
bool fixed_dim(const Buffer& b, size_t d) { return b.dims.empty() || b.dims[d]->op == Op::Const; }

// Whether dim d is a multiple of m at every length: c + sum_j k_j * s_j is one for all values
// of the symbols exactly when c and every k_j are (8*T is, for any T; T+2 is not).
bool always_divides(const Plan& p, const Buffer& b, size_t d, int64_t m) {
  if (fixed_dim(b, d)) return b.shape[d] % m == 0;
  std::vector<int64_t> at(p.symbols.size(), 0);
  int64_t c = symbolic_value(*b.dims[d], at, p.symbol_buf);
  if (c % m) return false;
  for (size_t j = 0; j < at.size(); ++j) {
    at.assign(at.size(), 0);
    at[j] = 1;
    if ((symbolic_value(*b.dims[d], at, p.symbol_buf) - c) % m) return false;
  }
  return true;
}

// The largest power of two up to `most` dividing the dim before the last; 1 for rank < 2 and
// for a dim that varies with the length (no divisor holds for every length).
int64_t rows_dividing(const Buffer& b, int64_t most) {
  const Shape& s = b.shape;
  if (s.size() < 2 || !fixed_dim(b, s.size() - 2)) return 1;
  int64_t rows = most;
  while (rows > 1 && s[s.size() - 2] % rows != 0) rows /= 2;
  return rows;
}

// Rows of a host reduction tile: `most`, or the whole dim before the last where it is shorter;
// a dim they do not divide ends in a block of the rest (the printer's second copy of the tile).
// 1 for rank < 2 and for a dim that varies with the length.
int64_t host_rows(const Buffer& b, int64_t most) {
  const Shape& s = b.shape;
  if (s.size() < 2 || !fixed_dim(b, s.size() - 2) || most < 1) return 1;
  return std::min(most, std::max<int64_t>(1, s[s.size() - 2]));
}

constexpr int64_t kFewTiles = 4;
constexpr int64_t kCachedBytes = int64_t{1} << 20;

Schedule host_schedule(const Buffer& b, const Expr* red, const TargetDesc& t) {
  const Shape& s = b.shape;
  Schedule h;
  h.loops = Schedule::Loops::Host;
  size_t r = s.size();
  h.lanes = red ? t.reduce_lanes : t.element_lanes;
  h.rows = red ? host_rows(b, t.reduce_rows) : 1;
  h.tile_at = red && r >= 2 ? static_cast<int64_t>(r) - 2 : (r ? static_cast<int64_t>(r) - 1 : 0);
  // A reduction whose last dim spans a few tiles (a 7x7 map's 49 positions) and whose rows'
  // operand outgrows the caches (512 channels x 4608 terms) runs its tiles inside each row
  // block: the block's weights then serve every tile from cache, where running the row blocks
  // inside each tile streamed all the weights from memory once per tile.
  if (red && r >= 2 && fixed_dim(b, r - 1) && fixed_dim(b, r - 2) && (s[r - 1] + h.lanes - 1) / h.lanes <= kFewTiles &&
      s[r - 2] * shape_numel(red->shape) * 4 >= kCachedBytes)
    h.tile_at = static_cast<int64_t>(r) - 1;
  return h;
}

// The operand of a reduction a group stages in shared memory (Schedule::stage): a float load,
// the only one of its buffer in the term, whose index depends on the reduction and on no
// output column, so that the items of one row block read the same values. A group whose
// items all lie in one row block (every row block holds whole groups) copies one block's;
// otherwise two, the block of its first item and the next, which hold all of its items while a
// row block has at least a group of them. The copy must fit in shared memory.
void stage_operand(const Buffer& b, const Expr& red, Schedule& g, const TargetDesc& t) {
  const Shape& s = b.shape;
  size_t r = s.size();
  if (t.shared_bytes <= 0 || r < 2 || r > 62 || g.rows * g.cols <= 1) return;
  bool fixed = b.dims.empty();
  int64_t per_block = s[r - 1] / g.cols;  // work items of one row block (at the probe length if symbolic)
  if (fixed && per_block < g.group) return;
  int64_t slots = fixed && per_block % g.group == 0 ? 1 : 2;
  uint64_t column = uint64_t{1} << (r - 1), terms = 0;
  for (size_t d = 0; d < red.shape.size() && red.i + static_cast<int64_t>(d) < 63; ++d) terms |= uint64_t{1} << (red.i + d);
  std::vector<const Expr*> loads;
  collect_loads(red.args[0], loads);
  for (const Expr* ld : loads) {
    auto same_buf = [&](const Expr* o) { return o->buf == ld->buf; };
    bool plain = std::none_of(ld->args.begin(), ld->args.end(), [](const ExprP& a) { return a->has & Expr::kLoad; });
    if (!dtype_is_float(ld->type) || !plain || (ld->var_mask & (column | uint64_t{1} << 63)) || !(ld->var_mask & terms) ||
        std::count_if(loads.begin(), loads.end(), same_buf) != 1)
      continue;
    int64_t bytes = ld->type == DType::f64 ? 8 : 4;  // held in the compute type
    if (slots * g.rows * shape_numel(red.shape) * bytes > t.shared_bytes) return;
    g.stage = ld->buf;
    g.stage_slots = slots;
    g.stage_row_bytes = shape_numel(red.shape) * bytes;
    g.shared = fixed ? shared_bytes(g) : 0;  // a symbolic length's is set at bind
    return;
  }
}

// A reduction's work item computes rows of the dim before the last (a conv's output channels
// share each input load) times columns of the last (with the taps unrolled, neighbouring
// outputs share the input they overlap on).
Schedule gpu_schedule(const Plan& p, const Buffer& b, const Expr* red, const TargetDesc& t) {
  const Shape& s = b.shape;
  Schedule g;
  g.loops = Schedule::Loops::Gpu;
  g.group = t.group_threads;
  if (red && s.size() >= 2) {
    g.rows = rows_dividing(b, t.thread_rows);
    // Columns only where each term is a plain product: a masked one (a strided transposed
    // conv's phases) shares no loads between neighbours and pays its index arithmetic per column.
    if (red->args[0]->op != Op::Select)
      for (g.cols = t.thread_cols; g.cols > 1 && !always_divides(p, b, s.size() - 1, g.cols);) g.cols /= 2;
  }
  // Fewer outputs per item until the device is full; a symbolic plan's size is known only when
  // a length is bound, so its kernel chooses then between its tile and one output per item.
  while (b.dims.empty() && shape_numel(s) / (g.rows * g.cols) < t.fill_threads && g.rows * g.cols > 1)
    (g.cols >= g.rows ? g.cols : g.rows) /= 2;
  if (!b.dims.empty() && g.rows * g.cols > 1 && t.fill_threads > 0) {
    g.fill = t.symbolic_fill_threads > 0 ? t.symbolic_fill_threads : t.fill_threads;
    int64_t rows = g.rows, cols = g.cols;  // a quarter of the tile, halved as above
    for (int k = 0; k < 2 && rows * cols > 1; ++k) (cols >= rows ? cols : rows) /= 2;
    if (rows * cols > 1) g.fill_rows = rows, g.fill_cols = cols;
  }
  if (!red) {  // a fixed shape's elements per item chosen now; a symbolic length's at bind
    g.per_item = std::max<int64_t>(t.element_items, 1);
    g.fill = t.element_fill;
    if (b.dims.empty()) g.per_item = elements_per_item(g, shape_numel(s)), g.fill = 0;
  }
  g.spread_cols = g.cols > 1 && t.spread_cols;
  g.threads = work_items(g, shape_numel(s));  // at the probe length in a symbolic plan (instantiate sets it)
  g.unroll = g.cols > 1 ? t.unroll : 0;
  if (red) stage_operand(b, *red, g, t);
  return g;
}

}  // namespace

Schedule schedule_for(const Plan& p, const Kernel& k, const TargetDesc& t) {
  const Buffer& b = p.buffers[k.out];
  const Expr* red = find_reduce(k.body);
  return t.gpu ? gpu_schedule(p, b, red, t) : host_schedule(b, red, t);
}

void choose_schedules(Plan& p, const TargetDesc& t) {
  if (t.gpu && (t.group_threads < 1 || (t.max_group_threads && t.group_threads > t.max_group_threads)))
    throw InternalError("target '" + t.name + "' asks for " + std::to_string(t.group_threads) +
                        " threads per group, outside its limit of " + std::to_string(t.max_group_threads));
  for (Kernel& k : p.kernels) {
    size_t args = kernel_inputs(k).size() + 1;
    if (t.max_buffer_args && static_cast<int64_t>(args) > t.max_buffer_args)
      throw Error("kernel " + k.name + " (" + node_list(k) + ") takes " + std::to_string(args) + " buffers; target '" +
                  t.name + "' allows at most " + std::to_string(t.max_buffer_args) + " per kernel");
    k.schedule = schedule_for(p, k, t);
  }
}

void choose_schedules(Plan& p, const TargetDesc& t, PassManager& pm) {
  choose_schedules(p, t);
  pm.required(kSchedulePass, std::to_string(p.kernels.size()) + " kernels for " + t.name);
}

}  // namespace lockstep
