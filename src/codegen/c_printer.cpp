#include "codegen/c_printer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "core/error.h"

namespace lockstep::codegen {

using namespace kir;

std::string CPrinter::compute_type(DType t) const {
  switch (t) {
    case DType::f16: case DType::bf16: case DType::f32: return "float";
    case DType::boolean: return "bool";
    default: return storage_type(t);
  }
}

std::string CPrinter::storage_type(DType t) const {
  switch (t) {
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::f16: case DType::bf16: return "uint16_t";
    case DType::i8: return "int8_t";
    case DType::u8: case DType::boolean: return "uint8_t";
    case DType::i16: return "int16_t";
    case DType::u16: return "uint16_t";
    case DType::i32: return "int32_t";
    case DType::u32: return "uint32_t";
    case DType::i64: return "int64_t";
    case DType::u64: return "uint64_t";
    default: throw InternalError(std::string("internal: code generation has no type for ") + dtype_name(t));
  }
}

std::string CPrinter::helper(const std::string& base, DType t) const { return base + "_" + compute_type(t); }

std::string CPrinter::math(const char* base, DType t) const {
  return t == DType::f64 ? base : std::string(base) + d_.math_suffix;
}

// Float compute (f32, and f16/bf16 computed in float) calls lockstep's own library, the same
// algorithm on every target (codegen/math_library.h); f64 keeps the target's double functions.
std::string CPrinter::transcendental(const char* base, DType t) const {
  return t == DType::f64 ? std::string(base) : "ls_" + std::string(base);
}

// Floats print as hex literals: exact, and identical on every target.
std::string CPrinter::literal(const Expr& e) const {
  char buf[64];
  if (e.type == DType::f64) {
    std::string d = "(" + compute_type(e.type) + ")";
    if (e.f != e.f) return "(" + d + "NAN)";
    if (std::isinf(e.f)) return e.f > 0 ? "(" + d + "INFINITY)" : "(-" + d + "INFINITY)";
    std::snprintf(buf, sizeof buf, "%a", e.f);
    return buf;
  }
  if (dtype_is_float(e.type)) {
    float f = static_cast<float>(e.f);
    if (f != f) return "NAN";
    if (f == INFINITY) return "INFINITY";
    if (f == -INFINITY) return "(-INFINITY)";
    std::snprintf(buf, sizeof buf, "%af", static_cast<double>(f));
    return buf;
  }
  if (e.type == DType::boolean) return e.i ? "true" : "false";
  std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(e.i));
  return "((" + compute_type(e.type) + ")" + buf + d_.int_suffix + ")";
}

std::string CPrinter::index(const Expr& ld) const {
  if (ld.flat) return expr(ld.args[0]);
  std::vector<int64_t> strides = shape_strides(ld.shape);
  std::string s;
  for (size_t k = 0; k < ld.args.size(); ++k) {
    if (ld.shape[k] == 1) continue;  // a size-1 dim is always index 0
    std::string term = expr(ld.args[k]);
    if (strides[k] != 1) term = term + "*" + std::to_string(strides[k]);
    s += (s.empty() ? "" : " + ") + term;
  }
  return s.empty() ? "0" : s;
}

CPrinter::KernelScope::KernelScope(const CPrinter& p, const Kernel& k) : p_(p) {
  p_.symbols_ = k.symbols;
  p_.tile_ = {};
  p_.staged_ = {};
}

CPrinter::KernelScope::~KernelScope() {
  p_.symbols_ = -1;
  p_.tile_ = {};
  p_.staged_ = {};
}

std::string CPrinter::read_symbols(const Plan& p, const Kernel& k) const {
  if (k.symbols < 0) return "";
  std::string s;
  for (size_t j = 0; j < p.symbols.size(); ++j)
    s += "  const int64_t ls_s" + std::to_string(j) + " = " + buf_name(k.symbols) + "[" + std::to_string(j) +
         "]; (void)ls_s" + std::to_string(j) + ";  // " + comment_text(p.symbols[j]) + "\n";
  return s;
}

