// How far a target's float32 math functions (codegen/math_library.h) are from the float64
// reference, in ulp: a dense sweep of float32 inputs through a one-node graph of the function's
// ONNX op, run on the target and on `ref`. `lockstep ulp` prints it; tests assert the
// documented bounds with it (docs/math.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/math_library.h"
#include "graph/graph.h"
#include "runtime/program.h"

namespace lockstep {

using codegen::MathFn;

// `lockstep ulp`'s default number of points per function (the docs' figures are for it).
inline constexpr int64_t kUlpDefaultPoints = int64_t{1} << 22;

// The inputs of one sweep, the same on every host: for a unary function, half the points are
// float32 bit patterns at an even stride over all 2^32 (every sign, binade, subnormal, NaN),
// the other half evenly spaced over the function's interesting range, then the special values
// (+-0, +-inf, NaN, the extremes and the function's overflow and underflow edges). For pow, x
// and y: every pair of special values, a grid of strided bit patterns, and pairs whose result
// is finite and normal (y = t / log2|x|), half of them with an integer y and a negative x.
struct MathSweep {
  std::vector<float> x, y;  // y: pow only
};
MathSweep math_sweep(MathFn fn, int64_t points);

// The one-node graph computing `fn` over [1, n] float32 inputs "x" (and "y" for pow).
Graph math_graph(MathFn fn, int64_t n);
TensorMap math_inputs(MathFn fn, const MathSweep& s);

// |got - exact| in ulp of float32 where the exact value lies: 2^(e - 23) in the binade
// [2^e, 2^(e+1)) holding |exact| (2^-149 below 2^-126; infinity counts as 2^128). 0 when got is
// the correctly rounded infinity; infinity (not a number of ulp) when got and exact disagree
// on NaN, on an infinity or on the sign of a zero result.
double ulp_error(double exact, float got);

struct UlpResult {
  MathFn fn = MathFn::Exp;
  std::string target;
  int64_t points = 0;
  double worst_ulp = 0;  // infinity: a special value wrong
  float x = 0, y = 0;    // the input that gave it (y: pow)
  float got = 0;
  double exact = 0;
  int64_t above_half = 0;  // points not correctly rounded (error > 0.5 ulp)
  std::string sha256;      // of the target's results: equal on targets that agree bit for bit
};

// The worst case of values computed by a target against the exact values.
UlpResult worst_ulp(MathFn fn, const MathSweep& s, const std::vector<double>& exact, const std::vector<float>& got);

// The float64 reference (`ref` on the graph) for a sweep.
std::vector<double> math_reference(MathFn fn, const MathSweep& s);

// The sweep run on `target` against the reference. Throws Error when the target cannot run.
UlpResult measure_ulp(const std::string& target, MathFn fn, int64_t points, const CompileOptions& opts = {});

// "1.5e+3" style for inputs: the shortest text that reads back as the same float32.
std::string float_text(float v);

}  // namespace lockstep
