#include "codegen/math_library.h"

#include "core/error.h"

namespace lockstep::codegen {

namespace {

// Coefficients: tools/math/fit_coefficients.py. "FN " stands for the dialect's qualifier.
// Every sum and product below is one correctly rounded float32 operation in the order written
// (no target contracts a*b+c into an FMA; ls_fma is one where written); pairs (ls_df) carry a
// value as hi + lo where one float32 is not enough.
constexpr const char* kLibrary = R"(// lockstep's float32 math library (docs/math.md): the same operations on every target.
typedef struct { float hi; float lo; } ls_df;
FN ls_df ls_df_of(float hi, float lo) { ls_df r; r.hi = hi; r.lo = lo; return r; }
// a + b exactly, as hi + lo, when |a| >= |b| or a == 0 (Dekker's fast two-sum).
FN ls_df ls_fast_two_sum(float a, float b) { float s = a + b; return ls_df_of(s, b - (s - a)); }
// a + b exactly, as hi + lo, whatever their sizes (Knuth's two-sum).
FN ls_df ls_two_sum(float a, float b) {
  float s = a + b, bb = s - a;
  return ls_df_of(s, (a - (s - bb)) + (b - bb));
}
// a * b exactly, as hi + lo, when nothing under- or overflows: the product's rounding error
// is exact in one fused multiply-add (ls_fma, the dialect's correctly rounded fma).
FN ls_df ls_two_prod(float a, float b) {
  float p = a * b;
  return ls_df_of(p, ls_fma(a, b, -p));
}
// n / d for pairs: the float quotient and its correction from the exact remainder.
FN ls_df ls_df_div_pair(ls_df n, ls_df d) {
  float q = n.hi / d.hi;
  ls_df p = ls_two_prod(q, d.hi);
  return ls_df_of(q, ((((n.hi - p.hi) - p.lo) + n.lo) - q * d.lo) / d.hi);
}
FN float ls_df_div(ls_df n, ls_df d) {
  ls_df q = ls_df_div_pair(n, d);
  return q.hi + q.lo;
}
FN float ls_inf(void) { return ls_as_float(0x7f800000u); }
FN float ls_nan(void) { return ls_as_float(0x7fc00000u); }
FN float ls_fabs(float x) { return ls_as_float(ls_as_uint(x) & 0x7fffffffu); }
// 2^k for -126 <= k <= 127.
FN float ls_pow2i(int32_t k) { return ls_as_float((uint32_t)(k + 127) << 23); }
FN int32_t ls_imin(int32_t a, int32_t b) { return a < b ? a : b; }
FN int32_t ls_imax(int32_t a, int32_t b) { return a < b ? b : a; }
// x * 2^k for x within 2^-30..2^30 and any k: two factors, the first product exact, so one
// rounding (where the result is subnormal, of x already rounded: see ls_ldexp_pair).
FN float ls_ldexp(float x, int32_t k) {
  int32_t kc = ls_imin(ls_imax(k, -160), 254);
  int32_t k2 = ls_imax(kc - 127, 0) - 126 * (int32_t)(kc < -126);  // 2^k2: 1 in the normal range
  return (x * ls_pow2i(kc - k2)) * ls_pow2i(k2);
}
// x + y rounded once onto the subnormal grid (multiples of 2^-149), for |x| < 2^-126 given as
// a = x 2^126 (|a| < 1) and b = y 2^126: a + b rounded in [1, 2), where the grid is float32's.
FN float ls_round_subnormal(float a, float b) {
  float one = a < 0.0f ? -1.0f : 1.0f;
  ls_df s = ls_fast_two_sum(one, a);
  return ((s.hi + (s.lo + b)) - one) * 0x1p-126f;
}
// (hi + lo) 2^k rounded once, subnormal results too, for hi within 2^-30..2^30, |lo| < |hi|.
FN float ls_ldexp_pair(float hi, float lo, int32_t k) {
  float v = ls_ldexp(hi + lo, k);  // two roundings where it is subnormal
  float scale = ls_pow2i(ls_imin(ls_imax(k, -160) + 126, 0));
  return ls_fabs(v) < 0x1p-126f ? ls_round_subnormal(hi * scale, lo * scale) : v;
}

// t rounded to an integer (ties to even) for |t| < 2^22, by adding and taking away 1.5 2^23.
FN float ls_round(float t) { return (t + 0x1.8p23f) - 0x1.8p23f; }

// exp: x = n ln2 + r, |r| <= ln2/2 (Cody and Waite: n ln2_hi is exact, so is x - n ln2_hi);
// e^r = 1 + r + r^2 P(r), the 1 + r_hi kept exact as a pair.
FN int32_t ls_exp_n(float x) {  // x / ln2 rounded, |x| < 2^20; 0 for NaN
  float t = x * 0x1.715476p+0f;
  return (int32_t)ls_round(t == t ? t : 0.0f);
}
// e^(x - n ln2) as hi + lo (not normalised; hi in [0.7, 1.42]).
FN ls_df ls_exp_reduced(float x, int32_t n) {
  float nf = (float)n;
  float hi = x - nf * 0x1.62e4p-1f;
  float lo = nf * 0x1.7f7d1cp-20f;
  float r = hi - lo;
  float p = r * r * (0x1p-1f + r * (0x1.555556p-3f + r * (0x1.55550cp-5f + r * (0x1.111054p-7f +
            r * (0x1.6d224p-10f + r * 0x1.a18486p-13f)))));
  float s = 1.0f + hi;
  return ls_df_of(s, (hi - (s - 1.0f)) + (p - lo));
}
// The functions compute every path and select (no early returns), so that a compiler can
// vectorise a loop calling them (every operation is done, whichever value is used: nothing is
// left to speculate); NaN is kept out of float-to-int conversions, and every NaN result is the
// one quiet NaN 0x7fc00000 (ls_nan_or), so that targets agree on its bits too.
FN float ls_nan_or(float y) { return y == y ? y : ls_nan(); }
FN float ls_clamp(float x, float lo, float hi) {  // NaN stays NaN
  float y = x < lo ? lo : x;
  return y > hi ? hi : y;
}
FN float ls_exp(float x) {
  float xc = ls_clamp(x, -104.0f, 89.0f);  // e^-104 rounds to 0, e^89 to infinity
  int32_t n = ls_exp_n(xc);
  ls_df e = ls_exp_reduced(xc, n);
  return ls_nan_or(ls_ldexp_pair(e.hi, e.lo, n));
}
// e^x = (hi + lo) 2^n for x in -104..89, hi + lo normalised.
FN ls_df ls_exp_pair(float x, int32_t n) {
  ls_df e = ls_exp_reduced(x, n);
  return ls_fast_two_sum(e.hi, e.lo);
}

// log: x = 2^k m, m in [sqrt(2)/2, sqrt(2)), f = m - 1 (exact), s = f / (2 + f);
// log(m) = 2 atanh(s) = f - f^2/2 + s (f^2/2 + s^2 P(s^2)); k ln2_hi + f - f^2/2 summed exactly.
FN float ls_log(float x) {
  int32_t sub = x < 0x1p-126f;
  float xs = x * 0x1p25f;
  uint32_t b = ls_as_uint(sub ? xs : x);
  int32_t k = (int32_t)((b >> 23) & 0xffu) - (sub ? 152 : 127);
  b = (b & 0x007fffffu) | 0x3f800000u;
  int32_t up = b > 0x3fb504f3u;
  b = up ? b - 0x00800000u : b;
  k = up ? k + 1 : k;
  float f = ls_as_float(b) - 1.0f;
  float s = f / (2.0f + f);
  float z = s * s;
  float r = z * (0x1.555556p-1f + z * (0x1.9996bp-2f + z * (0x1.257c4ap-2f + z * 0x1.ab5414p-3f)));
  ls_df hfsq = ls_two_prod(f, 0.5f * f);
  ls_df d = ls_fast_two_sum(f, -hfsq.hi);  // f - f^2/2, |f| >= f^2/2
  float kf = (float)k;
  ls_df t = ls_fast_two_sum(kf * 0x1.62e4p-1f, d.hi);
  float y = t.hi + (t.lo + ((d.lo - hfsq.lo) + (s * (hfsq.hi + r) + kf * 0x1.7f7d1cp-20f)));
  y = x == ls_inf() ? x : y;
  y = x == 0.0f ? -ls_inf() : y;
  return x >= 0.0f ? y : ls_nan();  // and for NaN
}

// tanh: x + x w P(w), w = x^2, below 0.55 (x itself below 2^-12), the last steps as pairs;
// above, with e = e^(-2|x|), (1 - e) / (1 + e) from pairs; +-1 from 10 on.
FN float ls_tanh(float x) {
  float a = ls_fabs(x);
  // c = w P(w), P = p0 + w Q(w): w = x^2, P's last step and the products as pairs
  ls_df w = ls_two_prod(x, x);
  float q = w.hi * (0x1.11124ap-3f + w.hi * (-0x1.bad78ap-5f + w.hi * (0x1.7af7eep-6f + w.hi * (-0x1.149c26p-6f +
            w.hi * (0x1.bb755p-6f + w.hi * -0x1.bad75p-6f)))));
  ls_df p = ls_fast_two_sum(-0x1.555556p-2f, q);
  ls_df c = ls_two_prod(w.hi, p.hi);
  ls_df t = ls_two_prod(x, c.hi);
  t.lo = t.lo + x * (c.lo + (w.hi * p.lo + w.lo * p.hi));
  ls_df s = ls_fast_two_sum(x, t.hi);
  float near0 = s.hi + (s.lo + t.lo);
  float m = -2.0f * ls_clamp(a, 0.5f, 10.0f);
  int32_t n = ls_exp_n(m);
  ls_df e = ls_exp_pair(m, n);
  float scale = ls_pow2i(n);
  float eh = e.hi * scale, el = e.lo * scale;
  ls_df num = ls_fast_two_sum(1.0f, -eh);
  ls_df den = ls_fast_two_sum(1.0f, eh);
  float y = ls_df_div(ls_df_of(num.hi, num.lo - el), ls_df_of(den.hi, den.lo + el));  // 1 from 10 on
  y = x < 0.0f ? -y : y;
  y = a < 0.55f ? near0 : y;
  return ls_nan_or(a < 0x1p-12f ? x : y);
}

// sigmoid: with e = e^(-|x|) = E 2^n, 1 / (1 + e) for x >= 0 and E / (1 + e) 2^n below,
// from pairs.
FN float ls_sigmoid(float x) {
  float a = -ls_clamp(ls_fabs(x), 0.0f, 104.0f);
  int32_t n = ls_exp_n(a);
  ls_df e = ls_exp_pair(a, n);
  float scale = ls_pow2i(n < -100 ? -100 : n);  // past 2^-100, 1 + e is 1 to pair precision
  ls_df d = ls_fast_two_sum(1.0f, e.hi * scale);
  d.lo = d.lo + e.lo * scale;
  int32_t neg = x < 0.0f;
  ls_df q = ls_df_div_pair(ls_df_of(neg ? e.hi : 1.0f, neg ? e.lo : 0.0f), d);
  return ls_nan_or(ls_ldexp_pair(q.hi, q.lo, neg ? n : 0));
}

// erf: x + x R(x^2) below 0.84; C + P(|x| - 1.171875) to 1.5; 1 - e^(-x^2) F(1/|x|) to 4; +-1
// beyond. The last steps of the first two are pairs.
FN float ls_erf(float x) {
  float a = ls_fabs(x);
  float t64 = x * 0x1p64f, tc = t64 * 0x1.06eba8p-3f;  // erf(x) = x + 0.128 x below 2^-60
  float tiny = (t64 + tc) * 0x1p-64f;
  tiny = ls_fabs(tiny) < 0x1p-126f ? ls_round_subnormal(x * 0x1p126f, tc * 0x1p62f) : tiny;
  tiny = x == 0.0f ? x : tiny;
  // c = R(w) = c0 + w (c1 + w G(w)), its last two steps and w = x^2 as pairs
  ls_df w = ls_two_prod(x, x);
  float g = w.hi * (0x1.ce2c12p-4f + w.hi * (-0x1.b7c4ep-6f + w.hi * (0x1.4fc562p-8f + w.hi * (-0x1.524a08p-11f +
            w.hi * (-0x1.974ce8p-14f + w.hi * 0x1.3c43aep-14f)))));
  ls_df c1 = ls_fast_two_sum(-0x1.81273ep-2f, g);
  ls_df wc = ls_two_prod(w.hi, c1.hi);
  wc.lo = wc.lo + (w.hi * c1.lo + w.lo * c1.hi);
  ls_df c = ls_two_sum(0x1.06eba8p-3f, wc.hi);
  ls_df t = ls_two_prod(x, c.hi);
  t.lo = t.lo + x * (c.lo + wc.lo);
  ls_df s = ls_fast_two_sum(x, t.hi);
  float near0 = s.hi + (s.lo + t.lo);
  float d = ls_clamp(a, 0.84f, 1.5f) - 1.171875f;
  // P(d) = p0 + d (p1 + d H(d)), its last two steps as pairs
  float hh = -0x1.56f1bep-2f + d * (0x1.54c076p-3f + d * (0x1.cf82c6p-7f + d * (-0x1.cf0764p-5f +
             d * (0x1.2c1b1ap-6f + d * (0x1.cdcb54p-8f + d * (-0x1.8f7112p-8f + d * (0x1.4e2304p-10f +
             d * 0x1.3111cp-10f)))))));
  ls_df dh = ls_two_prod(d, hh);
  ls_df h = ls_fast_two_sum(0x1.24a554p-2f, dh.hi);
  ls_df m = ls_two_prod(d, h.hi);
  m.lo = m.lo + d * (h.lo + dh.lo);
  ls_df u = ls_fast_two_sum(0x1.ce1962p-1f, m.hi);
  float middle = u.hi + (u.lo + (m.lo + 0x1.81c226p-26f));
  float b = ls_clamp(a, 1.5f, 4.0f);
  float r = 1.0f / b;
  float f = 0x1.93791ep-18f + r * (0x1.20d404p-1f + r * (-0x1.7a28d4p-12f + r * (-0x1.14069ep-2f +
            r * (-0x1.c5f98ep-4f + r * (0x1.e9642ap-1f + r * (-0x1.86cffp+0f + r * (0x1.4d8cfap+0f +
            r * (-0x1.3ab008p-1f + r * 0x1.03ad84p-3f))))))));
  float tail = 1.0f - ls_exp(-(b * b)) * f;
  float y = a < 1.5f ? middle : tail;  // tail: 1 from 4 on
  y = x < 0.0f ? -y : y;
  y = a < 0.84f ? near0 : y;
  return ls_nan_or(a < 0x1p-60f ? tiny : y);
}

// log2(x) as a pair, for finite x > 0, to about 2^-34 relative: as ls_log, with s, s^2 and
// the series' first terms as pairs.
FN ls_df ls_log2_pair(float x) {
  int32_t k = 0;
  if (x < 0x1p-126f) {
    x = x * 0x1p25f;
    k = -25;
  }
  uint32_t b = ls_as_uint(x);
  k = k + (int32_t)(b >> 23) - 127;
  b = (b & 0x007fffffu) | 0x3f800000u;
  if (b > 0x3fb504f3u) {
    b = b - 0x00800000u;
    k = k + 1;
  }
  float m = ls_as_float(b);
  float f = m - 1.0f;
  float dh = m + 1.0f;
  float dl = m - (dh - 1.0f);  // m + 1 = dh + dl exactly
  float sh = f / dh;
  ls_df p = ls_two_prod(sh, dh);
  float sl = (((f - p.hi) - p.lo) - sh * dl) / dh;  // s = f / (m + 1) = sh + sl
  // atanh(s) = s + s z (1/3 + z P(z)), z = s^2
  ls_df z = ls_two_prod(sh, sh);
  z.lo = z.lo + 2.0f * sh * sl;
  float zp = z.hi * (0x1.99999ap-3f + z.hi * (0x1.249192p-3f + z.hi * (0x1.c76b02p-4f + z.hi * 0x1.78f614p-4f)));
  ls_df third = ls_fast_two_sum(0x1.555556p-2f, zp);
  third.lo = third.lo + -0x1.555556p-27f;
  ls_df r = ls_two_prod(z.hi, third.hi);
  r.lo = r.lo + (z.hi * third.lo + z.lo * third.hi);
  ls_df sr = ls_two_prod(sh, r.hi);
  sr.lo = sr.lo + (sh * r.lo + sl * r.hi);
  ls_df at = ls_fast_two_sum(sh, sr.hi);
  at.lo = at.lo + (sr.lo + sl);
  // log2(m) = atanh(s) 2/ln2
  ls_df l = ls_two_prod(at.hi, 0x1.715476p+1f);
  l.lo = l.lo + (at.hi * 0x1.4ae0cp-25f + at.lo * 0x1.715476p+1f);
  ls_df t = ls_fast_two_sum((float)k, l.hi);
  return ls_fast_two_sum(t.hi, t.lo + l.lo);
}
// 2^(hi + lo) for |hi| <= 320, |lo| <= 2^-10: hi = k + r, |r| <= 1/2, 2^r = 1 + r ln2 + r^2 Q(r)
// with r ln2 and 1 + r ln2 as pairs.
FN float ls_exp2_pair(float hi, float lo) {
  float kf = ls_round(hi);
  int32_t k = (int32_t)kf;
  float r = hi - kf;
  ls_df rl = ls_two_prod(r, 0x1.62e43p-1f);
  rl.lo = rl.lo + r * -0x1.05c61p-29f;
  float q = r * r * (0x1.ebfbep-3f + r * (0x1.c6b08ep-5f + r * (0x1.3b2a64p-7f + r * (0x1.5d86fp-10f +
            r * (0x1.44051p-13f + r * 0x1.011b7ep-16f)))));
  ls_df s = ls_fast_two_sum(1.0f, rl.hi);
  float t = s.lo + (rl.lo + q);
  return ls_ldexp_pair(s.hi, t + lo * 0x1.62e43p-1f * (s.hi + t), k);  // 2^lo = 1 + lo ln2 to 2^-40
}
// pow as C's pow (C99 Annex F) on float: x^y = 2^(y log2|x|), y log2|x| as a pair.
FN float ls_pow(float x, float y) {
  if (y == 0.0f || x == 1.0f) return 1.0f;
  if (x != x || y != y) return ls_nan();
  if (y == 1.0f) return x;
  if (y == 2.0f) return x * x;
  if (y == -1.0f) return 1.0f / x;
  float ax = ls_fabs(x), ay = ls_fabs(y);
  int32_t odd = ay < 0x1p24f && (float)(int32_t)ay == ay && ((int32_t)ay & 1) != 0;
  int32_t whole = ay >= 0x1p24f || (float)(int32_t)ay == ay;
  float sign = (ls_as_uint(x) >> 31) != 0u && odd ? -1.0f : 1.0f;
  if (ay == ls_inf()) {
    if (ax == 1.0f) return 1.0f;
    return (ax < 1.0f) == (y < 0.0f) ? ls_inf() : 0.0f;
  }
  if (ax == 0.0f) return y < 0.0f ? sign * ls_inf() : sign * 0.0f;
  if (ax == ls_inf()) return y < 0.0f ? sign * 0.0f : sign * ls_inf();
  if (x < 0.0f && !whole) return ls_nan();
  ls_df l = ls_log2_pair(ax);
  float z = y * l.hi;
  if (z > 320.0f) return sign * ls_inf();
  if (z < -320.0f) return sign * 0.0f;
  ls_df p = ls_two_prod(y, l.hi);
  ls_df e = ls_fast_two_sum(p.hi, p.lo + y * l.lo);
  return sign * ls_exp2_pair(e.hi, e.lo);
}
)";

// The documented bounds (docs/math.md "Accuracy"): the worst over all 2^32 float32 inputs on
// the cpu, rounded up to 0.01 (pow: 0.647 over 2^28 pairs, bound 0.70); every target computes
// the same bits. Then the cpu's worst cases of `lockstep ulp` at its default points, which the
// docs quote and the host test re-measures.
const MathFnInfo kInfo[] = {
    {MathFn::Exp, "exp", "Exp", "ls_exp", 0.69, 0.6575, 27.379713f, 0.0f},
    {MathFn::Log, "log", "Log", "ls_log", 0.66, 0.6075, 0.7009268f, 0.0f},
    {MathFn::Tanh, "tanh", "Tanh", "ls_tanh", 0.57, 0.5611, -0.5330992f, 0.0f},
    {MathFn::Erf, "erf", "Erf", "ls_erf", 0.66, 0.6330, -1.5227587f, 0.0f},
    {MathFn::Pow, "pow", "Pow", "ls_pow", 0.70, 0.6257, -3.1832744e-05f, -7.0f},
    {MathFn::Sigmoid, "sigmoid", "Sigmoid", "ls_sigmoid", 0.68, 0.6569, -36.387035f, 0.0f},
};

}  // namespace

const char* math_library_source() { return kLibrary; }

const MathFnInfo& math_fn_info(MathFn fn) {
  for (const MathFnInfo& i : kInfo)
    if (i.fn == fn) return i;
  throw InternalError("internal: no math library entry for function " + std::to_string(static_cast<int>(fn)));
}

}  // namespace lockstep::codegen
