// Attention: the scores (one dot product per query and key, scaled and softcapped), the bias of
// the masks added, then the softmax over the keys in the reference's steps (the row's maximum,
// 0 for an all -inf row; the sum of exponentials; a row whose bias masks every key is 0), and
// the values weighted by it. Every fold runs over the keys or the head in order.
#include <cmath>

#include "kernel/lower_ctx.h"
#include "ops/attention.h"

namespace lockstep::kir {

namespace {

ExprP v(int k) { return var(k); }

struct AttentionLowering {
  Lowering& L;
  int n;
  AttentionGeom g;
  AttentionAttrs a;
  int q, k, val, mask, past_k, past_v, nonpad;
  DType wt;                        // the type scores and probabilities are computed in
  int key_buf = -1, val_buf = -1;  // present key and value [B, Hkv, total, *], or -1: read K and V

  ExprP neg_inf() const { return cst(-INFINITY, wt); }
  ExprP kv_head(ExprP h) const { return g.reps() == 1 ? h : binary(Fn::Div, h, icst(g.reps())); }

  ExprP q_at(ExprP b, ExprP h, ExprP i, ExprP d) const {
    if (g.three_d) return L.read(q, {b, i, add(mul(h, icst(g.head)), d)});
    return L.read(q, {b, h, i, d});
  }

  // K or V's new token j of head h, in either layout.
  ExprP fresh(int x, int64_t size, ExprP b, ExprP h, ExprP j, ExprP d) const {
    if (g.three_d) return L.read(x, {b, j, add(mul(h, icst(size)), d)});
    return L.read(x, {b, h, j, d});
  }

  // present = past followed by the new tokens, into output `out` (or a temp when it is not
  // wanted and there is a past); -1 when K or V can be read as they are.
  int present(int x, int past, int64_t size, size_t out) {
    const Node& node = L.g.nodes[n];
    bool wanted = out < node.outputs.size() && node.outputs[out] >= 0;
    if (!wanted && past < 0) return -1;
    ExprP body = fresh(x, size, v(0), v(1), sub(v(2), icst(g.past)), v(3));
    if (past >= 0) body = select(binary(Fn::Lt, v(2), icst(g.past)), L.read(past, {v(0), v(1), v(2), v(3)}), body);
    if (wanted) {
      L.emit(n, node.outputs[out], body);
      return L.buf[node.outputs[out]];
    }
    return L.emit_temp(n, L.type(x).dtype, {g.batch, g.kv_heads, g.total, size}, body);
  }

  ExprP present_at(int buf, int x, int64_t size, ExprP b, ExprP h, ExprP j, ExprP d) const {
    if (buf < 0) return fresh(x, size, b, h, j, d);
    return load(buf, {g.batch, g.kv_heads, g.total, size}, L.type(x).dtype, {b, h, j, d});
  }

  // The mask's additive value at (b, h, i, j); keys past its last dim are masked.
  ExprP mask_at(ExprP b, ExprP h, ExprP i, ExprP j) const {
    if (mask < 0) return cst(0, wt);
    const Shape& m = L.shape(mask);
    ExprP coords[4] = {b, h, i, j};
    std::vector<ExprP> idx;
    for (size_t k = 0; k < m.size(); ++k)
      idx.push_back(m[k] == 1 && k + 1 < m.size() ? icst(0) : coords[4 - m.size() + k]);
    ExprP x = L.read(mask, idx);
    x = L.type(mask).dtype == DType::boolean ? select(x, cst(0, wt), neg_inf()) : cast(widened(x), wt);
    if (m.back() == g.total) return x;
    return select(binary(Fn::Lt, j, icst(m.back())), x, neg_inf());
  }

  // Batch b's count of real keys, 0 where it is not in [0, total] (a check kernel reports it).
  ExprP keys(ExprP b) const {
    ExprP n = L.read(nonpad, {b});
    return select(in_range(n), n, icst(0));
  }
  ExprP in_range(ExprP n) const {
    return binary(Fn::And, binary(Fn::Le, icst(0), n), binary(Fn::Le, n, icst(g.total)));
  }

  void check_keys() {
    L.count_check(n, select(in_range(L.read(nonpad, {v(0)})), icst(0), icst(1)), {g.batch},
                  "nonpad_kv_seqlen values not a key count in [0, " + std::to_string(g.total) + "]");
  }

  // Whether the causal and window masks and the key padding let query i of batch b see key j.
  ExprP allowed(ExprP b, ExprP i, ExprP j) const {
    ExprP offset = nonpad >= 0 ? sub(keys(b), icst(g.q_len)) : icst(g.past);
    ExprP at = add(i, offset), ok;
    auto both = [&](ExprP c) { ok = ok ? binary(Fn::And, ok, c) : c; };
    if (a.causal) both(binary(Fn::Le, j, at));
    if (a.left >= 0) both(binary(Fn::Le, sub(at, j), icst(a.left)));
    if (a.right >= 0) both(binary(Fn::Le, sub(j, at), icst(a.right)));
    if (nonpad >= 0) both(binary(Fn::Lt, j, keys(b)));
    return ok;
  }

