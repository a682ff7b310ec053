// Resize (and Upsample) as separable taps: each output coordinate of an axis reads a few input
// coordinates with weights, from the op's coordinate transform and interpolation kernel. The
// reference and the lowering share this plan; they differ in how they apply it.
#pragma once
#include <optional>

#include "ops/op.h"

namespace lockstep {

struct ResizeAxis {
  int64_t out = 0;
  int64_t taps = 1;            // per output coordinate, zero-weight taps dropped, padded
  std::vector<int64_t> index;  // [out][taps]: input coordinate, -1 where outside (crop)
  std::vector<double> weight;  // [out][taps]: 0 for padding past count
  std::vector<int64_t> count;  // [out]: taps in use
  bool identity = false;       // out == in and each coordinate reads itself alone
};

struct ResizePlan {
  std::vector<ResizeAxis> axes;  // one per input axis
  bool weighted = false;         // linear or cubic (nearest only picks)
  double extrapolation = 0;      // where a crop falls outside the input
};

// The output dims, or nullopt while scales or sizes are not known. Checks the attributes.
std::optional<Shape> resize_out_dims(const OpCtx& c, const Shape& in, const RefTensor* roi, const RefTensor* scales,
                                     const RefTensor* sizes);
// The full plan; scales or sizes (whichever the node uses) must be known.
ResizePlan resize_plan(const OpCtx& c, const Shape& in, const RefTensor* roi, const RefTensor* scales,
                       const RefTensor* sizes);
// Input slots of roi, scales and sizes at the node's opset (-1 where the opset has none).
struct ResizeSlots {
  int roi = -1, scales = -1, sizes = -1;
};
ResizeSlots resize_slots(const OpCtx& c);

}  // namespace lockstep
