// The helper functions every generated program starts with, written once for all targets.
#pragma once
#include <string>

#include "codegen/dialect.h"

namespace lockstep::codegen {

// The dialect's conversions, then the float32 math library (codegen/math_library.h: exp, log,
// tanh, erf, pow, sigmoid), then the shared helpers (bf16, integer abs/min/max/division/power,
// NaN-propagating max), all qualified with its `fn`; f64 ones only if it has f64.
std::string helper_functions(const CDialect& d);

}  // namespace lockstep::codegen