std::string CPrinter::load_value(const Expr& e) const {
  if (e.buf >= 0 && e.buf == symbols_ && e.flat && e.args[0]->op == Op::Const) return "ls_s" + std::to_string(e.args[0]->i);
  if (e.buf >= 0 && e.buf == staged_.buf) return staged_.text;
  std::string raw = buf_name(e.buf) + "[" + index(e) + "]";
  switch (e.type) {
    case DType::f16: return "ls_h2f(" + raw + ")";
    case DType::bf16: return "ls_bf2f(" + raw + ")";
    case DType::boolean: return "(" + raw + " != 0)";
    default: return raw;
  }
}

namespace {

const char* infix(Fn fn) {
  switch (fn) {
    case Fn::Add: return "+";
    case Fn::Sub: return "-";
    case Fn::Mul: return "*";
    case Fn::Div: return "/";
    case Fn::Lt: return "<";
    case Fn::Le: return "<=";
    case Fn::Eq: return "==";
    case Fn::And: return "&&";
    case Fn::Or: return "||";
    default: return nullptr;
  }
}

constexpr size_t kShownExpr = 80;  // of an unprintable expression, in the error

}  // namespace

// The unsigned type integer values of `t` wrap in: 64 bits for 64-bit types, else 32 (a narrower
// one would be promoted to int, whose overflow is undefined).
static const char* wrapping_type(DType t) { return dtype_size(t) == 8 ? "uint64_t" : "uint32_t"; }

std::string CPrinter::wrapped(DType t, const std::string& expr) const {
  return "((" + compute_type(t) + ")(" + expr + "))";
}

std::string CPrinter::unary(const Expr& e, const std::string& a) const {
  bool fl = dtype_is_float(e.type);
  std::string u = wrapping_type(e.type);
  switch (e.fn) {
    case Fn::WNeg:
      return wrapped(e.type, "(" + u + ")0 - (" + u + ")(" + a + ")");
    case Fn::BitNot:
      return wrapped(e.type, "~(" + u + ")(" + a + ")");
    case Fn::Neg: return "(-" + a + ")";
    case Fn::Not: return "(!" + a + ")";
    case Fn::Abs: return fl ? math("fabs", e.type) + "(" + a + ")" : helper("ls_iabs", e.type) + "(" + a + ")";
    case Fn::Exp: return transcendental("exp", e.type) + "(" + a + ")";
    case Fn::Log: return transcendental("log", e.type) + "(" + a + ")";
    case Fn::Sqrt: return math("sqrt", e.type) + "(" + a + ")";
    case Fn::Tanh: return transcendental("tanh", e.type) + "(" + a + ")";
    case Fn::Erf: return transcendental("erf", e.type) + "(" + a + ")";
    case Fn::Floor: return math("floor", e.type) + "(" + a + ")";
    case Fn::Round:
      return math("rint", e.type) + "(" + a + ")";
    case Fn::Sigmoid: return (e.type == DType::f64 ? "ls_sigmoid_d(" : "ls_sigmoid(") + a + ")";
    default: return "";
  }
}

std::string CPrinter::binary(const Expr& e, const std::string& a, const std::string& b) const {
  if (const char* op = infix(e.fn)) return "(" + a + " " + op + " " + b + ")";
  bool fl = dtype_is_float(e.type);
  std::string u = wrapping_type(e.type), ua = "(" + u + ")(" + a + ")", ub = "(" + u + ")(" + b + ")";
  switch (e.fn) {
    case Fn::WAdd:
      return wrapped(e.type, ua + " + " + ub);
    case Fn::WSub:
      return wrapped(e.type, ua + " - " + ub);
    case Fn::WMul:
      return wrapped(e.type, ua + " * " + ub);
    case Fn::BitAnd:
      return wrapped(e.type, ua + " & " + ub);
    case Fn::BitOr:
      return wrapped(e.type, ua + " | " + ub);
    case Fn::BitXor:
      return wrapped(e.type, ua + " ^ " + ub);
    case Fn::Shl:
      return helper("ls_shl", e.type) + "(" + a + ", " + b + ")";
    case Fn::Shr:
      return helper("ls_shr", e.type) + "(" + a + ", " + b + ")";
    case Fn::Mod: return fl ? math("fmod", e.type) + "(" + a + ", " + b + ")" : "(" + a + " % " + b + ")";
    case Fn::Pow: return transcendental("pow", e.type) + "(" + a + ", " + b + ")";
    case Fn::Min:
      return helper(fl ? "ls_min_nan" : "ls_min", e.type) + "(" + a + ", " + b + ")";  // values: NaN wins
    case Fn::Max:
      return helper(fl ? "ls_max_nan" : "ls_max", e.type) + "(" + a + ", " + b + ")";
    case Fn::IDiv: return helper("ls_idiv", e.type) + "(" + a + ", " + b + ")";
    case Fn::PyMod:
      return helper("ls_pymod", e.type) + "(" + a + ", " + b + ")";
    case Fn::IRem:
      return helper("ls_irem", e.type) + "(" + a + ", " + b + ")";
    case Fn::IPow: return helper("ls_ipow", e.type) + "_" + compute_type(e.args[1]->type) + "(" + a + ", " + b + ")";
    case Fn::RandUniform:
      return (e.type == DType::f64 ? "ls_rand_uniform_d(" : "ls_rand_uniform(") + a + ", " + b + ")";
    case Fn::RandNormal:
      return (e.type == DType::f64 ? "ls_rand_normal_d(" : "ls_rand_normal(") + a + ", " + b + ")";
    default: return "";
  }
}

