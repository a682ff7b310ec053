#include "kernel/expr.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace lockstep::kir {

namespace {

uint64_t var_bit(int64_t k) { return uint64_t{1} << (k < 63 ? k : 63); }

bool transcendental_here(const Expr& e) {
  if (e.op == Op::Unary && (e.fn == Fn::Exp || e.fn == Fn::Log || e.fn == Fn::Tanh || e.fn == Fn::Sigmoid ||
                            e.fn == Fn::Erf || e.fn == Fn::Sqrt))
    return true;
  if (e.op == Op::Binary && (e.fn == Fn::RandUniform || e.fn == Fn::RandNormal)) return true;  // ten Philox rounds
  return e.op == Op::Binary && (e.fn == Fn::Pow || e.fn == Fn::Div) && dtype_is_float(e.type);
}

// Every Expr is made here: the subtree summary is computed from the (already summarised) args.
ExprP make(Expr e) {
  uint8_t has = 0;
  uint64_t vars = 0;
  uint32_t depth = 0;
  for (const ExprP& a : e.args) {
    has |= a->has;
    vars |= a->var_mask;
    depth = std::max(depth, a->depth);
  }
  if (e.op == Op::Load) has |= Expr::kLoad;
  if (e.op == Op::Reduce) has |= Expr::kReduce;
  if (e.op == Op::Select) has |= Expr::kSelect;
  if (transcendental_here(e)) has |= Expr::kTranscendental;
  if (e.op == Op::Var) vars |= var_bit(e.i);
  e.has = has;
  e.var_mask = vars;
  e.depth = depth + 1;
  return std::make_shared<const Expr>(std::move(e));
}

bool is_const(const ExprP& e) { return e->op == Op::Const; }
bool is_int_const(const ExprP& e, int64_t v) {
  return e->op == Op::Const && !dtype_is_float(e->type) && e->i == v;
}

bool is_predicate(Fn fn) { return fn == Fn::Lt || fn == Fn::Le || fn == Fn::Eq || fn == Fn::And || fn == Fn::Or; }

// Integer folding for index arithmetic (the only arithmetic folded at build time: float
// folding would have to reproduce each target's rounding).
bool fold_int(Fn fn, int64_t a, int64_t b, int64_t& r) {
  switch (fn) {
    case Fn::Add: r = a + b; return true;
    case Fn::Sub: r = a - b; return true;
    case Fn::Mul: r = a * b; return true;
    case Fn::Div: if (b == 0) return false; r = a / b; return true;
    case Fn::Mod: if (b == 0) return false; r = a % b; return true;
    case Fn::IDiv: r = b == 0 ? 0 : b == -1 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a / b; return true;
    case Fn::Min: r = std::min(a, b); return true;
    case Fn::Max: r = std::max(a, b); return true;
    case Fn::Lt: r = a < b; return true;
    case Fn::Le: r = a <= b; return true;
    case Fn::Eq: r = a == b; return true;
    case Fn::And: r = a && b; return true;
    case Fn::Or: r = a || b; return true;
    default: return false;
  }
}

}  // namespace

ExprP cst(double v, DType t) {
  Expr e;
  e.op = Op::Const;
  e.type = t;
  if (dtype_is_float(t)) e.f = v;
  else e.i = static_cast<int64_t>(v);
  return make(e);
}

ExprP icst(int64_t v) {
  Expr e;
  e.op = Op::Const;
  e.type = DType::i64;
  e.i = v;
  return make(e);
}

ExprP var(int index) {
  Expr e;
  e.op = Op::Var;
  e.type = DType::i64;
  e.i = index;
  return make(e);
}

ExprP load(int buf, const Shape& shape, DType t, std::vector<ExprP> index) {
  Expr e;
  e.op = Op::Load;
  e.type = t;
  e.buf = buf;
  e.shape = shape;
  e.args = std::move(index);
  return make(e);
}

ExprP load_flat(int buf, const Shape& shape, DType t, ExprP flat_index) {
  Expr e;
  e.op = Op::Load;
  e.type = t;
  e.buf = buf;
  e.shape = shape;
  e.flat = true;
  e.args = {std::move(flat_index)};
  return make(e);
}

ExprP unary(Fn fn, ExprP a) {
  Expr e;
  e.op = Op::Unary;
  e.fn = fn;
  e.type = fn == Fn::Not ? DType::boolean : a->type;
  e.args = {std::move(a)};
  return make(e);
}

ExprP value_arith(Fn fn, ExprP a, ExprP b) {
  if (dtype_is_float(a->type) || a->type == DType::boolean)
    return b ? binary(fn, std::move(a), std::move(b)) : unary(fn, std::move(a));
  switch (fn) {
    case Fn::Add:
      return binary(Fn::WAdd, std::move(a), std::move(b));
    case Fn::Sub:
      return binary(Fn::WSub, std::move(a), std::move(b));
    case Fn::Mul:
      return binary(Fn::WMul, std::move(a), std::move(b));
    case Fn::Neg:
      return unary(Fn::WNeg, std::move(a));
    default:
      return b ? binary(fn, std::move(a), std::move(b)) : unary(fn, std::move(a));
  }
}

