// lockstep's own float32 math library: exp, log, tanh, erf, pow and sigmoid written once in
// the shared prelude, so that every compiled target runs the same algorithm and, each step
// being a correctly rounded IEEE operation, gets the same bits (docs/math.md).
#pragma once
#include <string>

namespace lockstep::codegen {

// The library's text: ls_exp, ls_log, ls_tanh, ls_erf, ls_pow, ls_sigmoid (float32) and their
// helpers, with "FN " where the dialect's qualifier of helper functions goes (prelude.cpp puts
// it there). It needs only the fixed-width integer typedefs, the dialect's ls_as_float /
// ls_as_uint and ls_fma (prelude.cpp: the dialect's fused multiply-add), and compiles unchanged
// as C++17 (host compiler, NVRTC), OpenCL C 1.2 and the Metal Shading Language: no headers,
// templates, overloads, tables or other library calls; only + - * / (correctly rounded, no
// contraction into FMA), ls_fma where written, comparisons and casts.
const char* math_library_source();

// The functions the library provides, in the order tables list them.
enum class MathFn { Exp, Log, Tanh, Erf, Pow, Sigmoid };
inline constexpr MathFn kMathFns[] = {MathFn::Exp, MathFn::Log, MathFn::Tanh, MathFn::Erf, MathFn::Pow, MathFn::Sigmoid};

struct MathFnInfo {
  MathFn fn;
  const char* name;      // "exp": the ONNX op is this capitalised ("Exp")
  const char* op;        // the ONNX op computing it
  const char* function;  // the library's function: "ls_exp"
  // The documented bound, in ulp of float32 against the float64 reference, that holds for
  // every input on every target (docs/math.md; tests/math_ulp_test.cpp asserts it).
  double bound_ulp;
  // The worst case found by the cpu sweep of `lockstep ulp` at its default points (docs/math.md
  // quotes it; the host test re-measures it): ulp and the input (y for pow; 0 otherwise).
  double cpu_worst_ulp;
  float cpu_worst_x, cpu_worst_y;
};

const MathFnInfo& math_fn_info(MathFn fn);

}  // namespace lockstep::codegen