std::string CPrinter::tile_part(const Expr& e) const {
  if (tile_.var < 0 || (e.fn != Fn::Div && e.fn != Fn::Mod) || e.args.size() != 2) return "";
  const Expr &v = *e.args[0], &r = *e.args[1];
  if (v.op != Op::Var || v.i != tile_.var || r.op != Op::Const || r.i != tile_.rows) return "";
  return e.fn == Fn::Div ? tile_.block : "((int64_t)" + tile_.lane + ")";
}

// A select whose else is a select prints as one chain, "(c1 ? a : c2 ? b : z)": the nesting of
// brackets stays flat however many inputs a Concat has (OpenCL C stops at 256 levels).
std::string CPrinter::select_chain(const ExprP& ep, const std::string& acc) const {
  std::string s = "(";
  const ExprP* x = &ep;
  for (; (*x)->op == Op::Select; x = &(*x)->args[2])
    s += expr((*x)->args[0], acc) + " ? " + expr((*x)->args[1], acc) + " : ";
  return s + expr(*x, acc) + ")";
}

std::string CPrinter::expr(const ExprP& ep, const std::string& acc) const {
  const Expr& e = *ep;
  auto a = [&](size_t k) { return expr(e.args[k], acc); };
  std::string s;
  switch (e.op) {
    case Op::Const: return literal(e);
    case Op::Var: return "v" + std::to_string(e.i);
    case Op::Load: return load_value(e);
    case Op::Reduce: return acc;  // the caller accumulated it
    case Op::Select:
      return select_chain(ep, acc);
    case Op::Cast:
      if (e.type == DType::f16) return "ls_round_h(" + a(0) + ")";
      if (e.type == DType::bf16) return "ls_round_bf(" + a(0) + ")";
      if (e.type == DType::boolean) return "(" + a(0) + " != 0)";
      if (dtype_is_float(e.args[0]->type) && !dtype_is_float(e.type))  // defined for NaN and out of range
        return "ls_f2i_" + compute_type(e.type) + "_" + compute_type(e.args[0]->type) + "(" + a(0) + ")";
      return "((" + compute_type(e.type) + ")(" + a(0) + "))";
    case Op::Unary: s = e.args.size() == 1 ? unary(e, a(0)) : ""; break;
    case Op::Binary:
      s = tile_part(e);
      if (s.empty() && e.args.size() == 2) s = binary(e, a(0), a(1));
      break;
  }
  if (s.empty()) throw InternalError("internal: code generation cannot print the expression " + to_string(ep).substr(0, kShownExpr));
  // A half or bfloat16 result is rounded to its type after every operation, fused or not, as an
  // engine computing in that type would (so a pass limit changes no f16 result).
  if (e.type == DType::f16) return "ls_round_h(" + s + ")";
  if (e.type == DType::bf16) return "ls_round_bf(" + s + ")";
  return s;
}

