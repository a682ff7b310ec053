#include "kernel/kernel.h"

#include "core/error.h"

#include <algorithm>

namespace lockstep::kir {

std::vector<ExprP> out_vars(size_t rank) {
  std::vector<ExprP> v;
  for (size_t k = 0; k < rank; ++k) v.push_back(var(static_cast<int>(k)));
  return v;
}

std::vector<int> kernel_inputs(const Kernel& k) {
  std::vector<const Expr*> loads;
  collect_loads(k.body, loads);
  if (k.window.value) collect_loads(k.window.value, loads);
  std::vector<int> bufs;
  for (const Expr* l : loads)
    if (l->buf != k.window.buf && std::find(bufs.begin(), bufs.end(), l->buf) == bufs.end()) bufs.push_back(l->buf);
  if (k.symbols >= 0 && std::find(bufs.begin(), bufs.end(), k.symbols) == bufs.end()) bufs.push_back(k.symbols);
  return bufs;
}

std::string node_list(const Kernel& k) {
  std::string s;
  for (const std::string& n : k.nodes) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string describe(const Plan& p, const Kernel& k) {
  const Buffer& b = p.buffers[k.out];
  return k.name + " [" + node_list(k) + "]: b" + std::to_string(k.out) + dtype_name(b.dtype) +
         shape_str(b.shape) + " = " + to_string(k.body) + (k.schedule.chosen() ? " {" + describe(k.schedule) + "}" : "") +
         (k.window.value ? " window b" + std::to_string(k.window.buf) + " = " + to_string(k.window.value) : "");
}

std::string describe(const Schedule& s) {
  auto f = [](const char* name, int64_t v) { return std::string(" ") + name + "=" + std::to_string(v); };
  if (s.loops == Schedule::Loops::Host) return "host" + f("lanes", s.lanes) + f("rows", s.rows) + f("tile_at", s.tile_at);
  if (s.loops == Schedule::Loops::Gpu)
    return "gpu" + f("group", s.group) + f("threads", s.threads) + f("rows", s.rows) + f("cols", s.cols) +
           (s.spread_cols ? " spread" : "") + f("unroll", s.unroll) +
           (s.per_item > 1 ? f("per_item", s.per_item) : "") +
           (s.fill ? f("fill", s.fill) : "") +
           (s.fill_rows ? f("fill_rows", s.fill_rows) + f("fill_cols", s.fill_cols) : "") +
           (s.stage >= 0 ? " stage=b" + std::to_string(s.stage) + "x" + std::to_string(s.stage_slots) : "") +
           (s.shared ? f("shared", s.shared) : "");
  return "unscheduled";
}

std::vector<Schedule> tile_choices(const Schedule& s, bool symbolic) {
  if (!symbolic || (s.fill == 0 && s.stage < 0) || s.rows * s.cols == 1) return {s};
  std::vector<Schedule> tiles = {s};
  if (s.fill_rows * s.fill_cols > 1) {
    Schedule smaller = s;
    smaller.rows = s.fill_rows;
    smaller.cols = s.fill_cols;
    smaller.unroll = smaller.cols > 1 ? s.unroll : 0;
    tiles.push_back(smaller);
  }
  Schedule one = s;
  one.rows = one.cols = 1;
  one.spread_cols = false;
  one.unroll = 0;
  one.stage = -1;
  tiles.push_back(one);
  return tiles;
}

int64_t elements_per_item(const Schedule& t, int64_t outputs) {
  int64_t per = t.per_item;
  while (per > 1 && outputs / per < t.fill) per /= 2;
  return per;
}

int64_t work_items(const Schedule& t, int64_t outputs) {
  int64_t per = elements_per_item(t, outputs) * t.rows * t.cols;
  return (outputs + per - 1) / per;
}

int64_t shared_bytes(const Schedule& t) { return t.stage >= 0 ? t.stage_slots * t.rows * t.stage_row_bytes : 0; }

bool tile_suits(const Schedule& s, const Schedule& t, int64_t outputs, int64_t last) {
  int64_t tile = t.rows * t.cols;
  if (tile == 1) return true;
  return (s.fill == 0 || outputs / tile >= s.fill) && (t.stage < 0 || last / t.cols >= s.group);
}

std::string describe(const Plan& p) {
  std::string s;
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const Buffer& buf = p.buffers[b];
    static const char* kinds[] = {"input", "output", "constant", "temp", "symbols"};
    std::string dims;
    for (const ExprP& d : buf.dims) dims += (dims.empty() ? " dims " : ",") + to_string(d);
    s += "b" + std::to_string(b) + " " + kinds[buf.kind] + " " + dtype_name(buf.dtype) +
         shape_str(buf.shape) + dims + " '" + buf.name + "'\n";
  }
  for (const Kernel& k : p.kernels) s += describe(p, k) + "\n";
  return s;
}

ExprP dim_expr(const Plan& p, int b, size_t d) {
  const Buffer& buf = p.buffers[b];
  return buf.dims.empty() ? icst(buf.shape[d]) : buf.dims[d];
}

std::vector<ExprP> strides_of(const std::vector<ExprP>& dims) {
  std::vector<ExprP> strides(dims.size());
  ExprP at = icst(1);
  for (size_t d = dims.size(); d-- > 0;) strides[d] = at, at = mul(at, dims[d]);
  return strides;
}

std::vector<ExprP> stride_exprs(const Plan& p, int b) {
  std::vector<ExprP> dims;
  for (size_t d = 0; d < p.buffers[b].shape.size(); ++d) dims.push_back(dim_expr(p, b, d));
  return strides_of(dims);
}

ExprP flat_index(const Plan& p, int b, const std::vector<ExprP>& index) {
  std::vector<ExprP> strides = stride_exprs(p, b);
  ExprP flat = icst(0);
  for (size_t d = 0; d < index.size(); ++d) {
    ExprP n = dim_expr(p, b, d);
    if (!(n->op == Op::Const && n->i == 1)) flat = add(flat, mul(index[d], strides[d]));
  }
  return flat;
}

ExprP numel_expr(const Plan& p, int b) {
  ExprP n = icst(1);
  for (size_t d = 0; d < p.buffers[b].shape.size(); ++d) n = mul(n, dim_expr(p, b, d));
  return n;
}

void require_checks_pass(const Plan& p, const std::vector<int64_t>& counts) {
  for (size_t k = 0; k < p.checks.size(); ++k)
    if (counts[k]) throw Error("node '" + p.checks[k].node + "': " + std::to_string(counts[k]) + " " + p.checks[k].what);
}

}  // namespace lockstep::kir
