// Normalisations as kernels: BatchNormalization elementwise over per-channel parameters;
// InstanceNormalization and LayerNormalization as a row mean, a row variance (the squares of
// the deviations from that mean), then the normalised output, computing in float32 or float64.
#include <algorithm>

#include "kernel/lower_rows.h"

namespace lockstep::kir {

namespace {

// A parameter of shape [C] at the output's channel (var 1), in the computing type.
ExprP channel(Lowering& L, int v) { return widened(L.read(v, {var(1)})); }

void lower_batch_norm(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int y = node.outputs[0];
  size_t rank = L.shape(y).size();
  ExprP x = widened(L.read(node.inputs[0], out_vars(rank)));
  ExprP sd = unary(Fn::Sqrt, add(channel(L, node.inputs[4]), cst(c.attr_float("epsilon", 1e-5), x->type)));
  ExprP norm = div(sub(x, channel(L, node.inputs[3])), sd);
  L.emit(n, y, narrowed(add(mul(norm, channel(L, node.inputs[1])), channel(L, node.inputs[2])), L.type(y).dtype));
}

// Mean and 1 / sqrt(variance + eps) of each row over `axes`, as temps of the kept shape.
struct RowStats {
  int mean, inv;
  DType type;
  Shape kept;
};

RowStats row_stats(Lowering& L, int n, int x, const std::vector<int64_t>& axes, double eps) {
  const Shape& xs = L.shape(x);
  int r = static_cast<int>(xs.size());
  Rows rows = rows_of(xs, axes);
  ExprP xr = widened(L.read(x, reduced_index(xs.size(), axes, true, r)));
  DType wt = xr->type;
  ExprP count = cst(static_cast<double>(rows.count), wt);
  int mean = L.emit_temp(n, wt, rows.kept, div(reduce(Fn::Add, xr, r, rows.extents), count));
  ExprP d = sub(xr, load(mean, rows.kept, wt, out_vars(xs.size())));
  ExprP var_ = div(reduce(Fn::Add, mul(d, d), r, rows.extents), count);
  ExprP inv = div(cst(1, wt), unary(Fn::Sqrt, add(var_, cst(eps, wt))));
  return {mean, L.emit_temp(n, wt, rows.kept, inv), wt, rows.kept};
}

// (x - mean) * inv, at the output element; the caller scales and shifts it.
ExprP normalised(Lowering& L, int x, const RowStats& s, const std::vector<int64_t>& axes) {
  size_t rank = L.shape(x).size();
  std::vector<ExprP> at = kept_index(rank, axes, true);
  ExprP xv = widened(L.read(x, out_vars(rank)));
  return mul(sub(xv, load(s.mean, s.kept, s.type, at)), load(s.inv, s.kept, s.type, at));
}

std::vector<int64_t> axes_from(int64_t first, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a = first; a < rank; ++a) axes.push_back(a);
  return axes;
}

void lower_instance_norm(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0], y = node.outputs[0];
  std::vector<int64_t> axes = axes_from(2, static_cast<int64_t>(L.shape(x).size()));
  RowStats s = row_stats(L, n, x, axes, c.attr_float("epsilon", 1e-5));
  ExprP out = add(mul(normalised(L, x, s, axes), channel(L, node.inputs[1])), channel(L, node.inputs[2]));
  L.emit(n, y, narrowed(out, L.type(y).dtype));
}

void lower_layer_norm(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0], y = node.outputs[0];
  int64_t rank = static_cast<int64_t>(L.shape(x).size());
  std::vector<int64_t> axes = axes_from(normalize_axis(c.attr_int("axis", -1), rank), rank);
  RowStats s = row_stats(L, n, x, axes, c.attr_float("epsilon", 1e-5));
  ExprP out = mul(normalised(L, x, s, axes), widened(L.read_bcast(node.inputs[1], rank)));
  if (c.has_input(2)) out = add(out, widened(L.read_bcast(node.inputs[2], rank)));
  L.emit(n, y, narrowed(out, L.type(y).dtype));
  for (size_t k = 1; k < 3; ++k)  // Mean and InvStdDev, float32, of the kept shape
    if (c.has_output(k))
      L.emit(n, node.outputs[k], narrowed(load(k == 1 ? s.mean : s.inv, s.kept, s.type, out_vars(rank)), DType::f32));
}

