// Windowed pools as one reduction over the kernel's positions: a position in the padding is
// selected away (the lowest value for MaxPool, 0 for the sums) and never loaded. AveragePool
// divides by a count of positions per output place, a small temp of the output's spatial shape.
#include <cmath>

#include "kernel/lower_ctx.h"
#include "ops/conv.h"

namespace lockstep::kir {

namespace {

ExprP both(ExprP a, ExprP b) { return a ? binary(Fn::And, a, b) : b; }

// The input index on spatial axis a for output place `o` and kernel position `k`.
ExprP position(const ConvGeometry& g, size_t a, ExprP o, ExprP k) {
  ExprP start = sub(mul(o, icst(g.strides[a])), icst(g.pads_begin[a]));
  return add(start, mul(k, icst(g.dilations[a])));
}

// Whether the position lies in [lo, hi) on every axis, lo and hi per axis from the input size.
template <class Bounds>
ExprP within(const ConvGeometry& g, const Shape& in, int out_var0, int k_var0, Bounds bounds) {
  ExprP ok;
  for (size_t a = 0; a < g.kernel.size(); ++a) {
    ExprP i = position(g, a, var(out_var0 + static_cast<int>(a)), var(k_var0 + static_cast<int>(a)));
    auto [lo, hi] = bounds(a, in[a + 2]);
    ok = both(ok, both(binary(Fn::Le, icst(lo), i), binary(Fn::Lt, i, icst(hi))));
  }
  return ok;
}

ExprP lowest(DType t) {
  if (dtype_is_float(t)) return cst(-INFINITY, t);
  return cst(t == DType::i8 ? -128 : 0, t);  // MaxPool's integer types: int8 and uint8
}

}  // namespace

bool lower_pool(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  const std::string& op = node.op_type;
  if (op != "MaxPool" && op != "AveragePool" && op != "LpPool") return false;
  OpCtx c(L.g, n);
  int x = node.inputs[0], y = node.outputs[0];
  const Shape& xs = L.shape(x);
  ConvGeometry g = pool_geometry(c, xs);
  int r = static_cast<int>(xs.size()), nd = r - 2;
  auto inside = [](size_t, int64_t size) { return std::pair<int64_t, int64_t>{0, size}; };
  ExprP ok = within(g, xs, 2, r, inside);
  std::vector<ExprP> idx = {var(0), var(1)};
  for (int a = 0; a < nd; ++a) idx.push_back(position(g, a, var(2 + a), var(r + a)));
  ExprP v = L.read(x, idx);
  DType t = L.type(y).dtype;
  if (op == "MaxPool") {
    L.emit(n, y, reduce(Fn::Max, select(ok, v, lowest(v->type)), r, g.kernel));
    return true;
  }
  ExprP w = widened(v);
  DType wt = w->type;
  auto sum = [&](ExprP term) { return reduce(Fn::Add, select(ok, term, cst(0, wt)), r, g.kernel); };
  ExprP body;
  if (op == "LpPool") {
    int64_t p = c.attr_int("p", 2);
    if (p == 1) body = sum(unary(Fn::Abs, w));
    else if (p == 2) body = unary(Fn::Sqrt, sum(mul(w, w)));
    else
      body = binary(Fn::Pow, sum(binary(Fn::Pow, unary(Fn::Abs, w), cst(static_cast<double>(p), wt))),
                    cst(1.0 / static_cast<double>(p), wt));
  } else {
    bool include_pad = c.attr_int("count_include_pad", 0) != 0;
    auto padded = [&](size_t a, int64_t size) {
      return std::pair<int64_t, int64_t>{-g.pads_begin[a], size + g.pads_end[a]};
    };
    ExprP counted = include_pad ? within(g, xs, 0, nd, padded) : within(g, xs, 0, nd, inside);
    int count =
        L.emit_temp(n, wt, g.out_spatial, reduce(Fn::Add, select(counted, cst(1, wt), cst(0, wt)), nd, g.kernel));
    std::vector<ExprP> at;
    for (int a = 0; a < nd; ++a) at.push_back(var(2 + a));
    body = div(sum(w), load(count, g.out_spatial, wt, at));
  }
  L.emit(n, y, narrowed(body, t));
  return true;
}

}  // namespace lockstep::kir
