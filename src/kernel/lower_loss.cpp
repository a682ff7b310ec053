// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: each sample reads its class's score
// at a run-time index (a class outside [0, C) reads nothing and is counted by a check kernel,
// as for the gathers); the sums fold in the reference's order, row-major over the samples.
#include "kernel/lower_ctx.h"
#include "kernel/lower_rows.h"

namespace lockstep::kir {

namespace {

ExprP v(size_t k) { return var(static_cast<int>(k)); }

// One sample's loss and weight at the target's vars; both 0 for an ignored or bad class.
struct Sample {
  ExprP loss, weight, bad;
};

// Scores [N, C, d...] in buffer `scores` (dtype st), targets [N, d...] in graph value `target`.
Sample sample(Lowering& L, int n, int scores, const Shape& xs, DType st, int target, int weight) {
  OpCtx c(L.g, n);
  size_t q = xs.size() - 1;
  std::vector<ExprP> at;
  for (size_t k = 0; k < q; ++k) at.push_back(v(k));
  ExprP cls = cast(L.read(target, at), DType::i64);
  ExprP in_range = binary(Fn::And, binary(Fn::Le, icst(0), cls), binary(Fn::Lt, cls, icst(xs[1])));
  ExprP counted =
      c.has_attr("ignore_index") ? unary(Fn::Not, binary(Fn::Eq, cls, icst(c.attr_int("ignore_index", 0)))) : nullptr;
  ExprP ok = counted ? binary(Fn::And, counted, in_range) : in_range;
  ExprP bad = unary(Fn::Not, in_range);
  if (counted) bad = binary(Fn::And, counted, bad);
  ExprP safe = select(ok, cls, icst(0));
  std::vector<ExprP> xi = {v(0), safe};
  for (size_t k = 1; k < q; ++k) xi.push_back(v(k));
  ExprP x = widened(load(scores, xs, st, xi));
  ExprP w = weight >= 0 ? widened(L.read(weight, {safe})) : cst(1, x->type);
  ExprP zero = cst(0, x->type);
  return {select(ok, binary(Fn::Mul, unary(Fn::Neg, x), w), zero), select(ok, w, zero), bad};
}

void lower_loss(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0], target = node.inputs[1], y = node.outputs[0];
  int weight = node.inputs.size() > 2 ? node.inputs[2] : -1;
  const Shape& xs = L.shape(x);
  DType t = L.type(y).dtype;
  int scores = L.buf[x];
  DType st = t;
  if (node.op_type == "SoftmaxCrossEntropyLoss") {
    ExprP logp = softmax_widened(L, n, x, {1}, true);
    st = logp->type;
    scores = L.emit_temp(n, st, xs, logp);
    if (node.outputs.size() > 1 && node.outputs[1] >= 0)
      L.emit(n, node.outputs[1], narrowed(load(scores, xs, st, out_vars(xs.size())), t));
  }
  Sample s = sample(L, n, scores, xs, st, target, weight);
  const Shape& ts = L.shape(target);
  std::string r = c.attr_string("reduction", "mean");
  if (r == "none") L.emit(n, y, narrowed(s.loss, t));
  else if (r == "sum") L.emit(n, y, narrowed(reduce(Fn::Add, s.loss, 0, ts), t));
  else {
    DType wt = s.loss->type;
    int total = L.emit_temp(n, wt, {}, reduce(Fn::Add, s.loss, 0, ts));
    int weights = L.emit_temp(n, wt, {}, reduce(Fn::Add, s.weight, 0, ts));
    L.emit(n, y, narrowed(binary(Fn::Div, load(total, {}, wt, {}), load(weights, {}, wt, {})), t));
  }
  L.count_check(n, select(s.bad, icst(1), icst(0)), ts,
                node.op_type + " targets not a class in [0, " + std::to_string(xs[1]) + ")");
}

}  // namespace

bool lower_losses(Lowering& L, int n) {
  const std::string& op = L.g.nodes[n].op_type;
  if (op != "NegativeLogLikelihoodLoss" && op != "SoftmaxCrossEntropyLoss") return false;
  lower_loss(L, n);
  return true;
}

}  // namespace lockstep::kir