ExprP binary(Fn fn, ExprP a, ExprP b) {
  bool ints = !dtype_is_float(a->type) && !dtype_is_float(b->type);
  if (ints && is_const(a) && is_const(b)) {
    int64_t r;
    if (fold_int(fn, a->i, b->i, r)) return is_predicate(fn) ? cst(static_cast<double>(r), DType::boolean) : icst(r);
  }
  if (ints && a->type == DType::i64 && b->type == DType::i64) {
    if (fn == Fn::Add && is_int_const(b, 0)) return a;
    if (fn == Fn::Add && is_int_const(a, 0)) return b;
    if (fn == Fn::Sub && is_int_const(b, 0)) return a;
    if (fn == Fn::Mul && (is_int_const(a, 0) || is_int_const(b, 0))) return icst(0);
    if (fn == Fn::Mul && is_int_const(b, 1)) return a;
    if (fn == Fn::Mul && is_int_const(a, 1)) return b;
    if ((fn == Fn::Div || fn == Fn::IDiv) && is_int_const(b, 1)) return a;
    if (fn == Fn::Mod && is_int_const(b, 1)) return icst(0);
  }
  if (fn == Fn::And && is_const(a)) return a->i ? b : a;
  if (fn == Fn::And && is_const(b)) return b->i ? a : b;
  Expr e;
  e.op = Op::Binary;
  e.fn = fn;
  e.type = is_predicate(fn) ? DType::boolean : a->type;
  e.args = {std::move(a), std::move(b)};
  return make(e);
}

ExprP select(ExprP cond, ExprP a, ExprP b) {
  if (is_const(cond)) return cond->i ? a : b;
  Expr e;
  e.op = Op::Select;
  e.type = a->type;
  e.args = {std::move(cond), std::move(a), std::move(b)};
  return make(e);
}

ExprP cast(ExprP a, DType to) {
  if (a->type == to) return a;
  Expr e;
  e.op = Op::Cast;
  e.type = to;
  e.args = {std::move(a)};
  return make(e);
}

ExprP reduce(Fn fn, ExprP body, int first_var, const Shape& extents) {
  Expr e;
  e.op = Op::Reduce;
  e.fn = fn;
  e.type = body->type;
  e.i = first_var;
  e.shape = extents;
  e.args = {std::move(body)};
  return make(e);
}

ExprP random_draw(Fn fn, ExprP counter, int64_t key, DType t) {
  Expr e;
  e.op = Op::Binary;
  e.fn = fn;
  e.type = t;
  e.args = {std::move(counter), icst(key)};
  return make(e);
}

ExprP flatten_index(const std::vector<ExprP>& index, const Shape& shape) {
  ExprP flat = icst(0);
  for (size_t k = 0; k < index.size(); ++k) flat = add(mul(flat, icst(shape[k])), index[k]);
  return flat;
}

ExprP with_args(const Expr& e, std::vector<ExprP> args) {
  switch (e.op) {
    case Op::Load: return e.flat ? load_flat(e.buf, e.shape, e.type, args[0]) : load(e.buf, e.shape, e.type, std::move(args));
    case Op::Unary: return unary(e.fn, args[0]);
    case Op::Binary:
      if (e.fn == Fn::RandUniform || e.fn == Fn::RandNormal) return random_draw(e.fn, args[0], args[1]->i, e.type);
      return binary(e.fn, args[0], args[1]);
    case Op::Select: return select(args[0], args[1], args[2]);
    case Op::Cast: return cast(args[0], e.type);
    default: {
      Expr c = e;
      c.args = std::move(args);
      return make(c);
    }
  }
}

// `changing`: the var bits whose Var is replaced by something else; a subtree using none of
// them (and holding no Reduce to renumber) is returned as it is, shared, not rebuilt: the
// constructors would make the same tree again from the same args.
static ExprP substitute_in(const ExprP& e, const std::vector<ExprP>& vars, int shift, uint64_t changing) {
  if (!(e->var_mask & changing) && !(shift != 0 && (e->has & Expr::kReduce))) return e;
  if (e->op == Op::Var) {
    if (e->i < static_cast<int64_t>(vars.size())) return vars[e->i];
    return var(static_cast<int>(e->i) + shift);
  }
  if (e->op == Op::Const) return e;
  std::vector<ExprP> args;
  for (const ExprP& a : e->args) args.push_back(substitute_in(a, vars, shift, changing));
  if (e->op == Op::Reduce) {
    Expr c = *e;
    c.i += shift;
    c.args = std::move(args);
    return make(c);
  }
  return with_args(*e, std::move(args));
}

