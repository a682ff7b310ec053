// RotaryEmbedding (opset 23): the geometry the shape rule, the reference and the lowering share.
#pragma once
#include "ops/op.h"

namespace lockstep {

// Input [B, H, S, D] or [B, S, H*D] (num_heads); the first `rotated` dims of each head turn,
// pairwise (halves, or neighbours when interleaved), by the caches' angle at the position.
struct RotaryGeom {
  bool three_d = false, interleaved = false, by_position = false;
  int64_t batch = -1, heads = -1, seq = -1, head = -1, rotated = -1, positions = -1;
};

// From the input and cache shapes (`positions` the position_ids' presence); unknown dims -1.
RotaryGeom rotary_geom(const OpCtx& c, const Shape& x, const Shape& cache, bool positions);

}  // namespace lockstep
