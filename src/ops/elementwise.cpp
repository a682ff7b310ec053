// Elementwise arithmetic, activations and comparisons: one broadcasting binary helper, one
// unary helper, and a table that says per op what it computes and which dtypes it accepts.
#include <cmath>

#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

namespace {

// Dtype histories from the ONNX spec (lockstep dtypes only; string and complex are refused
// at import).
constexpr TypeSet kArith7 = kFloat | types({DType::i32, DType::i64, DType::u32, DType::u64});
const TypeHistory kArithTypes = {{7, kArith7}, {13, kArith7 | kBf16}, {14, kNumeric}};
const TypeHistory kFloatTypes = {{7, kFloat}, {13, kFloat | kBf16}};
const TypeHistory kNegTypes = {{7, kFloat | kSigned}, {13, kFloat | kBf16 | kSigned}};
const TypeHistory kAbsTypes = {{7, kNumeric & ~kBf16}, {13, kNumeric}};
const TypeHistory kReluTypes = {{7, kFloat}, {13, kFloat | kBf16}, {14, kFloat | kBf16 | kSigned}};
const TypeHistory kLeakyReluTypes = {{7, kFloat}, {16, kFloat | kBf16}};
const TypeHistory kErfTypes = {{9, kNumeric & ~kBf16}, {13, kNumeric}};
const TypeHistory kEqualTypes = {{7, kBool | types({DType::i32, DType::i64})},
                                 {11, kBool | (kNumeric & ~kBf16)},
                                 {13, kBool | kNumeric}};
const TypeHistory kOrderTypes = {{7, kFloat}, {9, kNumeric & ~kBf16}, {13, kNumeric}};
const TypeHistory kOrderOrEqualTypes = {{12, kNumeric & ~kBf16}, {16, kNumeric}};
const TypeHistory kLogicTypes = {{7, kBool}};
const TypeHistory kNotTypes = {{1, kBool}};
const TypeHistory kRoundingTypes = {{6, kFloat}, {13, kFloat | kBf16}};
const TypeHistory kModTypes = {{10, kNumeric & ~kBf16}, {13, kNumeric}};
const TypeHistory kBitwiseTypes = {{18, kSigned | kUnsigned}};
const TypeHistory kShiftTypes = {{11, kUnsigned}, {28, kSigned | kUnsigned}};
const TypeHistory kRoundTypes = {{11, kFloat}, {22, kFloat | kBf16}};
const TypeHistory kIsNanTypes = {{9, kFloat}, {13, kFloat | kBf16}};
const TypeHistory kIsInfTypes = {{10, types({DType::f32, DType::f64})}, {20, kFloat | kBf16}};
const TypeHistory kSignTypes = {{9, kNumeric & ~kBf16}, {13, kNumeric}};

void infer_unary(InferCtx& c, TypeHistory h) {
  require_types(c, 0, h);
  c.out[0] = c.input(0);
}

// Both inputs of one dtype, broadcast together; comparisons answer bool.
void infer_binary(InferCtx& c, TypeHistory h, bool to_bool) {
  require_types(c, 0, h);
  require_types(c, 1, h);
  c.require_same_dtype(0, 1);
  c.out[0] = infer_broadcast(c, {0, 1}, to_bool ? DType::boolean : c.input(0).dtype);
}

// out = op(a, b) over the broadcast of inputs 0 and 1. Floats go through fop in double;
// integers through iop in exact 64-bit arithmetic, wrapped to the dtype on store. uint64
// values are kept as their bit pattern in int64; iop receives the dtype to tell them apart.
template <class FOp, class IOp>
void ref_binary(RefCtx& c, bool to_bool, FOp fop, IOp iop) {
  const RefTensor& a = c.input(0);
  const RefTensor& b = c.input(1);
  RefTensor out(to_bool ? DType::boolean : a.dtype, ref_broadcast(c, {0, 1}));
  for_each_broadcast(out.shape, {a.shape, b.shape}, [&](int64_t k, const int64_t* ix) {
    if (a.is_float()) out.set(k, fop(a.f[ix[0]], b.f[ix[1]]));
    else out.set_int(k, iop(a.i[ix[0]], b.i[ix[1]], a.dtype));
  });
  c.out[0] = std::move(out);
}

template <class FOp, class IOp>
void ref_unary(RefCtx& c, FOp fop, IOp iop) {
  const RefTensor& x = c.input(0);
  RefTensor out(x.dtype, x.shape);
  for (int64_t k = 0; k < x.numel(); ++k) {
    if (x.is_float()) out.f[k] = fop(x.f[k]);
    else out.set_int(k, iop(x.i[k], x.dtype));
  }
  c.out[0] = std::move(out);
}

// Ops defined only on floating dtypes (infer has refused the others).
template <class FOp>
void ref_float_unary(RefCtx& c, FOp fop) {
  if (!c.input(0).is_float()) c.fail(std::string("internal: float-only op given ") + dtype_name(c.input(0).dtype));
  ref_unary(c, fop, [](int64_t x, DType) { return x; });
}

// Integer arithmetic through uint64 so overflow wraps (defined) instead of being UB.
uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }
int64_t s(uint64_t v) { return static_cast<int64_t>(v); }
int64_t int_add(int64_t a, int64_t b, DType) { return s(u(a) + u(b)); }
int64_t int_sub(int64_t a, int64_t b, DType) { return s(u(a) - u(b)); }
int64_t int_mul(int64_t a, int64_t b, DType) { return s(u(a) * u(b)); }

