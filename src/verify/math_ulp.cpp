#include "verify/math_ulp.h"
#include "backend/registry.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/random.h"
#include "core/sha256.h"
#include "graph/builder.h"
#include "ref/interpreter.h"

namespace lockstep {

namespace {

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// The floats around each edge (two steps either side of the nearest float).
void add_edges(std::vector<float>& v, std::initializer_list<double> edges) {
  for (double e : edges) {
    float f = static_cast<float>(e);
    float lo = std::nextafter(std::nextafter(f, -INFINITY), -INFINITY);
    for (int k = 0; k < 5; ++k, lo = std::nextafter(lo, INFINITY)) v.push_back(lo);
  }
}

std::vector<float> unary_specials(MathFn fn) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float tiny = std::numeric_limits<float>::denorm_min(), least = std::numeric_limits<float>::min();
  const float most = std::numeric_limits<float>::max();
  std::vector<float> v = {0.0f, -0.0f, inf, -inf, nan, -nan, tiny, -tiny, least, -least, most, -most,
                          1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f};
  switch (fn) {  // where results overflow, turn subnormal or round to a constant, and where the library switches
    case MathFn::Exp: add_edges(v, {std::log(0x1p128), std::log(0x1p-126), std::log(0x1p-149), std::log(0x1p-150), 0.3466, -0.3466}); break;
    case MathFn::Log: add_edges(v, {1.0, std::sqrt(2.0), std::sqrt(0.5), 0x1p-126, 0x1p-149, 0x1p-100}); break;
    case MathFn::Tanh: add_edges(v, {0x1p-12, 0.55, -0.55, 9.01, 10.0, -10.0}); break;
    case MathFn::Erf: add_edges(v, {0x1p-60, 0.84, -0.84, 1.5, -1.5, 3.92, 4.0, -4.0, 0x1p-126}); break;
    case MathFn::Sigmoid: add_edges(v, {17.33, -87.33, -103.28, -103.97, -104.0, 104.0, 0.0}); break;
    case MathFn::Pow: break;
  }
  return v;
}

// The dense part of a unary sweep: where the function is neither constant nor over/underflowing.
void dense_range(MathFn fn, double& lo, double& hi) {
  switch (fn) {
    case MathFn::Exp: lo = -104, hi = 89; return;
    case MathFn::Log: lo = 0, hi = 4; return;
    case MathFn::Tanh: lo = -10, hi = 10; return;
    case MathFn::Erf: lo = -4.5, hi = 4.5; return;
    case MathFn::Sigmoid: lo = -105, hi = 20; return;
    case MathFn::Pow: lo = hi = 0; return;
  }
}

std::vector<float> pow_specials() {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  return {0.0f, -0.0f, inf, -inf, nan, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f, 2.5f, -2.5f, 0.1f, 7.0f,
          -7.0f, 10.0f, 1e10f, -1e10f, 1e-10f, std::numeric_limits<float>::denorm_min(),
          -std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
          -std::numeric_limits<float>::max(), std::nextafter(1.0f, 0.0f), std::nextafter(1.0f, 2.0f), 0x1p24f, 0x1p25f,
          16777215.0f, -16777215.0f, 126.0f, 127.0f, 128.0f, 149.0f, 150.0f, -126.0f, -149.0f, -150.0f, 0.33333334f};
}

MathSweep pow_sweep(int64_t points) {
  MathSweep s;
  std::vector<float> sp = pow_specials();
  for (float x : sp)
    for (float y : sp) s.x.push_back(x), s.y.push_back(y);
  // A grid of strided bit patterns: every sign and binade of both, mostly the special cases.
  int64_t g = static_cast<int64_t>(std::sqrt(static_cast<double>(points / 4)));
  uint64_t stride = g > 0 ? (uint64_t{1} << 32) / static_cast<uint64_t>(g) : 1;
  for (int64_t i = 0; i < g; ++i)
    for (int64_t j = 0; j < g; ++j) {
      s.x.push_back(from_bits(static_cast<uint32_t>(static_cast<uint64_t>(i) * stride + stride / 3)));
      s.y.push_back(from_bits(static_cast<uint32_t>(static_cast<uint64_t>(j) * stride + stride / 7)));
    }
  // Pairs with a finite, mostly normal result: y log2|x| spread over [-150, 128].
  SplitMix64 rng(0x6c6f636b73746570ULL);  // "lockstep"
  for (int64_t i = 0; static_cast<int64_t>(s.x.size()) < points; ++i) {
    int kind = static_cast<int>(i % 4);
    float x = kind == 2 ? static_cast<float>(rng.uniform(0.5, 2.0))
                        : from_bits(static_cast<uint32_t>(rng.next() % 0x7f7fffffu) + 1u);  // finite, > 0
    double t = rng.uniform(-150.0, 128.0), l = std::log2(static_cast<double>(x));
    float y = l != 0 ? static_cast<float>(t / l) : static_cast<float>(t);
    if (kind == 1) {  // negative base, integer exponent: the sign is the exponent's parity
      y = static_cast<float>(std::nearbyint(static_cast<double>(y)));
      x = -x;
    }
    if (kind == 3) y = static_cast<float>(rng.uniform(-4.0, 4.0));
    s.x.push_back(x);
    s.y.push_back(y);
  }
  return s;
}

}  // namespace

