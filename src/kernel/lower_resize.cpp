// Resize and Upsample from the shared plan: per axis a constant table of input coordinates
// (and, interpolating, of weights and tap counts); an element sums its taps, outer axis to
// inner, as the reference does. Nearest only picks: exact on every target.
#include "core/memory.h"
#include "kernel/lower_ctx.h"
#include "ops/resize.h"

namespace lockstep::kir {

namespace {

// A constant [out] or [out, taps] table of the plan, as a buffer named after the node's output.
int table(Lowering& L, int n, const std::string& what, DType t, const Shape& s, const std::vector<double>& v) {
  auto data = std::make_shared<Tensor>(t, s);
  RefTensor r(t, s);
  for (size_t k = 0; k < v.size(); ++k) r.set(static_cast<int64_t>(k), v[k]);
  *data = from_ref(r);
  int b = L.add_buffer(Buffer::Constant, t, s, L.g.values[L.g.nodes[n].outputs[0]].name + ":" + what);
  L.plan.buffers[b].data = data;
  return b;
}

template <class T>
std::vector<double> as_doubles(const std::vector<T>& v) {
  return {v.begin(), v.end()};
}

void lower_resize(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0], y = node.outputs[0];
  ResizeSlots s = resize_slots(c);
  auto value = [&](int k) -> const RefTensor* {
    if (k < 0 || !c.has_input(k)) return nullptr;
    const auto& v = L.types.value[node.inputs[k]];
    if (!v) c.fail("scales, sizes and roi must be known when compiling");
    return &*v;
  };
  ResizePlan p;
  try {
    p = resize_plan(c, L.shape(x), value(s.roi), value(s.scales), value(s.sizes));
  } catch (const MemoryRefused& e) {  // named after the node, as the reference names it
    c.fail(e.what());
  }
  DType t = L.type(x).dtype;
  size_t r = p.axes.size();
  int first = static_cast<int>(r);
  std::vector<ExprP> at;
  ExprP inside, weight, valid;
  Shape taps;
  DType wt = widened(cst(0, t))->type;
  for (size_t a = 0; a < r; ++a) {
    const ResizeAxis& ax = p.axes[a];
    ExprP o = var(static_cast<int>(a));
    if (ax.identity) {
      at.push_back(o);
      continue;
    }
    std::vector<double> idx = as_doubles(ax.index);
    if (std::count(ax.index.begin(), ax.index.end(), -1)) {
      std::vector<double> in(ax.out);
      for (int64_t k = 0; k < ax.out; ++k) in[k] = ax.index[k * ax.taps] >= 0;
      ExprP here = load(table(L, n, "inside" + std::to_string(a), DType::u8, {ax.out}, in), {ax.out}, DType::u8, {o});
      here = binary(Fn::Eq, here, cst(1, DType::u8));
      inside = inside ? binary(Fn::And, inside, here) : here;
      for (double& v : idx) v = std::max(v, 0.0);  // the load stays in range; `inside` selects
    }
    Shape ts = {ax.out, ax.taps};
    if (!p.weighted) {  // one tap
      at.push_back(load(table(L, n, "index" + std::to_string(a), DType::i64, ts, idx), ts, DType::i64, {o, icst(0)}));
      continue;
    }
    ExprP j = var(first + static_cast<int>(taps.size()));
    taps.push_back(ax.taps);
    at.push_back(load(table(L, n, "index" + std::to_string(a), DType::i64, ts, idx), ts, DType::i64, {o, j}));
    ExprP w = load(table(L, n, "weight" + std::to_string(a), wt, ts, ax.weight), ts, wt, {o, j});
    weight = weight ? binary(Fn::Mul, weight, w) : w;
    if (std::any_of(ax.count.begin(), ax.count.end(), [&](int64_t k) { return k != ax.taps; })) {
      ExprP used = binary(Fn::Lt, j,
                          load(table(L, n, "count" + std::to_string(a), DType::i64, {ax.out}, as_doubles(ax.count)),
                               {ax.out}, DType::i64, {o}));
      valid = valid ? binary(Fn::And, valid, used) : used;
    }
  }
  ExprP body = L.read(x, at);
  if (p.weighted) {
    body = widened(body);
    if (weight) {
      ExprP term = binary(Fn::Mul, weight, body);
      if (valid) term = select(valid, term, cst(0, wt));
      body = reduce(Fn::Add, term, first, taps);
    }
    body = narrowed(body, t);
  }
  if (inside) body = select(inside, body, cst(p.extrapolation, t));
  L.emit(n, y, body);
}

}  // namespace

bool lower_resizes(Lowering& L, int n) {
  const std::string& op = L.g.nodes[n].op_type;
  if (op != "Resize" && op != "Upsample") return false;
  lower_resize(L, n);
  return true;
}

}  // namespace lockstep::kir