// C semantics: truncation toward zero. INT64_MIN / -1 wraps instead of trapping.
void ref_div(RefCtx& c) {
  ref_binary(c, false, [](double a, double b) { return a / b; },
             [&](int64_t a, int64_t b, DType t) -> int64_t {
               if (b == 0) c.fail("integer division by zero");
               if (t == DType::u64) return s(u(a) / u(b));
               if (b == -1) return s(0 - u(a));
               return a / b;
             });
}

// fmod = 1: C's fmod (the sign of the dividend); fmod = 0: the sign of the divisor, as Python's
// % and numpy's mod (a float zero takes the divisor's sign). MIN % -1 is 0 instead of trapping.
double py_mod(double a, double b) {
  double r = std::fmod(a, b);
  if (r == 0) return std::copysign(0.0, b);
  return (r < 0) != (b < 0) ? r + b : r;
}

void ref_mod(RefCtx& c) {
  bool fmod = c.attr_int("fmod", 0) != 0;
  ref_binary(
      c, false, [fmod](double a, double b) { return fmod ? std::fmod(a, b) : py_mod(a, b); },
      [&](int64_t a, int64_t b, DType t) -> int64_t {
        if (b == 0) c.fail("integer modulo by zero");
        if (t == DType::u64) return s(u(a) % u(b));
        if (b == -1) return 0;
        int64_t r = a % b;
        return !fmod && r != 0 && (r < 0) != (b < 0) ? r + b : r;
      });
}

void infer_mod(InferCtx& c) {
  infer_binary(c, kModTypes, false);
  int64_t fmod = c.attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1) c.fail("attribute 'fmod' must be 0 or 1, got " + std::to_string(fmod));
}

// Bitwise ops see an integer's two's-complement bits (signed values are kept sign-extended and
// unsigned ones zero-extended, so the bits of the dtype are those of the int64).
void ref_bitwise(RefCtx& c, int64_t (*op)(int64_t, int64_t)) {
  ref_binary(
      c, false, [](double, double) { return 0.0; }, [op](int64_t a, int64_t b, DType) { return op(a, b); });
}

// BitShift; a shift by the dtype's width or more (or, signed, a negative one) gives 0 to the
// left and the sign's fill to the right (an arithmetic shift, as opset 28 says for signed types).
void ref_bit_shift(RefCtx& c) {
  bool left = c.attr_string("direction", "") == "LEFT";
  ref_binary(
      c, false, [](double, double) { return 0.0; },
      [left](int64_t a, int64_t b, DType t) -> int64_t {
        bool past = u(b) >= 8 * static_cast<uint64_t>(dtype_size(t));
        if (left) return past ? 0 : s(u(a) << u(b));
        if (kSigned & types({t})) return past ? (a < 0 ? -1 : 0) : a >> b;  // sign-extended in int64
        return past ? 0 : s(u(a) >> u(b));
      });
}

void infer_bit_shift(InferCtx& c) {
  infer_binary(c, kShiftTypes, false);
  std::string d = c.attr_string("direction", "");
  if (d != "LEFT" && d != "RIGHT") c.fail("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"" + d + "\"");
}

// IsNaN and IsInf: a bool of the input's shape, from a test of each float value. IsInf answers
// for +inf and -inf as detect_positive and detect_negative say (both by default).
void infer_float_test(InferCtx& c, TypeHistory h) {
  require_types(c, 0, h);
  for (const char* a : {"detect_positive", "detect_negative"})
    if (c.has_attr(a)) c.attr_int(a, 1);  // checks the attribute's kind
  c.out[0] = TypeInfo{DType::boolean, c.input(0).rank_known, c.input(0).dims};
}

template <class Test>
void ref_float_test(RefCtx& c, Test test) {
  const RefTensor& x = c.input(0);
  RefTensor out(DType::boolean, x.shape);
  for (int64_t k = 0; k < x.numel(); ++k) out.i[k] = test(x.f[k]);
  c.out[0] = std::move(out);
}