std::string CPrinter::store(const Plan& p, const Kernel& k, const std::string& flat, const std::string& value) const {
  const Buffer& b = p.buffers[k.out];
  std::string v;
  switch (b.dtype) {  // one NaN (positive, quiet) for every float type on every target
    case DType::f16:
      v = "ls_canon_h(ls_f2h(" + value + "))";
      break;
    case DType::bf16: v = "ls_f2bf(" + value + ")"; break;
    case DType::f32:
      v = "ls_canon_f(" + value + ")";
      break;
    case DType::f64:
      v = "ls_canon_d(" + value + ")";
      break;
    default: v = "(" + storage_type(b.dtype) + ")(" + value + ")";
  }
  return buf_name(k.out) + "[" + flat + "] = " + v + ";";
}

std::string CPrinter::size(const ExprP& e) const {
  return e->op == Op::Const ? std::to_string(e->i) : expr(e);
}

std::string CPrinter::dim(const Plan& p, int b, size_t d) const { return size(dim_expr(p, b, d)); }

std::string CPrinter::out_index(const Plan& p, int b) const {
  const Shape& s = p.buffers[b].shape;
  if (!p.buffers[b].dims.empty()) return expr(flat_index(p, b, out_vars(s.size())));
  std::vector<int64_t> strides = shape_strides(s);
  std::string r;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == 1) continue;
    std::string term = "v" + std::to_string(k);
    if (strides[k] != 1) term += "*" + std::to_string(strides[k]);
    r += (r.empty() ? "" : " + ") + term;
  }
  return r.empty() ? "0" : r;
}

std::string comment_text(std::string_view user) {
  static const char* hex = "0123456789ABCDEF";
  std::string s;
  for (size_t i = 0; i < user.size(); ++i) {
    if (s.size() >= kCommentTextMax) return s + "...(" + std::to_string(user.size()) + " bytes)";
    unsigned char c = static_cast<unsigned char>(user[i]);
    // Ordinary name characters stay ('/' too: with '*' escaped no comment can open or close);
    // what could end the comment, splice a line or form a trigraph (newlines, '\\', '?'), quotes,
    // braces and anything not plain ASCII are escaped.
    bool inert = std::isalnum(c) || std::strchr(" _-.:#[](),;=+<>@!^~|&$/", c);
    if (inert && c != 0) s += static_cast<char>(c);
    else s += std::string("%") + hex[c >> 4] + hex[c & 15];
  }
  return s;
}

std::string CPrinter::buf_name(int b) const {
  auto at = std::find(params_.begin(), params_.end(), b);
  if (at != params_.end()) return "p" + std::to_string(at - params_.begin());
  return "b" + std::to_string(b);
}

std::vector<int> kernel_params(const Kernel& k) {
  std::vector<int> ps = {k.out};
  for (int b : kernel_inputs(k)) ps.push_back(b);
  return ps;
}

std::vector<std::string> CPrinter::by_position(const Plan& p, std::vector<size_t>& first,
                                               const std::function<std::string(const Kernel&)>& print) const {
  std::map<std::string, size_t> seen;
  std::vector<std::string> texts(p.kernels.size());
  first.assign(p.kernels.size(), 0);
  try {
    for (size_t k = 0; k < p.kernels.size(); ++k) {
      set_param_names(kernel_params(p.kernels[k]));
      texts[k] = print(p.kernels[k]);
      first[k] = seen.emplace(texts[k], k).first->second;
    }
  } catch (...) {
    set_param_names({});  // later printing names buffers by number again
    throw;
  }
  set_param_names({});
  return texts;
}

std::string CPrinter::comment(const Kernel& k, const std::string& note) const {
  std::string s = "// " + k.name + (note.empty() ? "" : " (" + note + ")") + ": ";
  for (size_t i = 0; i < k.nodes.size(); ++i) s += (i ? ", " : "") + comment_text(k.nodes[i]);
  return s + "\n";
}

// A node's own sum of products whose term is a product of two operands of its float type.
static bool fusable_product(const Expr& red) {
  const Expr& m = *red.args[0];
  bool wide = red.type == DType::f32 || red.type == DType::f64;
  return wide && red.fn == Fn::Dot && m.op == Op::Binary && m.fn == Fn::Mul && m.type == red.type &&
         m.args[0]->type == red.type && m.args[1]->type == red.type;
}

