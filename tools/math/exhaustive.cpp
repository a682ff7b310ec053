// Every float32 input (or, for pow, N pairs) through lockstep's math library compiled alone,
// against glibc's double functions: the exhaustive column of docs/math.md. Built and run by
// tools/math/exhaustive.sh, which puts the library's text in "math_library.inc".
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static inline float ls_as_float(uint32_t x) { float f; std::memcpy(&f, &x, 4); return f; }
static inline uint32_t ls_as_uint(float f) { uint32_t x; std::memcpy(&x, &f, 4); return x; }
#include "math_library.inc"

// As verify/math_ulp.cpp's ulp_error.
static double ulp_error(double exact, float got) {
  if (std::isnan(exact) || std::isnan(got)) return std::isnan(exact) && std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(exact)) return (double)got == exact ? 0 : INFINITY;
  if (std::isinf((float)exact) && got == (float)exact) return 0;
  if (got == 0 && std::signbit(got) != std::signbit(exact)) return INFINITY;
  double g = std::isinf(got) ? std::copysign(0x1p128, (double)got) : (double)got;
  int e = 0;
  std::frexp(std::fabs(exact), &e);
  int binade = e - 1 < -126 ? -126 : e - 1 > 127 ? 127 : e - 1;
  return std::fabs(g - exact) / std::ldexp(1.0, binade - 23);
}

static double sigmoid(double x) {  // as the reference (ops/elementwise.cpp)
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

static uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static double unit(uint64_t& s) { return (double)(splitmix(s) >> 11) * 0x1p-53; }

struct Worst {
  double ulp = 0;
  float x = 0, y = 0, got = 0;
  long long above_half = 0;
  void add(double u, float xv, float yv, float g) {
    if (u > 0.5) ++above_half;
    if (u > ulp) ulp = u, x = xv, y = yv, got = g;
  }
};

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s exp|log|tanh|erf|sigmoid|pow [pairs]\n", argv[0]);
    return 2;
  }
  std::string fn = argv[1];
  Worst all;
  if (fn == "pow") {  // pairs as docs/math.md says: a quarter of each kind
    long long n = argc > 2 ? std::atoll(argv[2]) : (1LL << 28);
#pragma omp parallel
    {
      Worst w;
#pragma omp for schedule(static)
      for (long long i = 0; i < n; ++i) {
        uint64_t s = (uint64_t)i * 7919 + 1;
        int kind = (int)(i % 4);
        float x = kind == 2 ? (float)(0.5 + 1.5 * unit(s)) : ls_as_float((uint32_t)(splitmix(s) % 0x7f7fffffu) + 1u);
        double l = std::log2((double)x), t = -150 + 278 * unit(s);
        float y = l != 0 ? (float)(t / l) : (float)t;
        if (kind == 1) y = (float)std::nearbyint((double)y), x = -x;
        if (kind == 3) y = (float)(-4 + 8 * unit(s));
        float got = ls_pow(x, y);
        w.add(ulp_error(std::pow((double)x, (double)y), got), x, y, got);
      }
#pragma omp critical
      {
        all.above_half += w.above_half;
        if (w.ulp > all.ulp) all.ulp = w.ulp, all.x = w.x, all.y = w.y, all.got = w.got;
      }
    }
    std::printf("pow, %lld pairs: worst %.4f ulp at x=%a (%.9g) y=%a (%.9g), got %a; %lld above 0.5 ulp\n", n, all.ulp,
                all.x, all.x, all.y, all.y, all.got, all.above_half);
    return 0;
  }
#pragma omp parallel
  {
    Worst w;
#pragma omp for schedule(static)
    for (long long i = 0; i < (1LL << 32); ++i) {
      float x = ls_as_float((uint32_t)i), got;
      double exact;
      if (fn == "exp") got = ls_exp(x), exact = std::exp((double)x);
      else if (fn == "log") got = ls_log(x), exact = std::log((double)x);
      else if (fn == "tanh") got = ls_tanh(x), exact = std::tanh((double)x);
      else if (fn == "erf") got = ls_erf(x), exact = std::erf((double)x);
      else got = ls_sigmoid(x), exact = sigmoid((double)x);
      w.add(ulp_error(exact, got), x, 0, got);
    }
#pragma omp critical
    {
      all.above_half += w.above_half;
      if (w.ulp > all.ulp) all.ulp = w.ulp, all.x = w.x, all.got = w.got;
    }
  }
  std::printf("%s, all 2^32 inputs: worst %.4f ulp at x=%a (%.9g), got %a; %lld above 0.5 ulp\n", fn.c_str(), all.ulp, all.x,
              all.x, all.got, all.above_half);
  return 0;
}
