// Anchors: ops whose reduction is a sum of products (Conv, ConvTranspose, MatMul, Gemm).
// Each element's sum runs in one fixed order (reduction vars outer to inner), on every target.
#include <algorithm>
#include <cmath>

#include "kernel/lower_ctx.h"
#include "ops/conv.h"
#include "ops/reduce.h"

namespace lockstep::kir {

namespace {

ExprP v(int64_t k) { return var(static_cast<int>(k)); }
ExprP lt(ExprP a, ExprP b) { return binary(Fn::Lt, a, b); }
ExprP all_of(ExprP a, ExprP b) { return binary(Fn::And, a, b); }

// Zero-padded copy of a conv input, so the conv itself reads without bounds checks.
int padded_input(Lowering& L, int n, int x, const ConvGeometry& geo) {
  const Shape& xs = L.shape(x);
  size_t nd = xs.size() - 2;
  bool any = false;
  for (size_t i = 0; i < nd; ++i) any |= geo.pads_begin[i] || geo.pads_end[i];
  if (!any) return L.buf[x];
  Shape ps = xs;
  std::vector<ExprP> idx = out_vars(xs.size());
  ExprP inside = cst(1, DType::boolean);
  for (size_t i = 0; i < nd; ++i) {
    ps[2 + i] += geo.pads_begin[i] + geo.pads_end[i];
    idx[2 + i] = sub(v(2 + i), icst(geo.pads_begin[i]));
    inside = all_of(inside, all_of(binary(Fn::Le, icst(0), idx[2 + i]), lt(idx[2 + i], icst(xs[2 + i]))));
  }
  DType t = L.type(x).dtype;
  return L.emit_temp(n, t, ps, select(inside, L.read(x, idx), cst(0, t)));
}

// Whether position u of axis i of a transposed conv's zero-inserted, padded input holds an
// input element (u - P a multiple of s in range): x[(u - P) / s] there.
ExprP upsampled_offset(const ConvGeometry& geo, size_t i, ExprP u) {
  int64_t span = (geo.kernel[i] - 1) * geo.dilations[i];
  return sub(std::move(u), icst(span - geo.pads_begin[i]));
}

ExprP real_upsampled(const ConvGeometry& geo, size_t i, ExprP u, int64_t x_len) {
  ExprP j = upsampled_offset(geo, i, std::move(u)), s = icst(geo.strides[i]);
  return all_of(binary(Fn::Le, icst(0), j),
                all_of(binary(Fn::Eq, binary(Fn::Mod, j, s), icst(0)), lt(binary(Fn::Div, j, s), icst(x_len))));
}

// Zero-inserted, padded input of a transposed conv: the transposed conv is then a plain conv
// with the kernel flipped. xu[u] = x[(u - P) / s] where (u - P) is a multiple of s in range.
int upsampled_input(Lowering& L, int n, int x, const ConvGeometry& geo, const Shape& out) {
  const Shape& xs = L.shape(x);
  size_t nd = xs.size() - 2;
  Shape us = xs;
  std::vector<ExprP> idx = out_vars(xs.size());
  ExprP ok = cst(1, DType::boolean);
  for (size_t i = 0; i < nd; ++i) {
    us[2 + i] = out[2 + i] + (geo.kernel[i] - 1) * geo.dilations[i];
    ok = all_of(ok, real_upsampled(geo, i, v(2 + i), xs[2 + i]));
    idx[2 + i] = binary(Fn::Div, upsampled_offset(geo, i, v(2 + i)), icst(geo.strides[i]));
  }
  DType t = L.type(x).dtype;
  return L.emit_temp(n, t, us, select(ok, L.read(x, idx), cst(0, t)));
}

// A transposed conv sums the products of real input elements only (as its scatter form does):
// a tap on an inserted or padded zero may add w * 0 only where that is +-0, every weight known
// and finite. Weights of +-Inf or NaN, or known only at run time, mask those taps instead.
bool finite_weights(const Lowering& L, int w) {
  auto finite = [](const RefTensor& t) {
    return std::all_of(t.f.begin(), t.f.end(), [](double x) { return std::isfinite(x); });
  };
  if (const auto& init = L.g.values[w].initializer) return finite(to_ref(*init));  // of any size
  const std::optional<RefTensor>& known = L.types.value[w];
  return known && finite(*known);
}

// The channel part of a conv's input and weight indices: output channel v1, input channel
// the group's base plus reduction var r. A transposed conv's weight is [C, M/G, ...].
struct ConvIndex {
  std::vector<ExprP> xi, wi;
};

ConvIndex channel_index(int64_t G, int64_t Cg, int64_t Mg, size_t r, bool transpose) {
  ExprP g = G == 1 ? icst(0) : binary(Fn::Div, v(1), icst(Mg));
  ExprP ci = add(mul(g, icst(Cg)), v(r));
  if (transpose) return {{v(0), ci}, {ci, G == 1 ? v(1) : binary(Fn::Mod, v(1), icst(Mg))}};
  return {{v(0), ci}, {v(1), v(r)}};
}

// The sum over (channel, taps) of `term` (reduction vars from r), plus the bias if the node has one.
ExprP conv_sum(Lowering& L, int n, ExprP term, size_t r, const Shape& extents) {
  const Node& node = L.g.nodes[n];
  ExprP body = reduce(Fn::Dot, std::move(term), static_cast<int>(r), extents);
  if (node.inputs.size() > 2 && node.inputs[2] >= 0) body = value_arith(Fn::Add, body, L.read(node.inputs[2], {v(1)}));
  return body;
}

void emit_conv_sum(Lowering& L, int n, ExprP term, size_t r, const Shape& extents) {
  L.emit(n, L.g.nodes[n].outputs[0], conv_sum(L, n, std::move(term), r, extents));
}

// A strided transposed conv read straight from its input, one phase at a time: of the kernel
// taps over the zero-inserted input, only k = k0(t) + m*s can land on an input element, so
// the sum runs over m. The nonzero terms are those of the zero-inserted form, in the same
// order (channel outer, tap ascending); only the exact zeros are left out.
struct TransposedTap {
  ExprP k, q, ok;  // tap of the upsampled-form kernel, input position, whether both are real
};

// The first tap k0 = (A - pos) mod s that lands on an input element at output position pos
// (A = K - 1 - pad_begin: pos + k - A is the tap's position in the s-strided input), as an
// expression and, for a known pos, as a number; `lift`, a multiple of s past A, keeps the
// modulus's operand non-negative.
struct FirstTap {
  int64_t A, s, lift;
  FirstTap(int64_t K, int64_t s_, int64_t pad_begin)
      : A(K - 1 - pad_begin), s(s_), lift(s_ * ((std::max<int64_t>(A, 0) + s_ - 1) / s_ + 1)) {}
  ExprP of(ExprP pos) const {
    return binary(Fn::Mod, sub(icst(s), binary(Fn::Mod, add(sub(std::move(pos), icst(A)), icst(lift)), icst(s))), icst(s));
  }
  int64_t of(int64_t pos) const { return (s - (pos - A + lift) % s) % s; }
};

TransposedTap transposed_tap(int64_t t_var, int64_t m_var, int64_t K, int64_t s, int64_t pad_begin, int64_t x_len) {
  FirstTap first(K, s, pad_begin);
  int64_t A = first.A;
  ExprP k = add(first.of(v(t_var)), mul(v(m_var), icst(s)));
  ExprP q = binary(Fn::Div, sub(add(v(t_var), k), icst(A)), icst(s));  // an exact division
  ExprP ok = all_of(lt(k, icst(K)), all_of(binary(Fn::Le, icst(0), q), lt(q, icst(x_len))));
  return {k, q, ok};
}

bool lower_transposed_direct(Lowering& L, int n, const ConvGeometry& geo) {
  const Node& node = L.g.nodes[n];
  int x = node.inputs[0], w = node.inputs[1], y = node.outputs[0];
  const Shape &ys = L.shape(y), &ws = L.shape(w), &xs = L.shape(x);
  size_t nd = ys.size() - 2, r = ys.size();
  bool strided = false;
  for (size_t i = 0; i < nd; ++i) {
    if (geo.dilations[i] != 1) return false;
    strided |= geo.strides[i] > 1;
  }
  if (!strided) return false;
  int64_t G = geo.group, Cg = ws[0] / G;
  auto [xi, wi] = channel_index(G, Cg, ys[1] / G, r, true);
  Shape extents = {Cg};
  ExprP ok = cst(1, DType::boolean);
  for (size_t i = 0; i < nd; ++i) {
    int64_t K = geo.kernel[i], s = geo.strides[i];
    TransposedTap tap = transposed_tap(2 + i, r + 1 + i, K, s, geo.pads_begin[i], xs[2 + i]);
    extents.push_back((K + s - 1) / s);
    ok = all_of(ok, tap.ok);
    xi.push_back(tap.q);
    wi.push_back(sub(icst(K - 1), tap.k));
  }
  for (size_t i = 0; i < nd; ++i) {  // indices stay in bounds where the tap is not real
    xi[2 + i] = select(ok, xi[2 + i], icst(0));
    wi[2 + i] = select(ok, wi[2 + i], icst(0));
  }
  DType t = L.type(y).dtype;
  emit_conv_sum(L, n, select(ok, binary(Fn::Mul, L.read(w, wi), L.read(x, xi)), cst(0, t)), r, extents);
  return true;
}

// A strided 1-D transposed conv whose output length is a multiple of its stride s, computed
// phase by phase: y[n, co, q*s + ph] = Y[n, ph, co, q]. In phase ph the taps are k = k0(ph) +
// m*s and the input position q + m + c(ph), so a row of phases reads its weights once and
// consecutive q read consecutive inputs of a zero-padded copy (no bounds check or division per
// element). Phases outermost: the dim before the last is then the output channel, whose rows a
// tile blocks (they share each input load and the tap's mask), where [n, co, ph, q] gave it the
// s phases, which share neither. The nonzero terms and their order are
// lower_transposed_direct's (a tap past the input adds w * 0 where that one added 0: the same
// sum); where s divides K every tap is real, the term a plain product, and the sum steps by
// fma as a Conv's does (so its bits are not the direct form's). y is Y interleaved, by a kernel
// of its own.
bool lower_transposed_phases(Lowering& L, int n, const ConvGeometry& geo) {
  const Node& node = L.g.nodes[n];
  int x = node.inputs[0], w = node.inputs[1], y = node.outputs[0];
  const Shape &ys = L.shape(y), &ws = L.shape(w), &xs = L.shape(x);
  if (ys.size() != 3 || geo.dilations[0] != 1 || geo.strides[0] < 2 || ys[2] % geo.strides[0]) return false;
  if (!finite_weights(L, w)) return false;  // the direct form masks taps past the input
  int64_t K = geo.kernel[0], s = geo.strides[0], G = geo.group, Cg = ws[0] / G, M = (K + s - 1) / s;
  int64_t Q = ys[2] / s;
  FirstTap first(K, s, geo.pads_begin[0]);
  int64_t A = first.A;
  int64_t lo = 0, hi = 0;  // the input positions any phase's taps reach
  for (int64_t ph = 0; ph < s; ++ph) {
    int64_t c = (ph + first.of(ph) - A) / s;
    lo = std::min(lo, c), hi = std::max(hi, Q - 1 + M - 1 + c);
  }
  ConvGeometry pad = geo;
  pad.pads_begin[0] = -lo, pad.pads_end[0] = std::max<int64_t>(0, hi - (xs[2] - 1));
  int xp = padded_input(L, n, x, pad);
  auto [xi, wi] = channel_index(G, Cg, ys[1] / G, 4, true);
  ExprP ph = v(2), m = v(5);
  ExprP k0 = first.of(ph);
  ExprP k = add(k0, mul(m, icst(s)));
  ExprP c = binary(Fn::Div, sub(add(ph, k0), icst(A)), icst(s));  // an exact division
  xi.push_back(add(add(v(3), m), add(c, icst(-lo))));
  DType t = L.type(y).dtype;
  const Shape& ps = L.plan.buffers[xp].shape;
  // Where s divides K every phase has K / s real taps: a plain product, summed by fma. Else the
  // phases with fewer real taps mask the rest.
  bool masked = K % s != 0;
  ExprP tap = lt(k, icst(K)), wk = sub(icst(K - 1), k);
  wi.push_back(masked ? select(tap, wk, icst(0)) : wk);
  ExprP term = binary(Fn::Mul, L.read(w, wi), load(xp, ps, t, xi));
  if (masked) term = select(tap, term, cst(0, t));
  Shape phases = {ys[0], s, ys[1], Q};
  ExprP sum = substitute(conv_sum(L, n, term, 4, {Cg, M}), {v(0), v(2), v(1), v(3)}, 0);  // co <-> ph
  int b = L.emit_temp(n, t, phases, sum);
  L.emit(n, y, load(b, phases, t, {v(0), binary(Fn::Mod, v(2), icst(s)), v(1), binary(Fn::Div, v(2), icst(s))}));
  L.plan.kernels.back().materialise = true;  // read in order by the resblocks' several kernels
  return true;
}

// A conv over two or more spatial axes as a sum over (channel, taps) of its input's columns:
// cols[n, c, k1.., o1..] is the input element that tap (k1..) reads for output position
// (o1..) (0 in the pad). The sum is computed as [N, M, positions] (the positions flattened), so
// a tile's rows are output channels and its lanes consecutive positions whatever the map's
// width (the direct form's tiles ran along one row: a 7-wide map filled 7 of 16 lanes). The
// terms and their order are the direct form's, so are the bits. A 1x1 conv of stride 1 and no
// pad reads its input as it is.
bool lower_conv_columns(Lowering& L, int n, const ConvGeometry& geo) {
  const Node& node = L.g.nodes[n];
  int x = node.inputs[0], w = node.inputs[1], y = node.outputs[0];
  const Shape &xs = L.shape(x), &ys = L.shape(y), &ws = L.shape(w);
  size_t nd = ys.size() - 2;
  int64_t P = 1, G = geo.group, M = ys[1], C = xs[1], Cg = ws[1];
  if (nd < 2 || Cg == 1) return false;  // a depthwise conv's copy would be taps x its input
  for (size_t i = 0; i < nd; ++i) P *= ys[2 + i];
  DType t = L.type(y).dtype;
  bool as_is = true;
  for (size_t i = 0; i < nd; ++i)
    as_is &= geo.kernel[i] == 1 && geo.strides[i] == 1 && !geo.pads_begin[i] && !geo.pads_end[i];
  // cols' vars: v0 batch, v1 channel, v2.. taps, v(2 + nd).. output position.
  Shape cs = {xs[0], C};
  std::vector<ExprP> xi = {v(0), v(1)};
  ExprP inside = cst(1, DType::boolean);
  for (size_t i = 0; i < nd; ++i) {
    cs.push_back(geo.kernel[i]);
    ExprP o = mul(v(2 + nd + i), icst(geo.strides[i])), k = mul(v(2 + i), icst(geo.dilations[i]));
    ExprP pos = sub(add(o, k), icst(geo.pads_begin[i]));
    if (geo.pads_begin[i] || geo.pads_end[i])
      inside = all_of(inside, all_of(binary(Fn::Le, icst(0), pos), lt(pos, icst(xs[2 + i]))));
    xi.push_back(pos);
  }
  for (size_t i = 0; i < nd; ++i) cs.push_back(ys[2 + i]);
  int cols = as_is ? L.buf[x] : L.emit_temp(n, t, cs, select(inside, L.read(x, xi), cst(0, t)));
  // The sum's vars: v0 batch, v1 output channel, v2 position, v3 (channel in group, taps) as
  // one index, row-major as the weight and cols hold them: one loop, the same order of terms.
  int64_t taps = 1;
  for (size_t i = 0; i < nd; ++i) taps *= geo.kernel[i];
  ExprP group = G == 1 ? icst(0) : binary(Fn::Div, v(1), icst(M / G));
  ExprP first = mul(add(mul(v(0), icst(C)), mul(group, icst(Cg))), icst(as_is ? 1 : taps));
  ExprP col = load_flat(cols, as_is ? xs : cs, t, add(mul(add(first, v(3)), icst(P)), v(2)));
  ExprP weight = load_flat(L.buf[w], ws, L.type(w).dtype, add(mul(v(1), icst(Cg * taps)), v(3)));
  Shape extents = {Cg * taps};
  Shape flat = {ys[0], M, P};
  int sum = L.emit_temp(n, t, flat, conv_sum(L, n, binary(Fn::Mul, weight, col), 3, extents));
  L.emit(n, y, load_flat(sum, flat, t, flatten_index(out_vars(ys.size()), ys)));
  return true;
}

void lower_conv(Lowering& L, int n, bool transpose) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0], w = node.inputs[1], y = node.outputs[0];
  const Shape& ys = L.shape(y);
  const Shape& ws = L.shape(w);
  ConvGeometry geo = conv_geometry(c, L.shape(x), ws, transpose);
  if (transpose && (lower_transposed_phases(L, n, geo) || lower_transposed_direct(L, n, geo))) return;
  if (!transpose && lower_conv_columns(L, n, geo)) return;
  size_t nd = ys.size() - 2, r = ys.size();
  int64_t G = geo.group, M = ys[1];
  int64_t Cg = transpose ? ws[0] / G : ws[1], Mg = M / G;
  int src = transpose ? upsampled_input(L, n, x, geo, ys) : padded_input(L, n, x, geo);
  const Shape& ss = L.plan.buffers[src].shape;
  DType t = L.type(y).dtype;
  auto [xi, wi] = channel_index(G, Cg, Mg, r, transpose);
  Shape extents = {Cg};
  ExprP real = cst(1, DType::boolean);
  for (size_t i = 0; i < nd; ++i) {
    ExprP k = v(r + 1 + i);
    extents.push_back(geo.kernel[i]);
    ExprP pos = mul(v(2 + i), icst(transpose ? 1 : geo.strides[i]));
    xi.push_back(add(pos, mul(k, icst(geo.dilations[i]))));
    wi.push_back(transpose ? sub(icst(geo.kernel[i] - 1), k) : k);
    if (transpose) real = all_of(real, real_upsampled(geo, i, xi.back(), L.shape(x)[2 + i]));
  }
  ExprP term = binary(Fn::Mul, L.read(w, wi), load(src, ss, t, xi));
  if (transpose && !finite_weights(L, w)) term = select(real, term, cst(0, t));
  emit_conv_sum(L, n, term, r, extents);
}

