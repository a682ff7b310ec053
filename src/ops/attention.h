// Attention (opset 23): the sizes and attributes that the shape rule, the float64 reference and
// the lowering all read, so the three agree on one reading of the spec.
#pragma once
#include "ops/op.h"

namespace lockstep {

// Q [B, Hq, S, D] (or [B, S, Hq*D] in 3-D form), K [B, Hkv, new, D], V [B, Hkv, new, Dv],
// past [B, Hkv, P, D or Dv]; keys and values span total = P + new. Unknown dims are -1.
struct AttentionGeom {
  bool three_d = false;
  int64_t batch = -1, q_heads = -1, kv_heads = -1, q_len = -1;
  int64_t past = 0, fresh = -1, total = -1, head = -1, v_head = -1;
  // Query head h reads key/value head h / reps (ONNX's grouped-query interleave).
  int64_t reps() const { return q_heads > 0 && kv_heads > 0 ? q_heads / kv_heads : 1; }
};

// Inputs 0-2 (Q, K, V) and 4-5 (past_key, past_value, each may be null) by shape.
AttentionGeom attention_geom(const OpCtx& c, const Shape& q, const Shape& k, const Shape& v, const Shape* past_k,
                             const Shape* past_v);

struct AttentionAttrs {
  bool causal = false;
  double scale = 0;               // the product's whole scale (the spec's sqrt on each side, multiplied)
  double softcap = 0;             // > 0: scores become softcap * tanh(scores / softcap)
  int mode = 0;                   // qk_matmul_output: 0/1 scores (softcapped), 2 with the bias, 3 softmax
  int64_t left = -1, right = -1;  // sliding window (opset 25); -1 unbounded
  bool windowed() const { return left >= 0 || right >= 0; }
};

AttentionAttrs attention_attrs(const OpCtx& c, int64_t head);

// How attn_mask (rank 1-4) lines up with [B, Hq, S, total]: its dims right-aligned, each the
// target's or 1, except the last, which may be shorter than total (the rest is masked).
// Fails naming the node when it does not.
void check_attention_mask(const OpCtx& c, const Shape& mask, const AttentionGeom& g);

}  // namespace lockstep