// A statistic of each row of x over `axes`, fold(x at the reduction vars, the reduction's first
// var, extents, count), as a temp of the kept shape; returns its load at the output element.
template <class Fold>
ExprP row_temp(Lowering& L, int n, int x, const std::vector<int64_t>& axes, Fold fold) {
  const Shape& xs = L.shape(x);
  int r = static_cast<int>(xs.size());
  Rows rows = rows_of(xs, axes);
  ExprP xr = widened(L.read(x, reduced_index(xs.size(), axes, true, r)));
  int t = L.emit_temp(n, xr->type, rows.kept, fold(xr, r, rows.extents, static_cast<double>(rows.count)));
  return load(t, rows.kept, xr->type, kept_index(xs.size(), axes, true));
}

// x * (1 / sqrt(mean(x^2) + eps)) * scale.
void lower_rms_norm(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0];
  size_t rank = L.shape(x).size();
  double eps = c.attr_float("epsilon", 1e-5);
  auto inv_rms = [&](ExprP xr, int first, const Shape& extents, double count) {
    ExprP mean_sq = div(reduce(Fn::Add, mul(xr, xr), first, extents), cst(count, xr->type));
    return div(cst(1, xr->type), unary(Fn::Sqrt, add(mean_sq, cst(eps, xr->type))));
  };
  std::vector<int64_t> axes = axes_from(normalize_axis(c.attr_int("axis", -1), rank), rank);
  ExprP inv = row_temp(L, n, x, axes, inv_rms);
  ExprP out = mul(mul(widened(L.read(x, out_vars(rank))), inv), widened(L.read_bcast(node.inputs[1], rank)));
  L.emit(n, node.outputs[0], narrowed(out, L.type(node.outputs[0]).dtype));
}

// x / ||x||_p along the axis, 0 where the norm is 0.
void lower_lp_norm(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0];
  size_t rank = L.shape(x).size();
  bool l1 = c.attr_int("p", 2) == 1;
  auto norm = [&](ExprP xr, int first, const Shape& extents, double) {
    return l1 ? reduce(Fn::Add, unary(Fn::Abs, xr), first, extents)
              : unary(Fn::Sqrt, reduce(Fn::Add, mul(xr, xr), first, extents));
  };
  ExprP nv = row_temp(L, n, x, {normalize_axis(c.attr_int("axis", -1), rank)}, norm);
  ExprP zero = cst(0, nv->type);
  ExprP out = select(binary(Fn::Eq, nv, zero), zero, div(widened(L.read(x, out_vars(rank))), nv));
  L.emit(n, node.outputs[0], narrowed(out, L.type(node.outputs[0]).dtype));
}

