#include "codegen/prelude.h"

#include "codegen/math_library.h"

namespace lockstep::codegen {

namespace {

// "FN " stands for the dialect's qualifier of helper functions. ls_udiv32: x / d for x < 2^32
// from the host's m = floor(2^64 / d) + 1 (0 for d = 1; kernel/symbols.h), the high half of
// x * m taken in two 32 x 32 products, so that no 64-bit product overflows.
constexpr const char* kShared = R"(FN float ls_bf2f(uint16_t b) { return ls_as_float((uint32_t)b << 16); }
FN uint16_t ls_f2bf(float f) {
  uint32_t x = ls_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)0x7fc0;  // the one NaN every target stores
  x += 0x7fffu + ((x >> 16) & 1u); return (uint16_t)(x >> 16);
}
FN float ls_round_bf(float f) { return ls_bf2f(ls_f2bf(f)); }
FN uint32_t ls_udiv32(uint32_t x, uint64_t m) {
  return m == 0 ? x : (uint32_t)(((uint64_t)x * (m >> 32) + (((uint64_t)x * (uint32_t)m) >> 32)) >> 32);
}
FN uint32_t ls_umod32(uint32_t x, uint32_t d, uint64_t m) { return x - ls_udiv32(x, m) * d; }
FN float ls_canon_f(float x) { return x == x ? x : ls_as_float(0x7fc00000u); }
FN uint16_t ls_canon_h(uint16_t h) { return (h & 0x7fffu) > 0x7c00u ? (uint16_t)0x7e00 : h; }
)";

constexpr const char* kF64 = R"(FN double ls_sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
FN double ls_canon_d(double x) { return x == x ? x : ls_as_double((uint64_t)0x7ff8000000000000); }
)";

// Typed helpers, one function per type: OpenCL C has neither templates nor overloads, so every
// target calls ls_min_float, ls_idiv_int32_t, ls_ipow_int64_t_int32_t (see helper_name).
constexpr const char* kOrdered = R"(#define LS_ORDERED(T) \
FN T ls_min_##T(T a, T b) { return b < a ? b : a; } \
FN T ls_max_##T(T a, T b) { return a < b ? b : a; } \
FN T ls_max_nan_##T(T acc, T x) { return (x > acc || x != x) ? x : acc; } \
FN T ls_min_nan_##T(T acc, T x) { return (x < acc || x != x) ? x : acc; }
)";

// ONNX integer Div and Mod that never trap: 0 for a zero divisor (a check kernel reports it) and,
// for signed types, MIN / -1 wrapping to MIN (negation in unsigned arithmetic) and MIN % -1 = 0.
// Shifts by the width or more (or by a negative amount) give 0, or -1 for a negative value shifted
// right (signed shifts to the right are arithmetic). Exact integer power
// wraps like repeated multiplication in T; a negative exponent truncates b^e (only |b| == 1
// survives).
constexpr const char* kIntegers = R"(#define LS_INTEGER(T) \
FN T ls_iabs_##T(T x) { return x < (T)0 ? (T)((uint64_t)0 - (uint64_t)x) : x; } \
FN T ls_idiv_##T(T a, T b) { \
  if (b == (T)0) return (T)0; \
  if ((T)-1 < (T)0 && b == (T)-1) return (T)((uint64_t)0 - (uint64_t)a); \
  return (T)(a / b); \
} \
FN T ls_shl_##T(T a, T b) { return (uint64_t)b >= 8u * sizeof(T) ? (T)0 : (T)((uint64_t)a << (uint64_t)b); } \
FN T ls_shr_##T(T a, T b) { \
  if ((uint64_t)b < 8u * sizeof(T)) return (T)(a >> b); \
  return (T)-1 < (T)0 && a < (T)0 ? (T)-1 : (T)0; \
} \
FN T ls_irem_##T(T a, T b) { return b == (T)0 || ((T)-1 < (T)0 && b == (T)-1) ? (T)0 : (T)(a % b); } \
FN T ls_pymod_##T(T a, T b) { \
  T r = ls_irem_##T(a, b); \
  return r != (T)0 && (r < (T)0) != (b < (T)0) ? (T)(r + b) : r; \
}
#define LS_IPOW(T, E) \
FN T ls_ipow_##T##_##E(T b, E e) { \
  if (e < (E)0) return b == (T)1 ? (T)1 : b == (T)-1 ? ((e & 1) ? (T)-1 : (T)1) : (T)0; \
  uint64_t r = 1, x = (uint64_t)b; \
  for (uint64_t n = (uint64_t)e; n; n >>= 1, x *= x) \
    if (n & 1) r *= x; \
  return (T)r; \
}
#define LS_IPOW_ANY(T) LS_IPOW(T, int8_t) LS_IPOW(T, uint8_t) LS_IPOW(T, int16_t) LS_IPOW(T, uint16_t) \
  LS_IPOW(T, int32_t) LS_IPOW(T, uint32_t) LS_IPOW(T, int64_t) LS_IPOW(T, uint64_t)
#define LS_INTEGER_TYPE(T) LS_ORDERED(T) LS_INTEGER(T) LS_IPOW_ANY(T)
LS_ORDERED(float)
LS_INTEGER_TYPE(int8_t) LS_INTEGER_TYPE(uint8_t) LS_INTEGER_TYPE(int16_t) LS_INTEGER_TYPE(uint16_t)
LS_INTEGER_TYPE(int32_t) LS_INTEGER_TYPE(uint32_t) LS_INTEGER_TYPE(int64_t) LS_INTEGER_TYPE(uint64_t)
)";

