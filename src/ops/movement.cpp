// Data-movement ops: they rearrange elements without computing with them, so every dtype
// goes through the same code (RefTensor::copy_elem). Implementations live in movement_*.cpp.
#include "ops/movement_common.h"

namespace lockstep {

static constexpr int kVariadic = 1 << 20;

static const OpDef kMovementOps[] = {
    {"Identity", 1, 1, 1, 1, {}, infer_identity, ref_identity},
    {"Reshape", 2, 2, 1, 1, {"allowzero"}, infer_reshape, ref_reshape},
    {"Flatten", 1, 1, 1, 1, {"axis"}, infer_flatten, ref_flatten},
    {"Squeeze", 1, 2, 1, 1, {"axes"}, infer_squeeze, ref_squeeze},
    {"Unsqueeze", 1, 2, 1, 1, {"axes"}, infer_unsqueeze, ref_unsqueeze},
    {"Slice", 1, 5, 1, 1, {"starts", "ends", "axes"}, infer_slice, ref_slice},
    {"Split", 1, 2, 1, kVariadic, {"axis", "split", "num_outputs"}, infer_split, ref_split},
    {"Concat", 1, kVariadic, 1, 1, {"axis"}, infer_concat, ref_concat},
    {"Transpose", 1, 1, 1, 1, {"perm"}, infer_transpose, ref_transpose},
    {"DepthToSpace", 1, 1, 1, 1, {"blocksize", "mode"}, infer_block_move, ref_block_move},
    {"SpaceToDepth", 1, 1, 1, 1, {"blocksize", "mode"}, infer_block_move, ref_block_move},
    {"Tile", 2, 2, 1, 1, {}, infer_tile, ref_tile},
    {"Expand", 2, 2, 1, 1, {}, infer_expand, ref_expand},
    {"Gather", 2, 2, 1, 1, {"axis"}, infer_gather, ref_gather},
    {"GatherElements", 2, 2, 1, 1, {"axis"}, infer_gather_elements, ref_gather_elements},
    {"GatherND", 2, 2, 1, 1, {"batch_dims"}, infer_gather_nd, ref_gather_nd},
    {"Pad", 1, 4, 1, 1, {"mode", "pads", "value"}, infer_pad, ref_pad},
    {"CenterCropPad", 2, 2, 1, 1, {"axes"}, infer_center_crop_pad, ref_center_crop_pad},
};

std::span<const OpDef> movement_ops() { return kMovementOps; }

}  // namespace lockstep