  ExprP bias(ExprP b, ExprP h, ExprP i, ExprP j) const {
    ExprP m = mask_at(b, h, i, j), ok = allowed(b, i, j);
    return ok ? add(m, select(ok, cst(0, wt), neg_inf())) : m;
  }

  Shape scores_shape() const { return {g.batch, g.q_heads, g.q_len, g.total}; }
  Shape row_shape() const { return {g.batch, g.q_heads, g.q_len, 1}; }
  ExprP at(int buf, const Shape& s, std::vector<ExprP> idx) const { return load(buf, s, wt, std::move(idx)); }

  // Scores over vars (b, h, i, j), the head folded at var 4.
  ExprP scores() const {
    ExprP qd = widened(q_at(v(0), v(1), v(2), v(4)));
    ExprP kd = widened(present_at(key_buf, k, g.head, v(0), kv_head(v(1)), v(3), v(4)));
    ExprP s = mul(reduce(Fn::Dot, mul(cast(qd, wt), cast(kd, wt)), 4, {g.head}), cst(a.scale, wt));
    if (a.softcap > 0) s = mul(cst(a.softcap, wt), unary(Fn::Tanh, div(s, cst(a.softcap, wt))));
    return s;
  }

  void run() {
    const Node& node = L.g.nodes[n];
    if (nonpad >= 0) check_keys();
    key_buf = present(k, past_k, g.head, 1);
    val_buf = present(val, past_v, g.v_head, 2);
    Shape ss = scores_shape(), rs = row_shape();
    int s = L.emit_temp(n, wt, ss, scores());
    int x = L.emit_temp(n, wt, ss, add(at(s, ss, out_vars(4)), bias(v(0), v(1), v(2), v(3))));
    std::vector<ExprP> row_j = {v(0), v(1), v(2), v(4)}, row0 = {v(0), v(1), v(2), icst(0)};
    int mx = L.emit_temp(n, wt, rs, reduce(Fn::Max, at(x, ss, row_j), 4, {g.total}));
    ExprP m = at(mx, rs, row0);
    ExprP safe = select(binary(Fn::Eq, m, neg_inf()), cst(0, wt), m);
    int sum = L.emit_temp(n, wt, rs, reduce(Fn::Add, unary(Fn::Exp, sub(at(x, ss, row_j), safe)), 4, {g.total}));
    int masked = L.emit_temp(n, wt, rs, reduce(Fn::Max, bias(v(0), v(1), v(2), v(4)), 4, {g.total}));
    ExprP total = at(sum, rs, row0);
    ExprP p = div(unary(Fn::Exp, sub(at(x, ss, out_vars(4)), safe)),
                  select(binary(Fn::Eq, total, cst(0, wt)), cst(1, wt), total));
    p = select(binary(Fn::Eq, at(masked, rs, row0), neg_inf()), cst(0, wt), p);
    int probs = L.emit_temp(n, wt, ss, p);
    DType t = L.type(node.outputs[0]).dtype;
    L.emit(n, node.outputs[0], narrowed(weighted_values(probs), t));
    if (node.outputs.size() > 3 && node.outputs[3] >= 0)
      L.emit(n, node.outputs[3], narrowed(at(a.mode == 3 ? probs : a.mode == 2 ? x : s, ss, out_vars(4)), t));
  }

  // Y at its own vars: the probabilities times the values, folded over the keys.
  ExprP weighted_values(int probs) const {
    Shape ss = scores_shape();
    // 3-D: Y[b, i, h * Dv + e]; 4-D: Y[b, h, i, e]; the keys fold at the var after them.
    int r = g.three_d ? 3 : 4;
    ExprP b = v(0), j = v(r);
    ExprP h = g.three_d ? binary(Fn::Div, v(2), icst(g.v_head)) : v(1);
    ExprP i = g.three_d ? v(1) : v(2);
    ExprP e = g.three_d ? binary(Fn::Mod, v(2), icst(g.v_head)) : v(3);
    ExprP vd = cast(widened(present_at(val_buf, val, g.v_head, b, kv_head(h), j, e)), wt);
    return reduce(Fn::Dot, mul(at(probs, ss, {b, h, i, j}), vd), r, {g.total});
  }
};

}  // namespace

bool lower_attention(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  if (node.op_type != "Attention") return false;
  OpCtx c(L.g, n);
  auto in = [&](size_t k) { return k < node.inputs.size() ? node.inputs[k] : -1; };
  const Shape *pk = in(4) >= 0 ? &L.shape(in(4)) : nullptr, *pv = in(5) >= 0 ? &L.shape(in(5)) : nullptr;
  AttentionGeom g = attention_geom(c, L.shape(in(0)), L.shape(in(1)), L.shape(in(2)), pk, pv);
  DType t = L.type(in(0)).dtype;
  AttentionLowering A{L,     n,     g,     attention_attrs(c, g.head),
                      in(0), in(1), in(2), in(3),
                      in(4), in(5), in(6), t == DType::f64 ? DType::f64 : DType::f32};
  A.run();
  return true;
}

}  // namespace lockstep::kir
