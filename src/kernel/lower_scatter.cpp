// The scatters: each output element looks at every update in order and keeps the last that
// lands on it (no reduction) or folds those that do into its data value (add, mul, max, min),
// so no two work items write one element and the order is the reference's. Indices outside
// the data are written nowhere and counted by a check kernel, as for the gathers.
#include "kernel/lower_ctx.h"
#include "ops/scatter.h"

namespace lockstep::kir {

namespace {

ExprP v(int64_t k) { return var(static_cast<int>(k)); }

// Where each update lands: whether it hits the output element at the output's vars, and its
// flat position among the updates, over reduction vars from `first`.
struct Landing {
  ExprP hit, bad;
  Shape extents;  // the update positions folded over
};

// ScatterElements: update p lands at p with the axis replaced by its index.
Landing elements_landing(Lowering& L, int ind, const Shape& data, int64_t axis, int first) {
  const Shape& is = L.shape(ind);
  GatherIndex g = gather_index(L, ind, data[axis], first);
  ExprP hit = g.ok;
  for (size_t k = 0; k < data.size(); ++k)
    hit = binary(Fn::And, hit, binary(Fn::Eq, static_cast<int64_t>(k) == axis ? g.i : v(first + k), v(k)));
  return {hit, unary(Fn::Not, g.ok), is};
}

// ScatterND: tuple t (over indices[:-1]) lands at its k indices, the rest of the output's vars
// reading the update's slice.
Landing nd_landing(Lowering& L, int ind, const Shape& data, int64_t k, int first) {
  const Shape& is = L.shape(ind);
  Shape tuples(is.begin(), is.end() - 1);
  ExprP hit, ok;
  for (int64_t d = 0; d < k; ++d) {
    std::vector<ExprP> at;
    for (size_t a = 0; a < tuples.size(); ++a) at.push_back(v(first + a));
    at.push_back(icst(d));
    GatherIndex g = gather_index(L, ind, data[d], std::move(at));
    ExprP here = binary(Fn::And, g.ok, binary(Fn::Eq, g.i, v(d)));
    hit = hit ? binary(Fn::And, hit, here) : here;
    ok = ok ? binary(Fn::And, ok, g.ok) : g.ok;
  }
  if (!hit) hit = ok = cst(1, DType::boolean);
  return {hit, unary(Fn::Not, ok), tuples};
}

// The update's value for the landing at reduction vars `first`.. (ScatterND: then the slice).
ExprP update_at(Lowering& L, int upd, const Landing& at, int first, size_t out_rank, int64_t k, bool is_nd) {
  std::vector<ExprP> idx;
  for (size_t a = 0; a < at.extents.size(); ++a) idx.push_back(v(first + a));
  if (is_nd)
    for (size_t d = k; d < out_rank; ++d) idx.push_back(v(d));
  return L.read(upd, idx);
}

// fn folded over the update positions (one position, a scalar tuple shape: the term itself).
ExprP over(Fn fn, ExprP term, int first, const Shape& ext) {
  return ext.empty() ? term : reduce(fn, std::move(term), first, ext);
}

ExprP fold(ScatterReduction r, ExprP data, ExprP hit, ExprP u, int first, const Shape& ext) {
  DType t = data->type;
  if (r == ScatterReduction::Add)
    return value_arith(Fn::Add, data, over(Fn::Add, select(hit, u, cst(0, t)), first, ext));
  if (r == ScatterReduction::Mul)
    return value_arith(Fn::Mul, data, over(Fn::Mul, select(hit, u, cst(1, t)), first, ext));
  // max, min: an update that misses stands in as the data value itself
  Fn fn = r == ScatterReduction::Max ? Fn::Max : Fn::Min;
  return binary(fn, data, over(fn, select(hit, u, data), first, ext));
}

void lower_scatter(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0], ind = node.inputs[1], upd = node.inputs[2], y = node.outputs[0];
  const Shape& ds = L.shape(x);
  bool is_nd = node.op_type == "ScatterND";
  int first = static_cast<int>(ds.size());
  int64_t k = is_nd ? scatter_nd_depth(c, ds, L.shape(ind), L.shape(upd)) : 0;
  Landing at = is_nd ? nd_landing(L, ind, ds, k, first)
                     : elements_landing(L, ind, ds, scatter_elements_axis(c, ds, L.shape(ind), L.shape(upd)), first);
  ScatterReduction r = scatter_reduction(c);
  ExprP data = L.read(x, out_vars(ds.size())), u = update_at(L, upd, at, first, ds.size(), k, is_nd);
  if (r != ScatterReduction::None) {
    L.emit(n, y, narrowed(fold(r, widened(data), at.hit, widened(u), first, at.extents), L.type(y).dtype));
  } else {
    // The last update landing here, as a flat position among the updates (-1: none).
    std::vector<ExprP> pos;
    for (size_t a = 0; a < at.extents.size(); ++a) pos.push_back(v(first + a));
    ExprP last = over(Fn::Max, select(at.hit, flatten_index(pos, at.extents), icst(-1)), first, at.extents);
    int lb = L.emit_temp(n, DType::i64, ds, last);
    ExprP l = load(lb, ds, DType::i64, out_vars(ds.size()));
    // The update's flat offset: position l's, then (ScatterND) the slice's at the output's vars.
    ExprP flat = l;
    if (is_nd) {
      std::vector<ExprP> slice_at;
      for (size_t d = k; d < ds.size(); ++d) slice_at.push_back(v(d));
      Shape slice(ds.begin() + k, ds.end());
      flat = add(mul(l, icst(shape_numel(slice))), flatten_index(slice_at, slice));
    }
    const Shape& us = L.shape(upd);
    L.emit(n, y, select(binary(Fn::Le, icst(0), l), load_flat(L.buf[upd], us, L.type(upd).dtype, flat), data));
  }
  // The count of updates whose indices fall outside the data: a fixed-order sum.
  L.count_check(n, select(substitute(at.bad, {}, -first), icst(1), icst(0)), at.extents,
                node.op_type + " indices out of range");
}

}  // namespace

bool lower_scatters(Lowering& L, int n) {
  const std::string& op = L.g.nodes[n].op_type;
  if (op != "Scatter" && op != "ScatterElements" && op != "ScatterND") return false;
  lower_scatter(L, n);
  return true;
}

}  // namespace lockstep::kir
