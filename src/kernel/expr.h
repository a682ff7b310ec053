// Kernel expressions: the value of one output element as a tree over loop variables, loads
// from buffers, arithmetic and at most one reduction. Every target prints the same trees.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"

namespace lockstep::kir {

enum class Op : uint8_t {
  Const,   // number: `f` for floating types, `i` otherwise
  Var,     // loop variable `i`: output dims first, then the reduction's dims
  Load,    // buffer `buf` of shape `shape` at multi-index args (or flat index args[0] if flat)
  Unary,   // fn(args[0])
  Binary,  // fn(args[0], args[1])
  Select,  // args[0] ? args[1] : args[2]; only the chosen side is evaluated
  Cast,    // args[0] converted to `type`
  Reduce,  // fold of args[0] with fn (Add, Dot or Max) over vars first_var.. (extents in `shape`)
};

enum class Fn : uint8_t {
  None,
  // unary
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Tanh,
  Sigmoid,
  Erf,
  Not,
  Floor,
  // binary
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Pow,
  Min,
  Max,
  Lt,
  Le,
  Eq,
  And,
  Or,
  // ONNX integer Div, one call so fusion never copies its operands: truncating, 0 for a zero
  // divisor (a check kernel reports those), MIN / -1 wraps to MIN; it never traps.
  IDiv,
  // Exact integer power in the base's type (wrapping like repeated multiplication); for a
  // negative exponent the truncated value (only |base| == 1 survives). Made by legalize.
  IPow,
  // ONNX Mod, one call like IDiv: PyMod takes the divisor's sign (Python's %, numpy's mod; a
  // zero takes the divisor's sign), IRem the dividend's (integer fmod = 1; floats use Mod, C's
  // fmod). An integer zero divisor gives 0 (a check kernel reports those), MIN % -1 gives 0.
  PyMod,
  IRem,
  // Reduce only: a sum whose term is the node's own product (Conv, MatMul, Gemm), stepped by a
  // fused multiply-add where the term is a float product. Fusion never makes one, so a product
  // fused in from another node is summed as before, and every pass limit gives the same bytes.
  Dot,
  // Integer values (not indices) added, subtracted, multiplied, negated: two's complement,
  // wrapping at the type's own width after every operation, fused or not (printed through
  // unsigned arithmetic: signed overflow is undefined in CUDA, OpenCL C and MSL, and an 8- or
  // 16-bit result must not be promoted past its width). Made by lowering (value_arith).
  WAdd,
  WSub,
  WMul,
  WNeg,
  // Bitwise ops on an integer's two's-complement bits; a shift by the type's width or more
  // gives 0 (C leaves it undefined).
  BitAnd,
  BitOr,
  BitXor,
  BitNot,
  Shl,
  Shr,
  // Round to the nearest integer, halves to even (C's rint in the default rounding mode).
  Round,
  // Draws of a random stream (docs/random.md): args are the element's counter and the stream's
  // key (int64 constant); the result is float32 or float64. Made by random_draw only.
  RandUniform,
  RandNormal,
};

struct Expr;
using ExprP = std::shared_ptr<const Expr>;

struct Expr {
  Op op = Op::Const;
  Fn fn = Fn::None;
  DType type = DType::f32;
  double f = 0;        // Const (floating)
  int64_t i = 0;       // Const (integer), Var index, Reduce first var
  int buf = -1;        // Load
  bool flat = false;   // Load: args[0] is a row-major flat index
  Shape shape;         // Load: the buffer's shape; Reduce: extents
  std::vector<ExprP> args;
  // Summary of the subtree, filled in by the constructors below (so the passes' questions
  // about a large fused body cost O(1), not a walk): what it contains, and which Vars.
  enum : uint8_t { kLoad = 1, kReduce = 2, kSelect = 4, kTranscendental = 8 };
  uint8_t has = 0;        // kLoad | kReduce | ... found anywhere in the subtree (itself included)
  uint64_t var_mask = 0;  // bit k: Var(k) occurs (k < 63); bit 63: some Var >= 63 occurs
  uint32_t depth = 1;     // levels of the subtree (a leaf is 1)
};

// Fusion never makes an expression deeper than this: the printers, the passes and the system
// compiler all recurse over it, and a 2,000-node chain fused into one kernel overflowed the
// stack under AddressSanitizer. The VITS graphs and ONNX conformance models stay below it.
inline constexpr uint32_t kMaxFusedDepth = 256;

// Constructors fold constants and trivial identities (x + 0, x * 1, 0 * i for ints).
ExprP cst(double v, DType t);
ExprP icst(int64_t v);  // int64 index constant
ExprP var(int index);
ExprP load(int buf, const Shape& shape, DType t, std::vector<ExprP> index);
ExprP load_flat(int buf, const Shape& shape, DType t, ExprP flat_index);
ExprP unary(Fn fn, ExprP a);
ExprP binary(Fn fn, ExprP a, ExprP b);
ExprP select(ExprP cond, ExprP a, ExprP b);
ExprP cast(ExprP a, DType to);
ExprP reduce(Fn fn, ExprP body, int first_var, const Shape& extents);
// A draw (Fn::RandUniform or Fn::RandNormal) of type t (f32 or f64) at `counter` of stream `key`.
ExprP random_draw(Fn fn, ExprP counter, int64_t key, DType t);

// Arithmetic on values of a node: Add/Sub/Mul/Neg for floats, WAdd/WSub/WMul/WNeg for integers.
ExprP value_arith(Fn fn, ExprP a, ExprP b = nullptr);

// Convenience for index and float arithmetic (integer values go through value_arith).
inline ExprP add(ExprP a, ExprP b) { return binary(Fn::Add, a, b); }
inline ExprP sub(ExprP a, ExprP b) { return binary(Fn::Sub, a, b); }
inline ExprP mul(ExprP a, ExprP b) { return binary(Fn::Mul, a, b); }
inline ExprP div(ExprP a, ExprP b) { return binary(Fn::Div, a, b); }
ExprP flatten_index(const std::vector<ExprP>& index, const Shape& shape);  // row-major
// Whether a float is NaN: the one value not equal to itself.
inline ExprP is_nan(ExprP a) { return unary(Fn::Not, binary(Fn::Eq, a, a)); }
// The node `e` over new args, through the constructors (so they fold and hash as usual).
ExprP with_args(const Expr& e, std::vector<ExprP> args);

// Replaces Var(k) by `vars[k]` for k < vars.size(); Var(k) for k >= vars.size() is shifted
// by `shift` (to move a producer's reduction vars clear of the consumer's).
ExprP substitute(const ExprP& e, const std::vector<ExprP>& vars, int shift);
// Replaces every Load of buffer `buf` with `fn(load)`.
ExprP replace_loads(const ExprP& e, int buf, const std::function<ExprP(const Expr&)>& fn);

bool uses_type(const ExprP& e, DType t);  // any node of the tree computes in t
bool is_transcendental(const ExprP& e);  // contains exp/log/tanh/... (costly to recompute)
const Expr* find_reduce(const ExprP& e);  // the Reduce node, or nullptr
int max_var(const ExprP& e);              // highest Var index used, -1 if none
void collect_loads(const ExprP& e, std::vector<const Expr*>& out);
// Structural equality, node by node (bitwise for float constants), shared subtrees at once.
// Gives up after visiting `budget` nodes and answers false (kept apart, which every caller
// takes as the safe answer): a fused index held as a DAG can be exponentially large as a tree.
bool same(const ExprP& a, const ExprP& b, int64_t budget = int64_t{1} << 16);

// Canonical text, also the basis of hashing: "mul(load(b3,[v0,v1]),2.5f32)".
std::string to_string(const ExprP& e);

}  // namespace lockstep::kir
