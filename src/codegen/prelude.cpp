#include "codegen/prelude.h"

namespace lockstep::codegen {

namespace {

// "FN " stands for the dialect's qualifier of helper functions.
constexpr const char* kShared = R"(FN float ls_bf2f(uint16_t b) { return ls_as_float((uint32_t)b << 16); }
FN uint16_t ls_f2bf(float f) {
  uint32_t x = ls_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fffu + ((x >> 16) & 1u); return (uint16_t)(x >> 16);
}
FN float ls_round_bf(float f) { return ls_bf2f(ls_f2bf(f)); }
FN float ls_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
)";

constexpr const char* kF64 = R"(FN double ls_sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
)";

constexpr const char* kIntegers = R"(template <class T> FN T ls_iabs(T x) { return x < 0 ? (T)-x : x; }
template <class T> FN T ls_min(T a, T b) { return b < a ? b : a; }
template <class T> FN T ls_max(T a, T b) { return a < b ? b : a; }
// ONNX integer Div that never traps: 0 for a zero divisor (a check kernel reports it) and, for
// signed types, MIN / -1 wrapping to MIN (negation in unsigned arithmetic).
template <class T> FN T ls_idiv(T a, T b) {
  if (b == 0) return (T)0;
  if ((T)-1 < (T)0 && b == (T)-1) return (T)(0ull - (unsigned long long)a);
  return (T)(a / b);
}
// Exact integer power, wrapping like repeated multiplication in T; for a negative exponent
// the truncated value of b^e (only |b| == 1 survives).
template <class T, class E> FN T ls_ipow(T b, E e) {
  if (e < (E)0) return b == (T)1 ? (T)1 : b == (T)-1 ? ((e & 1) ? (T)-1 : (T)1) : (T)0;
  unsigned long long r = 1, x = (unsigned long long)b;
  for (unsigned long long n = (unsigned long long)e; n; n >>= 1, x *= x)
    if (n & 1) r *= x;
  return (T)r;
}
// Max that propagates NaN, for reductions.
template <class T> FN T ls_max_nan(T acc, T x) { return (x > acc || x != x) ? x : acc; }
)";

std::string qualified(std::string text, const std::string& fn) {
  for (size_t at = text.find("FN "); at != std::string::npos; at = text.find("FN ", at + fn.size()))
    text.replace(at, 2, fn);
  return text;
}

}  // namespace

std::string helper_functions(const CDialect& d) {
  return d.conversions + qualified(std::string(kShared) + (d.f64 ? kF64 : "") + kIntegers, d.fn);
}

}  // namespace lockstep::codegen