// A Conv's, MatMul's or Gemm's sum of products steps by one fused multiply-add: IEEE's fma
// rounds once, exactly, on every target (C, CUDA, OpenCL C and MSL alike), so the bits stay the
// same everywhere, and the sum runs at the hardware's fused rate. Other Dot terms (a masked
// transposed conv's phases) and plain sums add each term rounded on its own; Max propagates NaN.
std::string CPrinter::reduce_step(const Expr& red, const std::string& acc) const {
  std::string at = compute_type(red.type);
  if (red.fn == Fn::Max || red.fn == Fn::Min)
    return acc + " = " + helper(red.fn == Fn::Max ? "ls_max_nan" : "ls_min_nan", red.type) + "(" + acc + ", (" + at +
           ")(" + expr(red.args[0]) + "));";
  if (fusable_product(red)) {
    const Expr& m = *red.args[0];
    return acc + " = " + math("fma", red.type) + "(" + expr(m.args[0]) + ", " + expr(m.args[1]) + ", " + acc + ");";
  }
  const char* op = red.fn == Fn::Mul ? " * " : " + ";
  if (!dtype_is_float(red.type) && red.type != DType::boolean) {  // integer folds wrap at every step
    std::string u = wrapping_type(red.type);
    return acc + " = " + wrapped(red.type, "(" + u + ")" + acc + op + "(" + u + ")(" + expr(red.args[0]) + ")") + ";";
  }
  return acc + " = " + acc + op + "(" + at + ")(" + expr(red.args[0]) + ");";
}

std::string CPrinter::reduce_init(const Expr& red) const {
  bool fl = dtype_is_float(red.type);
  if (red.fn == Fn::Max) return fl ? "(-INFINITY)" : int_limit(red.type, false);
  if (red.fn == Fn::Min) return fl ? "INFINITY" : int_limit(red.type, true);
  return red.fn == Fn::Mul ? "1" : "0";
}

// The least or greatest value of an integer type, spelled without a literal that overflows.
std::string CPrinter::int_limit(DType t, bool greatest) const {
  std::string ct = "(" + compute_type(t) + ")";
  if (dtype_is_unsigned_int(t)) return greatest ? "(" + ct + "~" + ct + "0)" : "(" + ct + "0)";
  std::string mx = std::to_string((uint64_t{1} << (8 * dtype_size(t) - 1)) - 1) + d_.int_suffix;
  return greatest ? "(" + ct + mx + ")" : "(" + ct + "(-" + mx + " - 1))";
}

std::string CPrinter::loop(const std::string& v, int64_t extent) { return loop(v, std::to_string(extent)); }

std::string CPrinter::loop(const std::string& v, const std::string& extent) {
  return "for (int64_t " + v + " = 0; " + v + " < " + extent + "; ++" + v + ")\n";
}

std::string CPrinter::times(const std::string& a, int64_t c) {
  return c == 0 ? "0" : c == 1 ? a : a + " * " + std::to_string(c);
}

std::string CPrinter::over(const std::string& a, const std::string& d) { return d == "1" ? a : a + " / (" + d + ")"; }

std::string CPrinter::mod(const std::string& a, int64_t c) { return c == 1 ? "0" : a + " % " + std::to_string(c); }

std::string CPrinter::indented(const std::string& code) {
  std::istringstream in(code);
  std::string out;
  int depth = 0;
  for (std::string line; std::getline(in, line);) {
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) {
      out += "\n";
      continue;
    }
    line.erase(0, first);
    std::string code_part = line.substr(0, line.find("//"));
    int opens = 0, closes = 0, lead = 0;
    for (char c : code_part) opens += c == '{', closes += c == '}';
    while (lead < static_cast<int>(code_part.size()) && code_part[lead] == '}') ++lead;
    out += std::string(2 * std::max(depth - lead, 0), ' ') + line + "\n";
    depth = std::max(depth + opens - closes, 0);
  }
  return out;
}

std::string CPrinter::buffer_bytes_init(const Plan& p) {
  std::string s = "{";
  for (size_t b = 0; b < p.buffers.size(); ++b)  // -1: a size that depends on the symbols
    s += (b ? ", " : "") + std::to_string(p.buffers[b].module_bytes());
  return s + (p.buffers.empty() ? "0}" : "}");
}

}  // namespace lockstep::codegen
