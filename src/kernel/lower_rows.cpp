// Rows of a tensor folded along some axes: the indexing shared by the reductions and the
// normalisations.
#include "kernel/lower_rows.h"

#include <algorithm>

namespace lockstep::kir {

namespace {

ExprP v(int64_t k) { return var(static_cast<int>(k)); }

}  // namespace

static bool is_axis(const std::vector<int64_t>& axes, size_t k) {
  return std::find(axes.begin(), axes.end(), static_cast<int64_t>(k)) != axes.end();
}

// Index into `x` for an output with kept (size-1) reduced dims: reduced dim k reads the
// reduction var instead. `axes` sorted; reduction vars start at `first`.
std::vector<ExprP> reduced_index(size_t rank, const std::vector<int64_t>& axes, bool keepdims, int first) {
  std::vector<ExprP> idx;
  size_t out_k = 0, red_k = 0;
  for (size_t k = 0; k < rank; ++k) {
    if (is_axis(axes, k)) {
      idx.push_back(v(first + red_k++));
      if (keepdims) ++out_k;
    } else {
      idx.push_back(v(out_k++));
    }
  }
  return idx;
}

// Index into a buffer of the kept shape (reduced dims 1) from the output's vars.
std::vector<ExprP> kept_index(size_t rank, const std::vector<int64_t>& axes, bool keepdims) {
  std::vector<ExprP> idx;
  size_t out_k = 0;
  for (size_t k = 0; k < rank; ++k) {
    bool reduced = is_axis(axes, k);
    idx.push_back(reduced ? icst(0) : v(out_k));
    if (!reduced || keepdims) ++out_k;
  }
  return idx;
}

Rows rows_of(const Shape& xs, const std::vector<int64_t>& axes) {
  Rows r{xs, {}, 1};
  for (int64_t a : axes) {
    r.kept[a] = 1;
    r.extents.push_back(xs[a]);
    r.count *= xs[a];
  }
  return r;
}

// Each row's maximum or minimum into a temp of the kept shape (NaN wins, as in ls_max_nan).
int row_fold(Lowering& L, int n, int x, const std::vector<int64_t>& axes, Fn fn) {
  const Shape& xs = L.shape(x);
  int r = static_cast<int>(xs.size());
  ExprP body = reduce(fn, L.read(x, reduced_index(xs.size(), axes, true, r)), r, rows_of(xs, axes).extents);
  return L.emit_temp(n, L.type(x).dtype, rows_of(xs, axes).kept, body);
}

}  // namespace lockstep::kir