// Batch dims of an operand, right-aligned against the output's batch dims; size-1 dims broadcast.
std::vector<ExprP> batch_index(const Shape& s, size_t own_batch, size_t out_batch) {
  std::vector<ExprP> idx;
  for (size_t k = 0; k < own_batch; ++k)
    idx.push_back(s[k] == 1 ? icst(0) : v(out_batch - own_batch + k));
  return idx;
}

void lower_matmul(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  int a = node.inputs[0], b = node.inputs[1], y = node.outputs[0];
  const Shape &as = L.shape(a), &bs = L.shape(b);
  size_t r = L.shape(y).size();
  int64_t K = as.back();
  ExprP k = v(r);
  std::vector<ExprP> ai, bi;
  if (as.size() == 1 && bs.size() == 1) { ai = {k}; bi = {k}; }
  else if (as.size() == 1) { bi = batch_index(bs, bs.size() - 2, r - 1); ai = {k}; bi.push_back(k); bi.push_back(v(r - 1)); }
  else if (bs.size() == 1) { ai = batch_index(as, as.size() - 2, r - 1); ai.push_back(v(r - 1)); ai.push_back(k); bi = {k}; }
  else {
    ai = batch_index(as, as.size() - 2, r - 2);
    bi = batch_index(bs, bs.size() - 2, r - 2);
    ai.push_back(v(r - 2)); ai.push_back(k);
    bi.push_back(k); bi.push_back(v(r - 1));
  }
  L.emit(n, y, reduce(Fn::Dot, value_arith(Fn::Mul, L.read(a, ai), L.read(b, bi)), static_cast<int>(r), {K}));
}