// GroupNormalization: sample n's group g is one row, channels g*m .. g*m + m - 1 (m = C / G)
// and every position; its mean and 1 / sqrt(variance + eps) are [N, G] temps.
void lower_group_norm(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0];
  const Shape& xs = L.shape(x);
  int64_t groups = c.attr_int("num_groups", 1), m = xs[1] / groups;
  Shape row = {m};
  row.insert(row.end(), xs.begin() + 2, xs.end());
  // x at sample var 0, group var 1, the row's position at vars 2..
  std::vector<ExprP> at = {var(0), add(mul(var(1), icst(m)), var(2))};
  for (size_t k = 2; k < xs.size(); ++k) at.push_back(var(static_cast<int>(k + 1)));
  ExprP xr = widened(L.read(x, at));
  DType wt = xr->type;
  Shape stat = {xs[0], groups};
  ExprP count = cst(static_cast<double>(shape_numel(row)), wt);
  int mean = L.emit_temp(n, wt, stat, div(reduce(Fn::Add, xr, 2, row), count));
  ExprP d = sub(xr, load(mean, stat, wt, {var(0), var(1)}));
  ExprP inv =
      div(cst(1, wt),
          unary(Fn::Sqrt, add(div(reduce(Fn::Add, mul(d, d), 2, row), count), cst(c.attr_float("epsilon", 1e-5), wt))));
  int invb = L.emit_temp(n, wt, stat, inv);
  ExprP g = binary(Fn::Div, var(1), icst(m));
  ExprP p = L.g.opset < 21 ? g : var(1);
  ExprP out = mul(mul(sub(widened(L.read(x, out_vars(xs.size()))), load(mean, stat, wt, {var(0), g})),
                      load(invb, stat, wt, {var(0), g})),
                  widened(L.read(node.inputs[1], {p})));
  out = add(out, widened(L.read(node.inputs[2], {p})));
  L.emit(n, node.outputs[0], narrowed(out, L.type(node.outputs[0]).dtype));
}

// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over the axes.
void lower_mvn(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0];
  const Shape& xs = L.shape(x);
  std::vector<int64_t> axes = c.attr_ints("axes", {0, 2, 3});
  for (int64_t& a : axes) a = normalize_axis(a, static_cast<int64_t>(xs.size()));
  std::sort(axes.begin(), axes.end());
  RowStats s = row_stats(L, n, x, axes, 0.0);
  std::vector<ExprP> at = kept_index(xs.size(), axes, true);
  ExprP sd = div(cst(1, s.type), load(s.inv, s.kept, s.type, at));  // sqrt(variance + 0)
  ExprP out =
      div(sub(widened(L.read(x, out_vars(xs.size()))), load(s.mean, s.kept, s.type, at)), add(sd, cst(1e-9, s.type)));
  L.emit(n, node.outputs[0], narrowed(out, L.type(node.outputs[0]).dtype));
}

// LRN: the squares of the channel window (var r over it, channels outside skipped).
void lower_lrn(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0];
  const Shape& xs = L.shape(x);
  int r = static_cast<int>(xs.size());
  int64_t size = c.attr_int("size", 1), back = (size - 1) / 2;
  std::vector<ExprP> at = out_vars(xs.size());
  ExprP ch = add(var(1), icst(-back));
  at[1] = add(ch, var(r));
  ExprP inside = binary(Fn::And, binary(Fn::Le, icst(0), at[1]), binary(Fn::Lt, at[1], icst(xs[1])));
  ExprP v = widened(L.read(x, at));
  DType wt = v->type;
  ExprP sq = reduce(Fn::Add, select(inside, mul(v, v), cst(0, wt)), r, {size});
  double alpha = c.attr_float("alpha", 1e-4), beta = c.attr_float("beta", 0.75), bias = c.attr_float("bias", 1.0);
  ExprP base = add(cst(bias, wt), mul(cst(alpha / static_cast<double>(size), wt), sq));
  ExprP out = div(widened(L.read(x, out_vars(xs.size()))), binary(Fn::Pow, base, cst(beta, wt)));
  L.emit(n, node.outputs[0], narrowed(out, L.type(node.outputs[0]).dtype));
}

}  // namespace

bool lower_normalization(Lowering& L, int n) {
  const std::string& op = L.g.nodes[n].op_type;
  if (op == "BatchNormalization") lower_batch_norm(L, n);
  else if (op == "InstanceNormalization") lower_instance_norm(L, n);
  else if (op == "LayerNormalization") lower_layer_norm(L, n);
  else if (op == "RMSNormalization") lower_rms_norm(L, n);
  else if (op == "LpNormalization") lower_lp_norm(L, n);
  else if (op == "GroupNormalization") lower_group_norm(L, n);
  else if (op == "MeanVarianceNormalization") lower_mvn(L, n);
  else if (op == "LRN") lower_lrn(L, n);
  else return false;
  return true;
}

}  // namespace lockstep::kir
