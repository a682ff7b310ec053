// Reductions that are not sums of products: the Reduce family, the Softmax family, ArgMax and
// ArgMin, CumSum and CumProd. Each element folds its inputs in one fixed order (reduction vars outer to inner).
#include <algorithm>
#include <cmath>

#include "kernel/lower_ctx.h"
#include "kernel/lower_rows.h"
#include "ops/reduce.h"

namespace lockstep::kir {

namespace {

ExprP v(int64_t k) { return var(static_cast<int>(k)); }
ExprP eq(ExprP a, ExprP b) { return binary(Fn::Eq, a, b); }

// log(sum(exp(x - m))) + m, with m the row's maximum where it is finite and 0 where not:
// exp never overflows, and rows of infinities give the ref's answer.
ExprP log_sum_exp(Lowering& L, int n, int x, const std::vector<int64_t>& axes, bool keep, int first) {
  const Shape& xs = L.shape(x);
  DType t = L.type(x).dtype;
  Rows rows = rows_of(xs, axes);
  int mx = row_fold(L, n, x, axes, Fn::Max);
  auto shift = [&](std::vector<ExprP> idx) {
    ExprP m = widened(load(mx, rows.kept, t, std::move(idx)));
    return select(eq(unary(Fn::Abs, m), cst(INFINITY, m->type)), cst(0, m->type), m);
  };
  std::vector<ExprP> at_out = kept_index(xs.size(), axes, keep);
  ExprP term = unary(Fn::Exp, sub(widened(L.read(x, reduced_index(xs.size(), axes, keep, first))), shift(at_out)));
  return narrowed(binary(Fn::Add, unary(Fn::Log, reduce(Fn::Add, term, first, rows.extents)), shift(at_out)), t);
}

void lower_reduce_op(Lowering& L, int n, ReduceKind kind) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0], y = node.outputs[0];
  const Shape& xs = L.shape(x);
  const RefTensor* axes_value = node.inputs.size() > 1 && node.inputs[1] >= 0 && L.types.value[node.inputs[1]]
                                    ? &*L.types.value[node.inputs[1]]
                                    : nullptr;
  if (node.inputs.size() > 1 && node.inputs[1] >= 0 && !axes_value) c.fail("axes must be known when compiling");
  std::vector<int64_t> axes = reduce_axes(c, static_cast<int64_t>(xs.size()), axes_value);
  if (axes.empty()) return L.emit(n, y, L.read(x, out_vars(xs.size())));  // noop_with_empty_axes
  bool keep = c.attr_int("keepdims", 1);
  Rows rows = rows_of(xs, axes);
  int first = static_cast<int>(L.shape(y).size());
  DType t = L.type(y).dtype;
  if (kind == ReduceKind::LogSumExp) return L.emit(n, y, log_sum_exp(L, n, x, axes, keep, first));
  ExprP term = L.read(x, reduced_index(xs.size(), axes, keep, first));
  if (kind != ReduceKind::Max && kind != ReduceKind::Min) term = widened(term);
  if (t == DType::boolean) term = cast(term, DType::u8);  // any / all as the max / min of 0 and 1
  DType wt = term->type;
  auto sum = [&](ExprP e) { return reduce(Fn::Add, std::move(e), first, rows.extents); };
  ExprP body;
  switch (kind) {
    case ReduceKind::Max:
      body = reduce(Fn::Max, term, first, rows.extents);
      break;
    case ReduceKind::Min:
      body = reduce(Fn::Min, term, first, rows.extents);
      break;
    case ReduceKind::Prod:
      body = reduce(Fn::Mul, term, first, rows.extents);
      break;
    case ReduceKind::L1:
      body = sum(unary(Fn::Abs, term));
      break;
    case ReduceKind::L2:
      body = unary(Fn::Sqrt, sum(value_arith(Fn::Mul, term, term)));
      break;
    case ReduceKind::SumSquare:
      body = sum(value_arith(Fn::Mul, term, term));
      break;
    case ReduceKind::LogSum:
      body = unary(Fn::Log, sum(term));
      break;
    case ReduceKind::Mean:
      // An integer mean: the sum (wrapped in the type) divided by the count, truncating; of nothing, 0.
      if (dtype_is_float(t)) body = binary(Fn::Div, sum(term), cst(static_cast<double>(rows.count), wt));
      else body = rows.count == 0 ? cst(0, t) : binary(Fn::IDiv, sum(term), cst(static_cast<double>(rows.count), t));
      break;
    default:
      body = sum(term);
  }
  L.emit(n, y, narrowed(body, t));
}

