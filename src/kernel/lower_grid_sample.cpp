// GridSample: per output point, each axis's coordinate in the reference's steps (grid_sample.h),
// then a fold over the taps (1, 2 or 4 per axis, one reduction var each): the product of the
// axes' weights times the pixel the padding picks. A NaN coordinate makes the point NaN.
#include <cmath>

#include "kernel/lower_ctx.h"
#include "ops/grid_sample.h"

namespace lockstep::kir {

namespace {

struct GridLowering {
  Lowering& L;
  int n, x, grid;
  GridSampleAttrs a;
  Shape dims;  // X's spatial dims
  DType wt;

  ExprP w(double v) const { return cst(v, wt); }
  ExprP lt(ExprP p, ExprP q) const { return binary(Fn::Lt, p, q); }
  ExprP clamp(ExprP v, ExprP lo, ExprP hi) const { return binary(Fn::Min, binary(Fn::Max, v, lo), hi); }

  ExprP reflect(ExprP v, double lo, double hi) const {
    double range = hi - lo;
    if (range == 0) return w(lo);
    ExprP below = lt(v, w(lo));
    ExprP dx = select(below, sub(w(lo), v), sub(v, w(hi)));
    ExprP k = unary(Fn::Floor, div(dx, w(range)));
    ExprP r = sub(dx, mul(k, w(range)));
    ExprP even = binary(Fn::Eq, binary(Fn::Mod, k, w(2)), w(0));
    ExprP up = add(w(lo), r), down = sub(w(hi), r);
    return select(below, select(even, up, down), select(even, down, up));
  }

  // Axis d's padded coordinate at grid point (n, o...) (the grid's last axis is x first).
  ExprP coordinate(size_t d, std::vector<ExprP> at) const {
    at.push_back(icst(static_cast<int64_t>(dims.size() - 1 - d)));
    ExprP g = cast(widened(L.read(grid, at)), wt);
    double len = static_cast<double>(dims[d]);
    ExprP xc = a.align ? mul(div(add(g, w(1)), w(2)), w(len - 1)) : div(sub(mul(add(g, w(1)), w(len)), w(1)), w(2));
    if (a.mode == GridSampleAttrs::Nearest) xc = unary(Fn::Round, xc);
    double lo = a.lo(dims[d]), hi = a.hi(dims[d]);
    ExprP out = binary(Fn::Or, lt(xc, w(lo)), lt(w(hi), xc));
    if (a.padding == GridSampleAttrs::Border) xc = select(out, clamp(xc, w(0), w(len - 1)), xc);
    if (a.padding == GridSampleAttrs::Reflection) xc = select(out, reflect(xc, lo, hi), xc);
    return xc;
  }

  // Keys cubic weight (a = -0.75) of tap `tap` (0..3) at offset t.
  ExprP cubic(ExprP tap, ExprP t) const {
    const double A = -0.75;
    auto near = [&](ExprP v) { return add(mul(mul(sub(mul(w(A + 2), v), w(A + 3)), v), v), w(1)); };
    auto far = [&](ExprP v) { return sub(mul(add(mul(sub(mul(w(A), v), w(5 * A)), v), w(8 * A)), v), w(4 * A)); };
    auto is = [&](int64_t j) { return binary(Fn::Eq, tap, icst(j)); };
    return select(is(0), far(add(t, w(1))),
                  select(is(1), near(t), select(is(2), near(sub(w(1), t)), far(sub(w(2), t)))));
  }

  // Each point's coordinates as temps [N, O...], one per axis, kept within [-8, len + 8] (a
  // NaN one as 0), and whether any was NaN: the sampling kernel then reads each once.
  Shape points() const {
    Shape s = {L.shape(grid)[0]};
    s.insert(s.end(), L.shape(grid).begin() + 1, L.shape(grid).end() - 1);
    return s;
  }

