// Elementwise ops: one expression per output element, inputs read with broadcasting.
#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"

#include "kernel/lower_ctx.h"
#include "ops/random.h"

namespace lockstep::kir {

namespace {

const std::map<std::string, Fn> kUnary = {{"Neg", Fn::Neg},        {"Abs", Fn::Abs},   {"Exp", Fn::Exp},
                                          {"Log", Fn::Log},        {"Sqrt", Fn::Sqrt}, {"Tanh", Fn::Tanh},
                                          {"Sigmoid", Fn::Sigmoid}};
const std::map<std::string, Fn> kBinary = {
    {"Add", Fn::Add},           {"Sub", Fn::Sub},         {"Mul", Fn::Mul},          {"Equal", Fn::Eq},
    {"Less", Fn::Lt},           {"LessOrEqual", Fn::Le},  {"And", Fn::And},          {"Or", Fn::Or},
    {"BitwiseAnd", Fn::BitAnd}, {"BitwiseOr", Fn::BitOr}, {"BitwiseXor", Fn::BitXor}};
// Inputs folded left to right: Max and Min propagate NaN (ls_max_nan), Sum adds in order.
const std::map<std::string, Fn> kVariadic = {{"Max", Fn::Max}, {"Min", Fn::Min}, {"Sum", Fn::Add}, {"Mean", Fn::Add}};

ExprP zero_like(const ExprP& x) { return cst(0, x->type); }

// Integer division is one IDiv call (see expr.h): a select around it would copy both operands,
// and fusion nests them, so a chain of divisions grew exponentially in the printed source.
ExprP divide(ExprP a, ExprP b) { return binary(dtype_is_float(a->type) ? Fn::Div : Fn::IDiv, a, b); }

// A zero integer divisor is an error naming the node, as in the reference, on every target. A
// constant divisor is checked here; a run-time one by a check kernel that counts its zeros (a
// scalar sum in a fixed order, read back by the runtime). Every divisor element is used when
// the output is not empty, so counting over the divisor's own shape finds what the reference
// finds.
void check_divisor(Lowering& L, int n, int divisor, int out, const std::string& what) {
  if (dtype_is_float(L.type(divisor).dtype) || shape_numel(L.shape(out)) == 0) return;
  const Buffer& b = L.plan.buffers[L.buf[divisor]];
  if (b.kind == Buffer::Constant) {
    RefTensor v = to_ref(*b.data);
    int64_t zeros = std::count(v.i.begin(), v.i.end(), int64_t{0});
    if (zeros)
      throw Error(L.g.label(n) + ": integer " + what + " by zero (the constant divisor '" + b.name + "' has " +
                  std::to_string(zeros) + " zero element" + (zeros == 1 ? "" : "s") + ")");
    return;
  }
  const Shape& s = L.shape(divisor);
  ExprP d = L.read(divisor, out_vars(s.size()));
  ExprP zero = select(binary(Fn::Eq, d, zero_like(d)), icst(1), icst(0));
  L.count_check(n, zero, s, "zero divisors (integer " + what + " by zero)");
}

// Mod takes the divisor's sign unless fmod = 1; a float remainder is exact on every target.
ExprP modulo(ExprP a, ExprP b, bool fmod) {
  if (!fmod) return binary(Fn::PyMod, a, b);
  return binary(dtype_is_float(a->type) ? Fn::Mod : Fn::IRem, a, b);
}

// Pow in the base's type: integer to an integer power exactly (wrapping, as repeated
// multiplication), an integer base to a float power through double as the reference does.
ExprP power(ExprP a, ExprP b) {
  DType t = a->type;
  if (!dtype_is_float(t) && !dtype_is_float(b->type)) return binary(Fn::IPow, a, b);
  DType work = dtype_is_float(t) ? t : DType::f64;
  return cast(binary(Fn::Pow, cast(a, work), cast(b, work)), t);
}

// 0 to a negative integer power is an error naming the node, as 1 / 0 is, on every target:
// counted by a check kernel (a scalar sum in a fixed order) that the runtime reads back. (Two
// constant inputs are folded by the reference at compile time, which reports it there.)
void check_zero_power(Lowering& L, int n, int base, int exponent, int out) {
  DType bt = L.type(base).dtype, et = L.type(exponent).dtype;
  if (dtype_is_float(bt) || dtype_is_float(et) || shape_numel(L.shape(out)) == 0) return;
  if (et == DType::u8 || et == DType::u16 || et == DType::u32 || et == DType::u64) return;
  size_t rank = L.shape(out).size();
  ExprP bad = binary(Fn::And, binary(Fn::Eq, L.read_bcast(base, rank), cst(0, bt)),
                     binary(Fn::Lt, L.read_bcast(exponent, rank), cst(0, et)));
  const Shape& s = L.shape(out);
  L.count_check(n, select(bad, icst(1), icst(0)), s,
                "zero bases to negative powers (integer 0 raised to a negative power)");
}

// Clip as max-then-min so that min > max gives max, and NaN passes through.
ExprP clip(ExprP x, ExprP lo, ExprP hi) {
  if (lo) x = select(binary(Fn::Lt, x, lo), lo, x);
  if (hi) x = select(binary(Fn::Lt, hi, x), hi, x);
  return x;
}

// in(0) op in(1) op ... in(n-1), left to right. Sum and Mean are one result each: half and
// bfloat16 inputs add in float and round once, as a reduction does (the reference keeps full
// precision; rounding every partial sum lost 2^-8 of a bfloat16 sum and overflowed float16).
template <class In>
ExprP fold(Fn fn, bool mean, const In& in, size_t n) {
  auto input = [&](size_t k) { return fn == Fn::Add ? widened(in(k)) : in(k); };
  ExprP body = input(0);
  for (size_t k = 1; k < n; ++k) body = value_arith(fn, body, input(k));
  if (mean) body = div(body, cst(static_cast<double>(n), body->type));
  return narrowed(body, in(0)->type);
}

// 1 where x > 0, -1 where x < 0, else x itself (+-0 keeps its sign, NaN stays NaN).
ExprP sign(ExprP x) {
  ExprP zero = zero_like(x);
  return select(binary(Fn::Lt, zero, x), cst(1, x->type), select(binary(Fn::Lt, x, zero), cst(-1, x->type), x));
}

ExprP clip_bound(Lowering& L, const OpCtx& c, size_t k, const char* attr, size_t rank, DType t) {
  if (c.opset < 11) return c.has_attr(attr) ? cst(c.attr_float(attr, 0), t) : nullptr;
  return c.has_input(k) ? L.read_bcast(c.node.inputs[k], rank) : nullptr;
}

// Trilu: x where the column minus the row is at least k (upper) or at most k (lower), else 0.
ExprP trilu(Lowering& L, const OpCtx& c, ExprP x, size_t rank) {
  ExprP k = icst(0);
  if (c.has_input(1)) {  // a scalar, or one element, known now or read at run time
    int kv = c.node.inputs[1];
    k = L.read(kv, std::vector<ExprP>(L.shape(kv).size(), icst(0)));
  }
  ExprP d = binary(Fn::Sub, var(static_cast<int>(rank) - 1), var(static_cast<int>(rank) - 2));
  ExprP keep = c.attr_int("upper", 1) ? binary(Fn::Le, k, d) : binary(Fn::Le, d, k);
  return select(keep, x, zero_like(x));
}

// x == +inf or x == -inf, as the attributes ask.
ExprP is_inf(const OpCtx& c, const ExprP& x) {
  ExprP pos = binary(Fn::Eq, x, cst(INFINITY, x->type)), neg = binary(Fn::Eq, x, cst(-INFINITY, x->type));
  bool p = c.attr_int("detect_positive", 1) != 0, m = c.attr_int("detect_negative", 1) != 0;
  if (p && m) return binary(Fn::Or, pos, neg);
  return p ? pos : m ? neg : cst(0, DType::boolean);
}

// OneHot: the index under this element (the output's index without the depth axis), a negative
// one counted back from depth (the output's extent there), compared with the position on it.
ExprP one_hot(Lowering& L, const OpCtx& c, int out) {
  const Node& node = c.node;
  const Shape& os = L.shape(out);
  int64_t rank = static_cast<int64_t>(os.size()), axis = normalize_axis(c.attr_int("axis", -1), rank);
  std::vector<ExprP> at;
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis) at.push_back(var(static_cast<int>(a)));
  ExprP x = L.read(node.inputs[0], at), j = var(static_cast<int>(axis));
  ExprP hit;
  if (dtype_is_float(x->type)) {
    x = widened(x);
    ExprP v = select(binary(Fn::Lt, x, cst(0, x->type)), add(x, cst(static_cast<double>(os[axis]), x->type)), x);
    hit = binary(Fn::Eq, v, cast(j, x->type));
  } else {
    ExprP xi = cast(x, DType::i64);  // u64 past 2^63 turns negative and, plus depth, still misses
    ExprP v = select(binary(Fn::Lt, xi, icst(0)), binary(Fn::Add, xi, icst(os[axis])), xi);
    hit = binary(Fn::Eq, v, j);
  }
  auto value = [&](int64_t k) { return L.read(node.inputs[2], {icst(k)}); };
  return select(hit, value(1), value(0));
}

// Random generators (docs/random.md): element k of the output draws counter k of the node's
// stream; the draw is scaled in float32 (float64 for f64) and rounded once at the store.
ExprP random_value(Lowering& L, const OpCtx& c, int out) {
  const Shape& os = L.shape(out);
  std::vector<ExprP> at;
  for (size_t d = 0; d < os.size(); ++d) at.push_back(var(static_cast<int>(d)));
  ExprP counter = flatten_index(at, os);
  DType t = L.type(out).dtype;
  int64_t key = static_cast<int64_t>(random_key(L.g, c.node_index));
  if (c.node.op_type == "Bernoulli") {
    ExprP p = widened(L.read_bcast(c.node.inputs[0], os.size()));
    ExprP u = random_draw(Fn::RandUniform, counter, key, p->type);
    return select(binary(Fn::Lt, u, p), cst(1, t), cst(0, t));
  }
  DType w = t == DType::f64 ? DType::f64 : DType::f32;
  ExprP v;
  if (c.node.op_type.starts_with("RandomNormal")) {
    ExprP z = random_draw(Fn::RandNormal, counter, key, w);
    v = add(mul(cst(c.attr_float("scale", 1), w), z), cst(c.attr_float("mean", 0), w));
  } else {
    double lo = c.attr_float("low", 0), hi = c.attr_float("high", 1);
    v = add(mul(cst(hi - lo, w), random_draw(Fn::RandUniform, counter, key, w)), cst(lo, w));
  }
  return cast(v, t);
}

}  // namespace