// Python's % of floats (numpy's mod): C's fmod, exact, moved to the divisor's sign; a zero
// remainder is a zero of the divisor's sign.
constexpr const char* kPyMod = R"(#define LS_PYMOD(T, S) FN T ls_pymod_##T(T a, T b) { \
  T r = fmod##S(a, b); \
  return r == (T)0 ? copysign##S((T)0, b) : (r < (T)0) != (b < (T)0) ? r + b : r; \
}
)";

// Float to integer, the same on every target (C leaves NaN and out-of-range conversions
// undefined, and x86, CUDA and PoCL each give other values): NaN is 0, a value past the type's
// range saturates to its MIN or MAX, the rest truncates toward zero. The bounds are powers of
// two, exact in every float type, compared before any conversion happens.
constexpr const char* kFloatToInt = R"(#define LS_F2I_S(T, N, F) FN T ls_f2i_##T##_##F(F x) { \
  return x != x ? (T)0 : x >= (F)((uint64_t)1 << (N)) ? (T)(((uint64_t)1 << (N)) - 1u) \
       : x < -(F)((uint64_t)1 << (N)) ? (T)((uint64_t)0 - ((uint64_t)1 << (N))) : (T)x; }
#define LS_F2I_U(T, N, F) FN T ls_f2i_##T##_##F(F x) { \
  return x != x ? (T)0 : x >= (F)2 * (F)((uint64_t)1 << ((N) - 1)) ? (T)~(uint64_t)0 : x <= (F)-1 ? (T)0 : (T)x; }
#define LS_F2I(F) LS_F2I_S(int8_t, 7, F) LS_F2I_S(int16_t, 15, F) LS_F2I_S(int32_t, 31, F) LS_F2I_S(int64_t, 63, F) \
  LS_F2I_U(uint8_t, 8, F) LS_F2I_U(uint16_t, 16, F) LS_F2I_U(uint32_t, 32, F) LS_F2I_U(uint64_t, 64, F)
LS_F2I(float)
)";

// Philox4x32-10 and the draws on it, step for step as core/philox.h (docs/random.md). SQRT is
// the dialect's float square root.
constexpr const char* kRandom = R"(FN uint64_t ls_philox(uint64_t n, uint32_t attempt, uint64_t key, uint32_t upper) {
  uint32_t c0 = (uint32_t)n, c1 = (uint32_t)(n >> 32), c2 = attempt, c3 = 0u;
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1; c3 = (uint32_t)p0; c0 = n0; c2 = n2;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  return upper ? (((uint64_t)c3 << 32) | c2) : (((uint64_t)c1 << 32) | c0);
}
FN float ls_rand_uniform(int64_t n, int64_t key) {
  return (float)((uint32_t)ls_philox((uint64_t)n, 0u, (uint64_t)key, 0u) >> 8) * 5.9604644775390625e-8f;
}
FN float ls_rand_normal(int64_t n, int64_t key) {
  for (uint32_t k = 0u; k < 32u; ++k) {
    uint64_t w = ls_philox((uint64_t)n, k, (uint64_t)key, 0u);
    float x = (float)((int32_t)((uint32_t)w >> 8) * 2 - 16777215) * 5.9604644775390625e-8f;
    float y = (float)((int32_t)((uint32_t)(w >> 32) >> 8) * 2 - 16777215) * 5.9604644775390625e-8f;
    float s = x * x + y * y;
    if (s < 1.0f) return x * SQRT(-2.0f * ls_log(s) / s);
  }
  return 0.0f;
}
)";

constexpr const char* kRandomF64 = R"(FN double ls_rand_uniform_d(int64_t n, int64_t key) {
  return (double)(ls_philox((uint64_t)n, 0u, (uint64_t)key, 0u) >> 11) * (1.0 / 9007199254740992.0);
}
FN double ls_rand_normal_d(int64_t n, int64_t key) {
  for (uint32_t k = 0u; k < 32u; ++k) {
    uint64_t wx = ls_philox((uint64_t)n, k, (uint64_t)key, 0u), wy = ls_philox((uint64_t)n, k, (uint64_t)key, 1u);
    double x = (double)((int64_t)(wx >> 11) * 2 - (int64_t)9007199254740991) * (1.0 / 9007199254740992.0);
    double y = (double)((int64_t)(wy >> 11) * 2 - (int64_t)9007199254740991) * (1.0 / 9007199254740992.0);
    double s = x * x + y * y;
    if (s < 1.0) return x * sqrt(-2.0 * log(s) / s);
  }
  return 0.0;
}
)";

std::string with_sqrt(std::string text, const std::string& sqrt_fn) {
  for (size_t at = text.find("SQRT("); at != std::string::npos; at = text.find("SQRT(", at))
    text.replace(at, 4, sqrt_fn);
  return text;
}

std::string qualified(std::string text, const std::string& fn) {
  for (size_t at = text.find("FN "); at != std::string::npos; at = text.find("FN ", at + fn.size()))
    text.replace(at, 2, fn);
  return text;
}

}  // namespace

std::string helper_functions(const CDialect& d) {
  std::string typed = std::string(kOrdered) + kIntegers + kFloatToInt + kPyMod + "LS_PYMOD(float, " + d.math_suffix +
                      ")\n" + (d.f64 ? "LS_ORDERED(double)\nLS_F2I(double)\nLS_PYMOD(double, )\n" : "");
  std::string fma = "FN float ls_fma(float a, float b, float c) { return fma" + d.math_suffix + "(a, b, c); }\n";
  std::string random = with_sqrt(kRandom, "sqrt" + d.math_suffix) + (d.f64 ? kRandomF64 : "");
  return d.conversions + qualified(fma + math_library_source() + kShared + (d.f64 ? kF64 : "") + typed + random, d.fn);
}

}  // namespace lockstep::codegen
