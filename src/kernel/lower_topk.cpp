// TopK without a sort: each element's rank is the count of elements ahead of it along the axis
// (larger, or smaller, NaN above every number, an equal one only from an earlier index); output
// j is the element whose rank is j. Quadratic in the axis, the same bytes on every target.
#include "kernel/lower_ctx.h"
#include "ops/movement_common.h"

namespace lockstep::kir {

namespace {

// Whether a is ahead of b, ties aside.
ExprP ahead(ExprP a, ExprP b, bool largest, bool is_float) {
  ExprP order = largest ? binary(Fn::Lt, b, a) : binary(Fn::Lt, a, b);
  if (!is_float) return order;
  ExprP nan_first = largest ? binary(Fn::And, is_nan(a), unary(Fn::Not, is_nan(b)))
                            : binary(Fn::And, unary(Fn::Not, is_nan(a)), is_nan(b));
  return binary(Fn::Or, nan_first, order);
}

void lower_topk(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0];
  const Shape& xs = L.shape(x);
  int r = static_cast<int>(xs.size());
  int64_t axis = normalize_axis_or_fail(c, c.attr_int("axis", -1), r, "axis"), len = xs[axis];
  bool largest = c.attr_int("largest", 1) != 0;
  bool is_float = dtype_is_float(L.type(x).dtype);
  std::vector<ExprP> me = out_vars(r), other = out_vars(r);
  other[axis] = var(r);
  ExprP a = widened(L.read(x, other)), b = widened(L.read(x, me));
  ExprP before = binary(Fn::Or, ahead(a, b, largest, is_float),
                        binary(Fn::And, unary(Fn::Not, ahead(b, a, largest, is_float)),
                               binary(Fn::Lt, var(r), var(static_cast<int>(axis)))));
  int ranks = L.emit_temp(n, DType::i64, xs, reduce(Fn::Add, select(before, icst(1), icst(0)), r, {len}));
  Shape os = L.shape(node.outputs[0]);
  ExprP hit = binary(Fn::Eq, load(ranks, xs, DType::i64, other), var(static_cast<int>(axis)));
  int picked = L.emit_temp(n, DType::i64, os, reduce(Fn::Max, select(hit, var(r), icst(-1)), r, {len}));
  std::vector<ExprP> from = out_vars(r);
  from[axis] = load(picked, os, DType::i64, out_vars(r));
  L.emit(n, node.outputs[0], L.read(x, from));
  if (node.outputs.size() > 1 && node.outputs[1] >= 0)
    L.emit(n, node.outputs[1], load(picked, os, DType::i64, out_vars(r)));
}

}  // namespace

bool lower_topks(Lowering& L, int n) {
  if (L.g.nodes[n].op_type != "TopK") return false;
  lower_topk(L, n);
  return true;
}

}  // namespace lockstep::kir