bool lower_elementwise(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  const std::string& op = node.op_type;
  OpCtx c(L.g, n);
  int out = node.outputs[0];
  size_t rank = L.shape(out).size();
  auto in = [&](size_t k) { return L.read_bcast(node.inputs[k], rank); };
  ExprP body;
  if (auto u = kUnary.find(op); u != kUnary.end()) body = value_arith(u->second, in(0));
  else if (auto b = kBinary.find(op); b != kBinary.end()) body = value_arith(b->second, in(0), in(1));
  else if (op == "Erf") body = dtype_is_float(L.type(out).dtype) ? unary(Fn::Erf, in(0)) : cst(0, L.type(out).dtype);
  else if (auto f = kVariadic.find(op); f != kVariadic.end())
    body = fold(f->second, op == "Mean", in, node.inputs.size());
  else if (op == "Greater") body = binary(Fn::Lt, in(1), in(0));
  else if (op == "GreaterOrEqual") body = binary(Fn::Le, in(1), in(0));
  else if (op == "Xor") body = unary(Fn::Not, binary(Fn::Eq, in(0), in(1)));
  else if (op == "Not") body = unary(Fn::Not, in(0));
  else if (op == "BitwiseNot") body = unary(Fn::BitNot, in(0));
  else if (op == "BitShift") body = binary(c.attr_string("direction", "") == "LEFT" ? Fn::Shl : Fn::Shr, in(0), in(1));
  else if (op == "Floor") body = unary(Fn::Floor, in(0));
  else if (op == "Round") body = unary(Fn::Round, in(0));
  else if (op == "IsNaN") body = is_nan(widened(in(0)));
  else if (op == "IsInf") body = is_inf(c, widened(in(0)));
  else if (op == "Ceil") body = unary(Fn::Neg, unary(Fn::Floor, unary(Fn::Neg, in(0))));  // exact, -0 kept
  else if (op == "Reciprocal") body = binary(Fn::Div, cst(1, L.type(out).dtype), in(0));
  else if (op == "Sign") body = sign(in(0));
  else if (op == "Div") body = divide(in(0), in(1));
  else if (op == "Pow") body = power(in(0), in(1));
  else if (op == "Mod") body = modulo(in(0), in(1), c.attr_int("fmod", 0) != 0);
  else if (op == "Relu") body = select(binary(Fn::Lt, in(0), zero_like(in(0))), zero_like(in(0)), in(0));
  else if (op == "LeakyRelu") {
    ExprP x = in(0);
    body = select(binary(Fn::Lt, x, zero_like(x)), binary(Fn::Mul, x, cst(c.attr_float("alpha", 0.01), x->type)), x);
  } else if (op == "Clip") {
    ExprP x = in(0);
    body = clip(x, clip_bound(L, c, 1, "min", rank, x->type), clip_bound(L, c, 2, "max", rank, x->type));
  } else if (op == "Where") body = select(in(0), in(1), in(2));
  else if (op == "Cast" || op == "CastLike") body = cast(in(0), L.type(out).dtype);
  else if (op == "Identity") body = in(0);
  else if (op == "Trilu") body = trilu(L, c, in(0), rank);
  else if (op == "OneHot") body = one_hot(L, c, out);
  else if (is_random_op(op)) body = random_value(L, c, out);
  else if (op == "EyeLike") {  // ones where column - row = k
    DType t = L.type(out).dtype;
    ExprP on = binary(Fn::Eq, binary(Fn::Sub, var(1), var(0)), icst(c.attr_int("k", 0)));
    body = select(on, cst(1, t), cst(0, t));
  } else if (op == "Dropout") {
    if (c.has_output(1)) L.emit(n, node.outputs[1], cst(1, L.type(node.outputs[1]).dtype));  // the mask keeps all
    body = in(0);
  } else return false;
  L.emit(n, out, body);
  if (op == "Div" || op == "Mod") check_divisor(L, n, node.inputs[1], out, op == "Div" ? "division" : "modulo");
  if (op == "Pow") check_zero_power(L, n, node.inputs[0], node.inputs[1], out);
  return true;
}

}  // namespace lockstep::kir