  void coordinates(std::vector<ExprP>& at, ExprP& nan) const {
    Shape ps = points();
    // The point (n, o...): vars 0, 1.. in the temps, 0, 2.. (after the channel) when sampling.
    std::vector<ExprP> in_temp = {var(0)}, point = {var(0)};
    for (size_t j = 0; j < dims.size(); ++j) {
      in_temp.push_back(var(static_cast<int>(1 + j)));
      point.push_back(var(static_cast<int>(2 + j)));
    }
    ExprP any;
    for (size_t d = 0; d < dims.size(); ++d) {
      ExprP xc = coordinate(d, in_temp);
      ExprP nan_here = is_nan(xc);
      double len = static_cast<double>(dims[d]);
      int b = L.emit_temp(n, wt, ps, select(nan_here, w(0), clamp(xc, w(-8), w(len + 8))));
      at.push_back(load(b, ps, wt, point));
      any = any ? binary(Fn::Or, any, nan_here) : nan_here;
    }
    int flag = L.emit_temp(n, DType::u8, ps, select(any, icst(1), icst(0)));
    nan = binary(Fn::Eq, load(flag, ps, DType::u8, point), icst(1));
  }

  ExprP body() const {
    size_t k = dims.size();
    int first = static_cast<int>(2 + k);
    ExprP weight, nan, inside;
    std::vector<ExprP> idx = {var(0), var(1)}, coords;
    std::vector<ExprP> taps_idx(k);
    std::vector<ExprP> weights(k);
    coordinates(coords, nan);
    for (size_t d = 0; d < k; ++d) {
      ExprP xc = coords[d];
      ExprP x0 = unary(Fn::Floor, xc), t = sub(xc, x0), tap = var(first + static_cast<int>(d));
      ExprP i = add(add(cast(x0, DType::i64), tap), icst(a.mode == GridSampleAttrs::Cubic ? -1 : 0));
      if (a.mode == GridSampleAttrs::Linear) weights[d] = select(binary(Fn::Eq, tap, icst(0)), sub(w(1), t), t);
      if (a.mode == GridSampleAttrs::Cubic) weights[d] = cubic(tap, t);
      if (a.padding == GridSampleAttrs::Zeros) {
        ExprP in = binary(Fn::And, binary(Fn::Le, icst(0), i), lt(i, icst(dims[d])));
        inside = inside ? binary(Fn::And, inside, in) : in;
      } else if (a.padding == GridSampleAttrs::Border) {
        i = clamp(i, icst(0), icst(dims[d] - 1));
      } else {
        i = cast(reflect(cast(i, wt), a.lo(dims[d]), a.hi(dims[d])), DType::i64);
      }
      taps_idx[d] = i;
    }
    for (size_t d = k; d-- > 0;)  // the reference's order: the last axis's weight first
      if (weights[d]) weight = weight ? mul(weight, weights[d]) : weights[d];
    idx.insert(idx.end(), taps_idx.begin(), taps_idx.end());
    ExprP term = cast(widened(L.read(x, idx)), wt);
    if (weight) term = mul(weight, term);
    if (inside) term = select(inside, term, w(0));
    Shape extents(k, a.taps());
    ExprP sum;
    if (a.taps() > 1) {
      sum = reduce(Fn::Add, term, first, extents);
    } else {  // nearest: one tap, its vars 0
      std::vector<ExprP> vars;
      for (int j = 0; j < first; ++j) vars.push_back(var(j));
      vars.resize(first + k, icst(0));
      sum = substitute(term, vars, 0);
    }
    return select(nan, w(NAN), sum);
  }
};

}  // namespace

bool lower_grid_samples(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  if (node.op_type != "GridSample") return false;
  OpCtx c(L.g, n);
  const Shape& xs = L.shape(node.inputs[0]);
  check_grid_sample(c, xs, L.shape(node.inputs[1]));
  DType t = L.type(node.inputs[0]).dtype;
  GridLowering G{L,
                 n,
                 node.inputs[0],
                 node.inputs[1],
                 grid_sample_attrs(c),
                 Shape(xs.begin() + 2, xs.end()),
                 t == DType::f64 ? DType::f64 : DType::f32};
  L.emit(n, node.outputs[0], narrowed(G.body(), L.type(node.outputs[0]).dtype));
  return true;
}

}  // namespace lockstep::kir
