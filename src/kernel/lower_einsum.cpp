// Einsum: output vars are the output's labels, reduction vars the summed ones; the body is the
// product of every input read at its labels (a broadcast dim of 1 at 0), folded in order.
#include "kernel/lower_ctx.h"
#include "ops/einsum.h"

namespace lockstep::kir {

namespace {

void lower_einsum(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  std::vector<Shape> shapes;
  for (int v : node.inputs) shapes.push_back(L.shape(v));
  EinsumPlan p = einsum_plan(c, shapes);
  ExprP prod;
  for (size_t k = 0; k < shapes.size(); ++k) {
    std::vector<ExprP> idx;
    for (size_t d = 0; d < shapes[k].size(); ++d) idx.push_back(shapes[k][d] == 1 ? icst(0) : var(p.inputs[k][d]));
    ExprP term = widened(L.read(node.inputs[k], idx));
    prod = prod ? value_arith(Fn::Mul, prod, term) : term;
  }
  Shape sums(p.size.begin() + static_cast<std::ptrdiff_t>(p.output.size()), p.size.end());
  ExprP body = sums.empty() ? prod : reduce(Fn::Add, prod, static_cast<int>(p.output.size()), sums);
  L.emit(n, node.outputs[0], narrowed(body, L.type(node.outputs[0]).dtype));
}

}  // namespace

bool lower_einsums(Lowering& L, int n) {
  if (L.g.nodes[n].op_type != "Einsum") return false;
  lower_einsum(L, n);
  return true;
}

}  // namespace lockstep::kir
