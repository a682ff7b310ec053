// Agreement metrics between a result and a reference, as docs/why.md defines "agree".
#pragma once
#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace lockstep {

struct Agreement {
  double cosine = 1;          // 1 when both are all-zero
  double rel_l2 = 0;          // ||a - r|| / ||r|| (||a - r|| when r is all-zero)
  double max_abs = 0;         // max |a - r| over finite positions
  int64_t max_abs_index = -1;
  double rms_ratio = 0;       // RMS(a - r) / RMS(r)
  int64_t nonfinite_mismatches = 0;  // positions where NaN/Inf differ between a and r
  bool shape_match = true;
};

// Compares element-wise in float64. Shapes must match (else shape_match = false).
Agreement compare(const RefTensor& result, const RefTensor& reference);

struct Tolerance {
  double min_cosine = 0.99999;
  double max_rel_l2 = 1e-4;
};
bool agrees(const Agreement& a, const Tolerance& tol = {});

// numpy.testing.assert_allclose's rule: |a - e| <= atol + rtol * |e|, NaN where NaN.
// Returns an empty string when it holds, else a one-line description of the worst element.
std::string allclose_mismatch(const RefTensor& actual, const RefTensor& expected, double rtol, double atol);

}  // namespace lockstep