void lower_gemm(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int a = node.inputs[0], b = node.inputs[1], y = node.outputs[0];
  bool ta = c.attr_int("transA", 0), tb = c.attr_int("transB", 0);
  double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
  int64_t K = L.shape(a)[ta ? 0 : 1];
  DType t = L.type(y).dtype;
  ExprP k = v(2);
  ExprP prod = binary(Fn::Mul, L.read(a, ta ? std::vector<ExprP>{k, v(0)} : std::vector<ExprP>{v(0), k}),
                      L.read(b, tb ? std::vector<ExprP>{v(1), k} : std::vector<ExprP>{k, v(1)}));
  ExprP body = reduce(Fn::Dot, prod, 2, {K});
  if (alpha != 1.0) body = binary(Fn::Mul, cst(alpha, t), body);
  if (node.inputs.size() > 2 && node.inputs[2] >= 0) {
    ExprP cterm = L.read_bcast(node.inputs[2], 2);
    if (beta != 1.0) cterm = binary(Fn::Mul, cst(beta, t), cterm);
    body = binary(Fn::Add, body, cterm);
  }
  L.emit(n, y, body);
}

}  // namespace

bool lower_anchor(Lowering& L, int n) {
  const std::string& op = L.g.nodes[n].op_type;
  if (op == "Conv") lower_conv(L, n, false);
  else if (op == "ConvTranspose") lower_conv(L, n, true);
  else if (op == "MatMul") lower_matmul(L, n);
  else if (op == "Gemm") lower_gemm(L, n);
  else return false;
  return true;
}

}  // namespace lockstep::kir
