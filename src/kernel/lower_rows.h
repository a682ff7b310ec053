// Rows of a tensor folded along some axes: the indexing shared by the reductions and the
// normalisations (lower_reduce.cpp, lower_normalization.cpp).
#pragma once
#include "kernel/lower_ctx.h"

namespace lockstep::kir {

// Index into `x` for an output with kept (size-1) reduced dims: reduced dim k reads the
// reduction var instead. `axes` sorted; reduction vars start at `first`.
std::vector<ExprP> reduced_index(size_t rank, const std::vector<int64_t>& axes, bool keepdims, int first);
// Index into a buffer of the kept shape (reduced dims 1) from the output's vars.
std::vector<ExprP> kept_index(size_t rank, const std::vector<int64_t>& axes, bool keepdims);

// The rows of `x` over `axes`: their extents and the shape with those dims 1.
struct Rows {
  Shape kept, extents;
  int64_t count = 1;
};
Rows rows_of(const Shape& xs, const std::vector<int64_t>& axes);

// Each row folded by fn (Max, Min) into a temp of the kept shape; returns the buffer.
int row_fold(Lowering& L, int n, int x, const std::vector<int64_t>& axes, Fn fn);

// Softmax (or LogSoftmax) of `x` over `axes` at the output's vars, in the widened type:
// callers narrow it once where they store.
ExprP softmax_widened(Lowering& L, int n, int x, const std::vector<int64_t>& axes, bool log);

}  // namespace lockstep::kir
