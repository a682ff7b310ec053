// CausalConvWithState: output (b, c, t) folds the k taps over the state-then-input sequence
// at t .. t + k - 1; the next state is that sequence's last k - 1 steps.
#include "kernel/lower_ctx.h"

namespace lockstep::kir {

namespace {

void lower_causal_conv(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  auto in = [&](size_t k) { return k < node.inputs.size() ? node.inputs[k] : -1; };
  int x = in(0), w = in(1), bias = in(2), past = in(3);
  const Shape& xs = L.shape(x);
  int64_t k = causal_conv_taps(c, xs, L.shape(w));
  DType wt = widened(cst(0, L.type(x).dtype))->type;
  // The state-then-input sequence at step p of channel var 1, batch var 0.
  auto padded = [&](ExprP p) {
    ExprP from_x = widened(L.read(x, {var(0), var(1), sub(p, icst(k - 1))}));
    ExprP from_state = past >= 0 ? widened(L.read(past, {var(0), var(1), p})) : cst(0, wt);
    return k == 1 ? from_x : select(binary(Fn::Lt, p, icst(k - 1)), from_state, from_x);
  };
  ExprP acc = reduce(Fn::Dot, mul(widened(L.read(w, {var(1), icst(0), var(3)})), padded(add(var(2), var(3)))), 3, {k});
  if (bias >= 0) acc = add(acc, widened(L.read(bias, {var(1)})));
  if (c.attr_string("activation", "none") != "none") acc = mul(acc, unary(Fn::Sigmoid, acc));
  DType t = L.type(node.outputs[0]).dtype;
  L.emit(n, node.outputs[0], narrowed(acc, t));
  if (node.outputs.size() > 1 && node.outputs[1] >= 0)
    L.emit(n, node.outputs[1], narrowed(padded(add(var(2), icst(xs[2]))), t));
}

}  // namespace

bool lower_causal_convs(Lowering& L, int n) {
  if (L.g.nodes[n].op_type != "CausalConvWithState") return false;
  lower_causal_conv(L, n);
  return true;
}

}  // namespace lockstep::kir
