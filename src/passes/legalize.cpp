// Lowering for what a target lacks: exact rewrites where they exist, a clear Error otherwise.
#include "core/error.h"
#include "passes/schedule.h"

namespace lockstep {

using namespace kir;

namespace {

bool is_int_cast_to_f64(const ExprP& e) {
  return e->op == Op::Cast && e->type == DType::f64 && !dtype_is_float(e->args[0]->type) && e->args[0]->type != DType::boolean;
}

// cast_T(pow(cast_f64(a), cast_f64(b))) with integer a (of type T) and b: lowering's integer Pow.
bool is_integer_pow(const Expr& e) {
  if (e.op != Op::Cast || dtype_is_float(e.type)) return false;
  const ExprP& p = e.args[0];
  return p->op == Op::Binary && p->fn == Fn::Pow && p->type == DType::f64 && is_int_cast_to_f64(p->args[0]) &&
         is_int_cast_to_f64(p->args[1]) && p->args[0]->args[0]->type == e.type;
}

ExprP exact_integer_pow(const ExprP& e) {
  if (is_integer_pow(*e)) {
    const ExprP& p = e->args[0];
    return binary(Fn::IPow, exact_integer_pow(p->args[0]->args[0]), exact_integer_pow(p->args[1]->args[0]));
  }
  if (e->args.empty()) return e;
  std::vector<ExprP> args;
  bool changed = false;
  for (const ExprP& a : e->args) {
    args.push_back(exact_integer_pow(a));
    changed |= args.back() != a;
  }
  return changed ? with_args(*e, std::move(args)) : e;
}

[[noreturn]] void lacks(const Kernel& k, const TargetDesc& t, const char* type, const std::string& where) {
  throw Error("node '" + node_list(k) + "' " + where + " " + type + ", which target '" + t.name +
              "' does not have");
}

bool is_64bit_int(DType d) { return d == DType::i64 || d == DType::u64; }

}  // namespace

void legalize(Plan& p, const TargetDesc& t) {
  if (t.has_f64 && t.has_i64) return;
  for (Kernel& k : p.kernels) {
    if (!t.has_f64) {
      k.body = exact_integer_pow(k.body);
      if (p.buffers[k.out].dtype == DType::f64) lacks(k, t, "f64", "writes");
      if (uses_type(k.body, DType::f64)) lacks(k, t, "f64", "computes in");
    }
    // Index arithmetic is i64 in the IR and a printer's to spell; only values count here.
    if (!t.has_i64) {
      if (is_64bit_int(p.buffers[k.out].dtype)) lacks(k, t, "64-bit integers", "writes");
      for (int b : kernel_inputs(k))
        if (is_64bit_int(p.buffers[b].dtype)) lacks(k, t, "64-bit integers", "reads");
    }
  }
}

}  // namespace lockstep