// The axes of a Softmax-family row: one axis, or from opset 13 down, [axis, rank) coerced.
std::vector<int64_t> softmax_axes(const OpCtx& c, int64_t rank) {
  int64_t axis = normalize_axis(c.attr_int("axis", c.opset < 13 ? 1 : -1), rank);
  std::vector<int64_t> axes;
  for (int64_t k = axis; k < (c.opset < 13 ? rank : axis + 1); ++k) axes.push_back(k);
  return axes;
}

// A Softmax-family node: its input and output, and the rows it normalises.
struct SoftmaxRows {
  int x, y;
  int64_t rank;
  std::vector<int64_t> axes;
  Rows rows;
};

SoftmaxRows softmax_rows(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  int x = node.inputs[0];
  int64_t rank = static_cast<int64_t>(L.shape(x).size());
  std::vector<int64_t> axes = softmax_axes(OpCtx(L.g, n), rank);
  return {x, node.outputs[0], rank, axes, rows_of(L.shape(x), axes)};
}

}  // namespace

// Softmax and LogSoftmax as three kernels: row max, sum of exp(x - max), then the result.
ExprP softmax_widened(Lowering& L, int n, int x, const std::vector<int64_t>& axes, bool log) {
  DType t = L.type(x).dtype;
  size_t rank = L.shape(x).size();
  int r = static_cast<int>(rank);
  Rows rows = rows_of(L.shape(x), axes);
  std::vector<ExprP> kept_idx = kept_index(rank, axes, true);
  int mx = row_fold(L, n, x, axes, Fn::Max);
  ExprP shifted =
      sub(widened(L.read(x, reduced_index(rank, axes, true, r))), widened(load(mx, rows.kept, t, out_vars(rank))));
  DType wt = shifted->type;
  int sm = L.emit_temp(n, wt, rows.kept, reduce(Fn::Add, unary(Fn::Exp, shifted), r, rows.extents));
  ExprP s = sub(widened(L.read(x, out_vars(rank))), widened(load(mx, rows.kept, t, kept_idx)));
  ExprP total = load(sm, rows.kept, wt, kept_idx);
  return log ? sub(s, unary(Fn::Log, total)) : binary(Fn::Div, unary(Fn::Exp, s), total);
}