void ref_is_inf(RefCtx& c) {
  bool pos = c.attr_int("detect_positive", 1) != 0, neg = c.attr_int("detect_negative", 1) != 0;
  ref_float_test(c, [&](double v) { return std::isinf(v) && (v > 0 ? pos : neg); });
}

double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);  // no overflow for very negative x
  return e / (1.0 + e);
}

// Logic on bool answers bool.
void ref_logic(RefCtx& c, bool (*op)(bool, bool)) {
  ref_binary(
      c, true, [](double, double) { return 0.0; },
      [op](int64_t a, int64_t b, DType) -> int64_t { return op(a != 0, b != 0); });
}

// 1, -1, or x itself for +-0 (keeping its sign) and NaN.
void ref_sign(RefCtx& c) {
  ref_unary(
      c, [](double x) { return x > 0   ? 1.0
                               : x < 0 ? -1.0
                                       : x; },
      [](int64_t x, DType t) -> int64_t {
        return t == DType::u64 ? x != 0 : x > 0 ? 1 : x < 0 ? -1 : 0;
      });
}

void ref_leaky_relu(RefCtx& c) {
  double alpha = c.attr_float("alpha", 0.01);
  ref_float_unary(c, [alpha](double x) { return x < 0 ? alpha * x : x; });
}

void infer_leaky_relu(InferCtx& c) {
  infer_unary(c, kLeakyReluTypes);
  c.attr_float("alpha", 0.01);  // checks the attribute's kind
}

