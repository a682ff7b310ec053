// Conv / ConvTranspose geometry shared by the reference and the compiler's lowering, so
// padding rules (auto_pad, output_shape) are decided in one place.
#pragma once
#include "ops/op.h"

namespace lockstep {

struct ConvGeometry {
  int64_t group = 1;
  Shape kernel, strides, dilations, pads_begin, pads_end, output_padding;
  Shape out_spatial;
};

// From the node's attributes and the concrete shapes of X and W; errors name the node.
ConvGeometry conv_geometry(const OpCtx& c, const Shape& x, const Shape& w, bool transpose);
// AveragePool, MaxPool and LpPool (group 1, no output padding); X's spatial dims may be -1.
ConvGeometry pool_geometry(const OpCtx& c, const Shape& x);

}  // namespace lockstep