MathSweep math_sweep(MathFn fn, int64_t points) {
  if (points < 16) throw Error("a math sweep needs at least 16 points, not " + std::to_string(points));
  if (fn == MathFn::Pow) return pow_sweep(points);
  MathSweep s;
  int64_t strided = points / 2, dense = points - strided;
  uint64_t stride = (uint64_t{1} << 32) / static_cast<uint64_t>(strided);
  for (int64_t i = 0; i < strided; ++i) s.x.push_back(from_bits(static_cast<uint32_t>(static_cast<uint64_t>(i) * stride)));
  double lo = 0, hi = 0;
  dense_range(fn, lo, hi);
  for (int64_t i = 0; i < dense; ++i)
    s.x.push_back(static_cast<float>(lo + (hi - lo) * (static_cast<double>(i) + 0.5) / static_cast<double>(dense)));
  for (float v : unary_specials(fn)) s.x.push_back(v);
  return s;
}

Graph math_graph(MathFn fn, int64_t n) {
  GraphBuilder b(17);
  std::vector<int> ins = {b.input("x", DType::f32, {dim(1), dim(n)})};
  if (fn == MathFn::Pow) ins.push_back(b.input("y", DType::f32, {dim(1), dim(n)}));
  int out = b.op(codegen::math_fn_info(fn).op, std::string(codegen::math_fn_info(fn).name) + "_under_test", ins);
  b.output(out);
  return b.finish();
}

TensorMap math_inputs(MathFn fn, const MathSweep& s) {
  auto row = [](const std::vector<float>& v) {
    Tensor t(DType::f32, {1, static_cast<int64_t>(v.size())});
    std::memcpy(t.bytes.data(), v.data(), v.size() * sizeof(float));
    return t;
  };
  TensorMap in = {{"x", row(s.x)}};
  if (fn == MathFn::Pow) in["y"] = row(s.y);
  return in;
}

double ulp_error(double exact, float got) {
  const double inf = std::numeric_limits<double>::infinity();
  if (std::isnan(exact) || std::isnan(got)) return std::isnan(exact) && std::isnan(got) ? 0 : inf;
  if (std::isinf(exact)) return static_cast<double>(got) == exact ? 0 : inf;
  float rounded = static_cast<float>(exact);
  if (std::isinf(rounded) && got == rounded) return 0;  // overflow, correctly rounded
  if (got == 0 && std::signbit(got) != std::signbit(exact)) return inf;  // a zero of the wrong sign
  double g = std::isinf(got) ? std::copysign(0x1p128, static_cast<double>(got)) : static_cast<double>(got);
  int e = 0;
  std::frexp(std::fabs(exact), &e);  // |exact| in [2^(e-1), 2^e)
  int binade = std::max(-126, std::min(127, e - 1));
  return std::fabs(g - exact) / std::ldexp(1.0, binade - 23);
}

UlpResult worst_ulp(MathFn fn, const MathSweep& s, const std::vector<double>& exact, const std::vector<float>& got) {
  if (exact.size() != s.x.size() || got.size() != s.x.size())
    throw InternalError("internal: a math sweep of " + std::to_string(s.x.size()) + " points has " +
                        std::to_string(exact.size()) + " exact values and " + std::to_string(got.size()) + " results");
  UlpResult r;
  r.fn = fn;
  r.points = static_cast<int64_t>(s.x.size());
  bool first = true;
  for (size_t k = 0; k < got.size(); ++k) {
    double u = ulp_error(exact[k], got[k]);
    if (u > 0.5) ++r.above_half;
    if (first || u > r.worst_ulp) {
      first = false;
      r.worst_ulp = u;
      r.x = s.x[k];
      r.y = s.y.empty() ? 0.0f : s.y[k];
      r.got = got[k];
      r.exact = exact[k];
    }
  }
  return r;
}

std::vector<double> math_reference(MathFn fn, const MathSweep& s) {
  Graph g = math_graph(fn, static_cast<int64_t>(s.x.size()));
  return run_reference(g, math_inputs(fn, s)).at(0).f;
}

UlpResult measure_ulp(const std::string& target, MathFn fn, int64_t points, const CompileOptions& opts) {
  MathSweep s = math_sweep(fn, points);
  Graph g = math_graph(fn, static_cast<int64_t>(s.x.size()));
  TensorMap in = math_inputs(fn, s);
  std::vector<Tensor> out = compile(g, target, opts)->run(in);
  if (out.size() != 1 || out[0].dtype != DType::f32 || out[0].numel() != static_cast<int64_t>(s.x.size()))
    throw InternalError("internal: the " + std::string(codegen::math_fn_info(fn).op) + " sweep on " + target +
                        " returned no float32 output of its size");
  std::vector<float> got(out[0].data<float>(), out[0].data<float>() + out[0].numel());
  UlpResult r = worst_ulp(fn, s, run_reference(g, in).at(0).f, got);
  r.target = target;
  r.sha256 = sha256_hex(got.data(), got.size() * sizeof(float));
  return r;
}

std::string float_text(float v) {
  char buf[64];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v || std::isnan(v)) break;
  }
  return buf;
}

}  // namespace lockstep