namespace {

void lower_softmax(Lowering& L, int n, bool log) {
  auto [x, y, rank, axes, rows] = softmax_rows(L, n);
  L.emit(n, y, narrowed(softmax_widened(L, n, x, axes, log), L.type(y).dtype));
}

// Each row's index (flat over `axes`) of its first extreme, or last with `last`, in an int64
// temp of the kept shape. NaN is the extreme when a row has one, as numpy's argmax says.
int arg_extreme(Lowering& L, int n, int x, const std::vector<int64_t>& axes, bool smallest, bool last) {
  const Shape& xs = L.shape(x);
  DType t = L.type(x).dtype;
  Rows rows = rows_of(xs, axes);
  int r = static_cast<int>(xs.size());
  int m = row_fold(L, n, x, axes, smallest ? Fn::Min : Fn::Max);
  ExprP xr = L.read(x, reduced_index(xs.size(), axes, true, r));
  ExprP hit = eq(xr, load(m, rows.kept, t, out_vars(xs.size())));
  if (dtype_is_float(t)) hit = binary(Fn::Or, hit, is_nan(xr));
  std::vector<ExprP> j;
  for (size_t k = 0; k < axes.size(); ++k) j.push_back(v(r + static_cast<int64_t>(k)));
  ExprP at = select(hit, flatten_index(j, rows.extents), icst(last ? -1 : rows.count));
  return L.emit_temp(n, DType::i64, rows.kept, reduce(last ? Fn::Max : Fn::Min, at, r, rows.extents));
}

void lower_arg(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0], y = node.outputs[0];
  int64_t rank = static_cast<int64_t>(L.shape(x).size());
  std::vector<int64_t> axes = {normalize_axis(c.attr_int("axis", 0), rank)};
  int idx = arg_extreme(L, n, x, axes, node.op_type == "ArgMin", c.attr_int("select_last_index", 0) != 0);
  L.emit(n, y,
         load(idx, rows_of(L.shape(x), axes).kept, DType::i64, kept_index(rank, axes, c.attr_int("keepdims", 1))));
}

// 1 where the row's first maximum is, 0 elsewhere.
void lower_hardmax(Lowering& L, int n) {
  auto [x, y, rank, axes, rows] = softmax_rows(L, n);
  int idx = arg_extreme(L, n, x, axes, false, false);
  std::vector<ExprP> j;
  for (int64_t a : axes) j.push_back(v(a));
  ExprP here = eq(flatten_index(j, rows.extents), load(idx, rows.kept, DType::i64, kept_index(rank, axes, true)));
  DType t = L.type(y).dtype;
  L.emit(n, y, select(here, cst(1, t), cst(0, t)));
}

// CumSum and CumProd: element i folds x along the axis in order (from the end when reversed),
// the terms past i (or at i, exclusive) selected away as 0 (1 for products), the reference's order.
void lower_cumulative(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0], y = node.outputs[0];
  const Shape& xs = L.shape(x);
  int64_t rank = static_cast<int64_t>(xs.size());
  const auto& av = L.types.value[node.inputs[1]];
  if (!av) c.fail("axis must be known when compiling");
  int64_t axis = normalize_axis(av->get_int(0), rank);
  bool exclusive = c.attr_int("exclusive", 0) != 0, reverse = c.attr_int("reverse", 0) != 0;
  int64_t len = xs[axis];
  ExprP j = v(rank), i = v(axis);
  ExprP pos = reverse ? sub(icst(len - 1), j) : j;
  std::vector<ExprP> idx = out_vars(rank);
  idx[axis] = pos;
  ExprP a = reverse ? i : pos, b = reverse ? pos : i;  // included: a <= b, or a < b exclusive
  ExprP in = binary(exclusive ? Fn::Lt : Fn::Le, a, b);
  ExprP term = widened(L.read(x, idx));
  bool prod = node.op_type == "CumProd";
  ExprP body =
      reduce(prod ? Fn::Mul : Fn::Add, select(in, term, cst(prod ? 1 : 0, term->type)), static_cast<int>(rank), {len});
  L.emit(n, y, narrowed(body, L.type(y).dtype));
}

}  // namespace

bool lowering_needs_value(const Node& node, size_t k) {
  return (node.op_type == "CumSum" || node.op_type == "CumProd") && k == 1;
}

bool lower_reduce(Lowering& L, int n) {
  const std::string& op = L.g.nodes[n].op_type;
  if (auto kind = reduce_kind(op)) lower_reduce_op(L, n, *kind);
  else if (op == "Softmax" || op == "LogSoftmax") lower_softmax(L, n, op == "LogSoftmax");
  else if (op == "ArgMax" || op == "ArgMin") lower_arg(L, n);
  else if (op == "Hardmax") lower_hardmax(L, n);
  else if (op == "CumSum" || op == "CumProd") lower_cumulative(L, n);
  else return false;
  return true;
}

}  // namespace lockstep::kir
