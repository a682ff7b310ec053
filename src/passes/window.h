// A reduction's input window: the run of a buffer's last dim that one tile of a 1-D conv reads.
// A conv's term loads its input at [.., ci, c0 + s * t + d * k] (t the output column, k the tap),
// so the columns lo .. lo + n - 1 of a tile read positions c0 + s * lo + p for p in
// [0, s * (n - 1) + d * (K - 1)] of each input row: a tile can copy that run once (computing the
// producer of the input there, a pad or a LeakyRelu, instead of a kernel of its own) and every
// row and tap of the tile then reads the copy.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "kernel/kernel.h"

namespace lockstep::kir {

struct WindowShape {
  // The buffer's index but the last, as expressions of the output's outer vars and of row_vars:
  // the same for every column and tap of a tile.
  std::vector<ExprP> lead;
  ExprP start;           // c0: of the output's outer vars only (a transposed conv's phase)
  int64_t stride = 1;    // s: positions per output column
  int tap = -1;          // the reduction var k of the last index (-1: none)
  int64_t dilation = 0;  // d: positions per tap
  int64_t taps = 1;      // K: the tap var's extent (1 without one)
  // The reduction vars but the tap, outermost first, and their extents: a window row for each
  // of their values (a conv's input channels).
  std::vector<int> row_vars;
  std::vector<int64_t> row_extents;
  // Positions a tile of `lanes` columns reads in each row: s * (lanes - 1) + d * (K - 1) + 1.
  int64_t width(int64_t lanes) const { return stride * (lanes - 1) + dilation * (taps - 1) + 1; }
  int64_t rows() const;
};

// How kernel k's reduction term reads buffer `buf` through a window, or nullopt where it does
// not: `buf` loaded exactly once in k's body, in the term of its reduction, at a last index
// c0 + s * column + d * tap (s >= 1, d >= 0, c0 of outer vars), the other indices naming neither
// the column, the tile's row var (the dim before the last) nor the tap. A flat load (a symbolic
// plan's) qualifies where its index is row * (last dim) + that, with both parts in range at every
// point of k's loops. Every row of a tile then reads the same window, and each tap a shift of it.
std::optional<WindowShape> window_shape(const Plan& p, const Kernel& k, int buf);

}  // namespace lockstep::kir
