#include "verify/compare.h"

#include <cmath>
#include <sstream>

namespace lockstep {

Agreement compare(const RefTensor& a, const RefTensor& r) {
  Agreement m;
  if (a.shape != r.shape) { m.shape_match = false; m.cosine = 0; m.rel_l2 = INFINITY; return m; }
  double dot = 0, na = 0, nr = 0, nd = 0;
  int64_t n = r.numel(), finite = 0;
  for (int64_t k = 0; k < n; ++k) {
    double x = a.get(k), y = r.get(k);
    if (!std::isfinite(x) || !std::isfinite(y)) {
      bool same = (std::isnan(x) && std::isnan(y)) || x == y;
      if (!same) ++m.nonfinite_mismatches;
      continue;
    }
    ++finite;
    double d = x - y;
    dot += x * y; na += x * x; nr += y * y; nd += d * d;
    if (std::fabs(d) > m.max_abs) { m.max_abs = std::fabs(d); m.max_abs_index = k; }
  }
  if (na == 0 && nr == 0) m.cosine = 1;
  else if (na == 0 || nr == 0) m.cosine = 0;
  else m.cosine = dot / std::sqrt(na * nr);
  m.rel_l2 = nr > 0 ? std::sqrt(nd / nr) : std::sqrt(nd);
  m.rms_ratio = nr > 0 ? std::sqrt(nd / nr) : (nd > 0 ? INFINITY : 0);
  (void)finite;
  return m;
}

bool agrees(const Agreement& a, const Tolerance& tol) {
  return a.shape_match && a.nonfinite_mismatches == 0 && a.cosine >= tol.min_cosine &&
         a.rel_l2 <= tol.max_rel_l2;
}

std::string allclose_mismatch(const RefTensor& a, const RefTensor& e, double rtol, double atol) {
  std::ostringstream os;
  if (a.dtype != e.dtype) {
    os << "dtype " << dtype_name(a.dtype) << ", expected " << dtype_name(e.dtype);
    return os.str();
  }
  if (a.shape != e.shape) {
    os << "shape " << shape_str(a.shape) << ", expected " << shape_str(e.shape);
    return os.str();
  }
  int64_t bad = 0, worst = -1;
  double worst_excess = -1;
  for (int64_t k = 0; k < e.numel(); ++k) {
    if (!a.is_float()) {
      if (a.i[k] != e.i[k]) { ++bad; if (worst < 0) worst = k; }
      continue;
    }
    double x = a.f[k], y = e.f[k];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) { ++bad; if (worst < 0) worst = k; }
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) { ++bad; if (worst < 0) worst = k; }
      continue;
    }
    double excess = std::fabs(x - y) - (atol + rtol * std::fabs(y));
    if (excess > 0) {
      ++bad;
      if (excess > worst_excess) { worst_excess = excess; worst = k; }
    }
  }
  if (bad == 0) return "";
  os << bad << " of " << e.numel() << " elements differ; at flat index " << worst << ": got "
     << a.get(worst) << ", expected " << e.get(worst);
  return os.str();
}

}  // namespace lockstep
