// RotaryEmbedding: each output element is its input, or one of a turned pair: cos x1 - sin x2
// for the first of the pair, sin x1 + cos x2 for the second. position_ids are run-time indices
// into the caches' rows; one outside them reads row 0 and is counted by a check kernel.
#include "kernel/lower_ctx.h"
#include "ops/rotary.h"

namespace lockstep::kir {

namespace {

struct RotaryLowering {
  Lowering& L;
  int n;
  RotaryGeom g;
  int x, cos, sin, pos;

  // Vars of the output: 4-D (b, h, s, d); 3-D (b, s, h * D + d).
  ExprP b() const { return var(0); }
  ExprP h() const { return g.three_d ? binary(Fn::Div, var(2), icst(g.head)) : var(1); }
  ExprP s() const { return g.three_d ? var(1) : var(2); }
  ExprP d() const { return g.three_d ? binary(Fn::Mod, var(2), icst(g.head)) : var(3); }

  ExprP x_at(ExprP dd) const {
    if (g.three_d) return widened(L.read(x, {b(), s(), add(mul(h(), icst(g.head)), dd)}));
    return widened(L.read(x, {b(), h(), s(), dd}));
  }

  ExprP in_range(ExprP p) const {
    return binary(Fn::And, binary(Fn::Le, icst(0), p), binary(Fn::Lt, p, icst(g.positions)));
  }

  ExprP cache(int c, ExprP k) const {
    if (pos < 0) return widened(L.read(c, {b(), s(), k}));
    ExprP p = L.read(pos, {b(), s()});
    return widened(L.read(c, {select(in_range(p), p, icst(0)), k}));
  }

  void check_positions() {
    L.count_check(n, select(in_range(L.read(pos, {var(0), var(1)})), icst(0), icst(1)), L.shape(pos),
                  "position_ids not a row of the caches [0, " + std::to_string(g.positions) + ")");
  }

  ExprP body() const {
    int64_t half = g.rotated / 2;
    ExprP dd = d();
    // k: the pair's index; first: whether this element is the pair's first.
    ExprP k =
        g.interleaved ? binary(Fn::Div, dd, icst(2)) : select(binary(Fn::Lt, dd, icst(half)), dd, sub(dd, icst(half)));
    ExprP first =
        g.interleaved ? binary(Fn::Eq, binary(Fn::Mod, dd, icst(2)), icst(0)) : binary(Fn::Lt, dd, icst(half));
    ExprP i1 = g.interleaved ? mul(k, icst(2)) : k;
    ExprP i2 = g.interleaved ? add(i1, icst(1)) : add(k, icst(half));
    ExprP co = cache(cos, k), si = cache(sin, k), x1 = x_at(i1), x2 = x_at(i2);
    ExprP turned = select(first, sub(mul(co, x1), mul(si, x2)), add(mul(si, x1), mul(co, x2)));
    if (g.rotated == g.head) return turned;
    return select(binary(Fn::Lt, dd, icst(g.rotated)), turned, x_at(dd));
  }
};

}  // namespace

bool lower_rotary(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  if (node.op_type != "RotaryEmbedding") return false;
  OpCtx c(L.g, n);
  int pos = node.inputs.size() > 3 ? node.inputs[3] : -1;
  RotaryLowering R{L,
                   n,
                   rotary_geom(c, L.shape(node.inputs[0]), L.shape(node.inputs[1]), pos >= 0),
                   node.inputs[0],
                   node.inputs[1],
                   node.inputs[2],
                   pos};
  if (pos >= 0) R.check_positions();
  L.emit(n, node.outputs[0], narrowed(R.body(), L.type(node.outputs[0]).dtype));
  return true;
}

}  // namespace lockstep::kir