ExprP substitute(const ExprP& e, const std::vector<ExprP>& vars, int shift) {
  uint64_t changing = 0;
  for (size_t k = 0; k < vars.size(); ++k)
    if (!(vars[k]->op == Op::Var && vars[k]->i == static_cast<int64_t>(k))) changing |= var_bit(static_cast<int64_t>(k));
  if (shift != 0) {
    for (size_t k = vars.size(); k < 63; ++k) changing |= var_bit(static_cast<int64_t>(k));
    changing |= var_bit(63);
  }
  return substitute_in(e, vars, shift, changing);
}

ExprP replace_loads(const ExprP& e, int buf, const std::function<ExprP(const Expr&)>& fn) {
  if (!(e->has & Expr::kLoad)) return e;  // nothing to replace: the same tree
  std::vector<ExprP> args;
  for (const ExprP& a : e->args) args.push_back(replace_loads(a, buf, fn));
  if (e->op == Op::Load && e->buf == buf) {
    Expr c = *e;
    c.args = std::move(args);
    return fn(c);
  }
  return with_args(*e, std::move(args));
}

bool uses_type(const ExprP& e, DType t) {
  if (e->type == t) return true;
  for (const ExprP& a : e->args)
    if (uses_type(a, t)) return true;
  return false;
}

bool is_transcendental(const ExprP& e) { return e->has & Expr::kTranscendental; }

const Expr* find_reduce(const ExprP& e) {
  if (!(e->has & Expr::kReduce)) return nullptr;
  if (e->op == Op::Reduce) return e.get();
  for (const ExprP& a : e->args)
    if (const Expr* r = find_reduce(a)) return r;
  return nullptr;
}

int max_var(const ExprP& e) {
  int m = e->op == Op::Var ? static_cast<int>(e->i) : -1;
  if (e->op == Op::Reduce) m = std::max(m, static_cast<int>(e->i + e->shape.size()) - 1);
  for (const ExprP& a : e->args) m = std::max(m, max_var(a));
  return m;
}

void collect_loads(const ExprP& e, std::vector<const Expr*>& out) {
  if (e->op == Op::Load) out.push_back(e.get());
  for (const ExprP& a : e->args) collect_loads(a, out);
}

namespace {

bool same_within(const Expr& a, const Expr& b, int64_t& budget) {
  if (&a == &b) return true;
  if (--budget < 0 || a.op != b.op || a.fn != b.fn || a.type != b.type || a.i != b.i ||
      std::memcmp(&a.f, &b.f, sizeof a.f) != 0 || a.buf != b.buf || a.flat != b.flat || a.shape != b.shape ||
      a.depth != b.depth || a.var_mask != b.var_mask || a.args.size() != b.args.size())
    return false;
  for (size_t k = 0; k < a.args.size(); ++k)
    if (!same_within(*a.args[k], *b.args[k], budget)) return false;
  return true;
}

}  // namespace

bool same(const ExprP& a, const ExprP& b, int64_t budget) { return same_within(*a, *b, budget); }

static const char* fn_name(Fn fn) {
  static const char* names[] = {"none",   "neg",   "abs",  "exp",   "log",   "sqrt", "tanh",   "sigmoid", "erf",
                                "not",    "floor", "add",  "sub",   "mul",   "div",  "mod",    "pow",     "min",
                                "max",    "lt",    "le",   "eq",    "and",   "or",   "idiv",   "ipow",    "pymod",
                                "irem",   "dot",   "wadd", "wsub",  "wmul",  "wneg", "bitand", "bitor",   "bitxor",
                                "bitnot", "shl",   "shr",  "round", "randu", "randn"};
  return names[static_cast<int>(fn)];
}

std::string to_string(const ExprP& e) {
  char buf[64];
  switch (e->op) {
    case Op::Const:
      if (dtype_is_float(e->type)) std::snprintf(buf, sizeof buf, "%.17g%s", e->f, dtype_name(e->type));
      else std::snprintf(buf, sizeof buf, "%lld%s", static_cast<long long>(e->i), e->type == DType::i64 ? "" : dtype_name(e->type));
      return buf;
    case Op::Var: return "v" + std::to_string(e->i);
    default: break;
  }
  std::string s;
  switch (e->op) {
    case Op::Load: s = std::string(e->flat ? "loadflat(b" : "load(b") + std::to_string(e->buf) + shape_str(e->shape); break;
    case Op::Unary:
    case Op::Binary:
      s = std::string(fn_name(e->fn)) + (e->fn >= Fn::RandUniform ? std::string("_") + dtype_name(e->type) : "") + "(";
      break;
    case Op::Select: s = "select("; break;
    case Op::Cast: s = std::string("cast_") + dtype_name(e->type) + "("; break;
    case Op::Reduce: s = std::string("reduce_") + fn_name(e->fn) + "(v" + std::to_string(e->i) + shape_str(e->shape); break;
    default: break;
  }
  for (size_t k = 0; k < e->args.size(); ++k) s += (k || e->op == Op::Load || e->op == Op::Reduce ? "," : "") + to_string(e->args[k]);
  return s + ")";
}

}  // namespace lockstep::kir
