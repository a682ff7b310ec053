// Activations with parameters, as formulas every target evaluates the same way. float16 and
// bfloat16 compute in float32 and round once, as the reference rounds its double once.
#include "kernel/lower_ctx.h"

namespace lockstep::kir {

namespace {

ExprP c(double v, const ExprP& like) { return cst(v, like->type); }
ExprP lt(ExprP a, ExprP b) { return binary(Fn::Lt, std::move(a), std::move(b)); }

// exp(x) - 1 for x <= 0 without cancellation near 0: 2t / (1 - t) with t = tanh(x / 2), whose
// denominator lies in [1, 2]; -1 at -inf. Above -2^-30 it is x itself (x / 2 may underflow).
ExprP expm1_neg(const ExprP& x) {
  ExprP t = unary(Fn::Tanh, mul(x, c(0.5, x)));
  return select(lt(c(-0x1p-30, x), x), x, div(mul(c(2, x), t), sub(c(1, x), t)));
}

// log(1 + y) for y in [0, 1]: log(u) * y / (u - 1) with u = 1 + y (exact where u rounds to 1).
ExprP log1p_unit(const ExprP& y) {
  ExprP u = add(c(1, y), y);
  ExprP um1 = sub(u, c(1, y));
  return select(binary(Fn::Eq, um1, c(0, y)), y, div(mul(unary(Fn::Log, u), y), um1));
}

// max(x, 0) + log1p(exp(-|x|)): never overflows; NaN stays NaN.
ExprP softadd(const ExprP& x) {
  ExprP pos = select(lt(x, c(0, x)), c(0, x), x);
  return add(pos, log1p_unit(unary(Fn::Exp, unary(Fn::Neg, unary(Fn::Abs, x)))));
}

ExprP clip01(const ExprP& v) { return select(lt(v, c(0, v)), c(0, v), select(lt(c(1, v), v), c(1, v), v)); }

ExprP activation(const OpCtx& o, const ExprP& x) {
  const std::string& op = o.node.op_type;
  ExprP neg = lt(x, c(0, x));
  if (op == "Elu") return select(neg, mul(c(o.attr_float("alpha", 1.0), x), expm1_neg(x)), x);
  if (op == "Selu") {
    double alpha = o.attr_float("alpha", 1.67326319217681884765625);
    double gamma = o.attr_float("gamma", 1.05070102214813232421875);
    return mul(c(gamma, x), select(lt(c(0, x), x), x, mul(c(alpha, x), expm1_neg(x))));
  }
  if (op == "Celu") {
    double alpha = o.attr_float("alpha", 1.0);
    return select(neg, mul(c(alpha, x), expm1_neg(div(x, c(alpha, x)))), x);
  }
  if (op == "Softplus") return softadd(x);
  if (op == "Softsign") return div(x, add(c(1, x), unary(Fn::Abs, x)));
  if (op == "Mish") return mul(x, unary(Fn::Tanh, softadd(x)));
  if (op == "ThresholdedRelu") return select(lt(c(o.attr_float("alpha", 1.0), x), x), x, c(0, x));
  if (op == "Swish") return mul(x, unary(Fn::Sigmoid, mul(c(o.attr_float("alpha", 1.0), x), x)));
  if (op == "Shrink") {
    double lambd = o.attr_float("lambd", 0.5), bias = o.attr_float("bias", 0.0);
    return select(lt(x, c(-lambd, x)), add(x, c(bias, x)), select(lt(c(lambd, x), x), sub(x, c(bias, x)), c(0, x)));
  }
  bool swish = op == "HardSwish";
  double alpha = swish ? 1.0 / 6 : o.attr_float("alpha", 0.2), beta = swish ? 0.5 : o.attr_float("beta", 0.5);
  ExprP h = clip01(add(mul(c(alpha, x), x), c(beta, x)));
  return swish ? mul(x, h) : h;
}

bool is_activation(const std::string& op) {
  for (const char* a : {"Elu", "Selu", "Celu", "Softplus", "Softsign", "HardSigmoid", "HardSwish", "ThresholdedRelu",
                        "Mish", "Swish", "Shrink"})
    if (op == a) return true;
  return false;
}

}  // namespace

bool lower_activation(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx o(L.g, n);
  int out = node.outputs[0];
  size_t rank = L.shape(out).size();
  auto wide = [&](size_t k) { return widened(L.read_bcast(node.inputs[k], rank)); };
  ExprP body;
  if (is_activation(node.op_type)) {
    body = activation(o, wide(0));
  } else if (node.op_type == "PRelu") {
    ExprP x = wide(0);
    body = select(lt(x, c(0, x)), value_arith(Fn::Mul, wide(1), x), x);
  } else if (node.op_type == "SwiGLU") {
    ExprP a = wide(0);
    body = mul(mul(a, unary(Fn::Sigmoid, mul(c(o.attr_float("alpha", 1.0), a), a))), wide(1));
  } else {
    return false;
  }
  L.emit(n, out, narrowed(body, L.type(out).dtype));
  return true;
}

}  // namespace lockstep::kir