const OpDef kOps[] = {
    {"Add",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kArithTypes, false); },
     [](RefCtx& c) {
       ref_binary(
           c, false, [](double a, double b) { return a + b; }, int_add);
     }},
    {"Sub",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kArithTypes, false); },
     [](RefCtx& c) {
       ref_binary(
           c, false, [](double a, double b) { return a - b; }, int_sub);
     }},
    {"Mul",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kArithTypes, false); },
     [](RefCtx& c) {
       ref_binary(
           c, false, [](double a, double b) { return a * b; }, int_mul);
     }},
    {"Div", 2, 2, 1, 1, {}, [](InferCtx& c) { infer_binary(c, kArithTypes, false); }, ref_div},
    {"Pow", 2, 2, 1, 1, {}, infer_pow, ref_pow},
    {"Mod", 2, 2, 1, 1, {"fmod"}, infer_mod, ref_mod},
    {"BitwiseAnd",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kBitwiseTypes, false); },
     [](RefCtx& c) { ref_bitwise(c, [](int64_t a, int64_t b) { return a & b; }); }},
    {"BitwiseOr",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kBitwiseTypes, false); },
     [](RefCtx& c) { ref_bitwise(c, [](int64_t a, int64_t b) { return a | b; }); }},
    {"BitwiseXor",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kBitwiseTypes, false); },
     [](RefCtx& c) { ref_bitwise(c, [](int64_t a, int64_t b) { return a ^ b; }); }},
    {"BitwiseNot",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kBitwiseTypes); },
     [](RefCtx& c) {
       ref_unary(
           c, [](double x) { return x; }, [](int64_t x, DType) { return ~x; });
     }},
    {"BitShift", 2, 2, 1, 1, {"direction"}, infer_bit_shift, ref_bit_shift},
    {"Equal",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kEqualTypes, true); },
     [](RefCtx& c) {
       ref_binary(c, true, [](double a, double b) { return a == b; },
                  [](int64_t a, int64_t b, DType) -> int64_t { return a == b; });
     }},
    {"Less",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kOrderTypes, true); },
     [](RefCtx& c) {
       ref_binary(c, true, [](double a, double b) { return a < b; },
                  [](int64_t a, int64_t b, DType t) -> int64_t { return int_less(a, b, t); });
     }},
    {"Greater",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kOrderTypes, true); },
     [](RefCtx& c) {
       ref_binary(c, true, [](double a, double b) { return a > b; },
                  [](int64_t a, int64_t b, DType t) -> int64_t { return int_less(b, a, t); });
     }},
    {"Neg",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kNegTypes); },
     [](RefCtx& c) {
       ref_unary(c, [](double x) { return -x; }, [](int64_t x, DType) { return s(0 - u(x)); });
     }},
    {"Abs",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kAbsTypes); },
     [](RefCtx& c) {
       ref_unary(c, [](double x) { return std::fabs(x); }, [](int64_t x, DType t) {
         return dtype_is_unsigned_int(t) || x >= 0 ? x : s(0 - u(x));
       });
     }},
    {"Relu",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kReluTypes); },
     [](RefCtx& c) {
       // x < 0 rather than max(x, 0) so NaN propagates as in numpy.
       ref_unary(c, [](double x) { return x < 0 ? 0.0 : x; },
                 [](int64_t x, DType) { return x < 0 ? int64_t{0} : x; });
     }},
    {"Erf",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kErfTypes); },
     [](RefCtx& c) {
       // Integers: erf(x) lies strictly between -1 and 1, so truncated toward zero it is 0 (double's
       // erf rounds to 1 from |x| = 6, float's from 4: the exact value is the one every target
       // can give).
       ref_unary(
           c, [](double x) { return std::erf(x); }, [](int64_t, DType) { return int64_t{0}; });
     }},
    {"Exp",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kFloatTypes); },
     [](RefCtx& c) { ref_float_unary(c, [](double x) { return std::exp(x); }); }},
    {"Log",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kFloatTypes); },
     [](RefCtx& c) { ref_float_unary(c, [](double x) { return std::log(x); }); }},
    {"Sqrt",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kFloatTypes); },
     [](RefCtx& c) { ref_float_unary(c, [](double x) { return std::sqrt(x); }); }},
    {"Tanh",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kFloatTypes); },
     [](RefCtx& c) { ref_float_unary(c, [](double x) { return std::tanh(x); }); }},
    {"Sigmoid",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kFloatTypes); },
     [](RefCtx& c) { ref_float_unary(c, sigmoid); }},
    {"GreaterOrEqual",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kOrderOrEqualTypes, true); },
     [](RefCtx& c) {
       ref_binary(
           c, true, [](double a, double b) { return a >= b; },
           [](int64_t a, int64_t b, DType t) -> int64_t { return !int_less(a, b, t); });
     }},
    {"LessOrEqual",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kOrderOrEqualTypes, true); },
     [](RefCtx& c) {
       ref_binary(
           c, true, [](double a, double b) { return a <= b; },
           [](int64_t a, int64_t b, DType t) -> int64_t { return !int_less(b, a, t); });
     }},
    {"And",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kLogicTypes, true); },
     [](RefCtx& c) { ref_logic(c, [](bool a, bool b) { return a && b; }); }},
    {"Or",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kLogicTypes, true); },
     [](RefCtx& c) { ref_logic(c, [](bool a, bool b) { return a || b; }); }},
    {"Xor",
     2,
     2,
     1,
     1,
     {},
     [](InferCtx& c) { infer_binary(c, kLogicTypes, true); },
     [](RefCtx& c) { ref_logic(c, [](bool a, bool b) { return a != b; }); }},
    {"Not",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kNotTypes); },
     [](RefCtx& c) {
       ref_unary(
           c, [](double) { return 0.0; }, [](int64_t x, DType) -> int64_t { return x == 0; });
     }},
    {"Floor",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kRoundingTypes); },
     [](RefCtx& c) { ref_float_unary(c, [](double x) { return std::floor(x); }); }},
    {"Ceil",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kRoundingTypes); },
     [](RefCtx& c) { ref_float_unary(c, [](double x) { return std::ceil(x); }); }},
    {"Round",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kRoundTypes); },
     [](RefCtx& c) { ref_float_unary(c, [](double x) { return std::nearbyint(x); }); }},  // halves to even
    {"IsNaN",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_float_test(c, kIsNanTypes); },
     [](RefCtx& c) { ref_float_test(c, [](double v) { return std::isnan(v); }); }},
    {"IsInf",
     1,
     1,
     1,
     1,
     {"detect_positive", "detect_negative"},
     [](InferCtx& c) { infer_float_test(c, kIsInfTypes); },
     ref_is_inf},
    {"Reciprocal",
     1,
     1,
     1,
     1,
     {},
     [](InferCtx& c) { infer_unary(c, kRoundingTypes); },
     [](RefCtx& c) { ref_float_unary(c, [](double x) { return 1.0 / x; }); }},
    {"Sign", 1, 1, 1, 1, {}, [](InferCtx& c) { infer_unary(c, kSignTypes); }, ref_sign},
    {"LeakyRelu", 1, 1, 1, 1, {"alpha"}, infer_leaky_relu, ref_leaky_relu},
    {"Clip", 1, 3, 1, 1, {"min", "max"}, infer_clip, ref_clip},
    {"Where", 3, 3, 1, 1, {}, infer_where, ref_where},
    {"Cast", 1, 1, 1, 1, {"to", "saturate", "round_mode"}, infer_cast, ref_cast},
    {"CastLike", 2, 2, 1, 1, {"saturate", "round_mode"}, infer_cast, ref_cast},
    {"EyeLike", 1, 1, 1, 1, {"dtype", "k"}, infer_eye_like, ref_eye_like},
};

}  // namespace

std::span<const OpDef> elementwise_ops() { return kOps; }

}  // namespace lockstep
