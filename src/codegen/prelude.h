// The helper functions every generated program starts with, written once for all targets.
#pragma once
#include <string>

#include "codegen/dialect.h"

namespace lockstep::codegen {

// The dialect's conversions, then the shared helpers (bf16, sigmoid, integer abs/min/max/
// division/power, NaN-propagating max) qualified with its `fn`; f64 ones only if it has f64.
std::string helper_functions(const CDialect& d);

}  // namespace lockstep::codegen
