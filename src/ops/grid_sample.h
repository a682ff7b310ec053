// GridSample: the sampling rules the reference and the lowering share. Coordinates are computed
// in float32 (float64 for float64 data), each step rounded, in this order on every target, so
// nearest and the taps pick the same pixels everywhere.
#pragma once
#include "ops/op.h"

namespace lockstep {

struct GridSampleAttrs {
  enum Mode { Nearest, Linear, Cubic } mode = Linear;
  enum Padding { Zeros, Border, Reflection } padding = Zeros;
  bool align = false;
  int taps() const { return mode == Nearest ? 1 : mode == Linear ? 2 : 4; }
  // The valid coordinate range of an axis of length len: [-0.5, len - 0.5], or [0, len - 1]
  // with align_corners.
  double lo(int64_t) const { return align ? 0.0 : -0.5; }
  double hi(int64_t len) const { return align ? len - 1.0 : len - 0.5; }
};

GridSampleAttrs grid_sample_attrs(const OpCtx& c);

// Checks X [N, C, D1..Dk] against grid [N, O1..Ok, k]; k is 2 before opset 20.
void check_grid_sample(const OpCtx& c, const Shape& x, const Shape& grid);

}  // namespace lockstep
