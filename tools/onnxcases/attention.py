#!/usr/bin/env python3
"""Writes Attention conformance cases in ONNX's backend-test layout (model.onnx and
test_data_set_0/{input,output}_N.pb) with expected outputs from a float64 numpy reading of the
spec, independent of lockstep's C++ reference:

    python3 tools/onnxcases/attention.py OUT_DIR

Debian's onnx 1.12 has no Attention (opset 23), so its generate-data cannot make these; this
needs only onnx's helper and numpy_helper. The cases are small enough to live in the tree."""
import sys

import numpy as np
from case import write_case

NEG_INF = -np.inf


def to_4d(x, heads):
    b, s, hidden = x.shape
    return x.reshape(b, s, heads, hidden // heads).transpose(0, 2, 1, 3)


def bias_of(shape, mask, causal, window, offset, nonpad):
    """The additive bias [B or 1, H or 1, S, T]: the mask (padded with masked keys past its
    last dim), the causal and window bounds after `offset` cached keys, the key padding."""
    batch, heads, s, t = shape
    bias = np.zeros((1, 1, s, t))
    if mask is not None:
        m = mask.astype(np.float64) if mask.dtype != np.bool_ else np.where(mask, 0.0, NEG_INF)
        pad = t - m.shape[-1]
        m = np.concatenate([m, np.full(m.shape[:-1] + (pad,), NEG_INF)], axis=-1) if pad else m
        bias = bias + m.reshape((1,) * (4 - m.ndim) + m.shape)
    i = np.arange(s).reshape(1, 1, s, 1)
    j = np.arange(t).reshape(1, 1, 1, t)
    off = np.asarray(offset).reshape(-1, 1, 1, 1)
    allowed = np.ones((off.shape[0], 1, s, t), dtype=bool)
    diff = i + off - j
    if causal:
        allowed &= diff >= 0
    left, right = window
    if left >= 0:
        allowed &= diff <= left
    if right >= 0:
        allowed &= -diff <= right
    if nonpad is not None:
        allowed &= j < nonpad.reshape(-1, 1, 1, 1)
    return bias + np.where(allowed, 0.0, NEG_INF)


def attention(q, k, v, mask=None, past_k=None, past_v=None, nonpad=None, q_heads=None, kv_heads=None,
              scale=None, causal=0, softcap=0.0, mode=0, window=(-1, -1)):
    three_d = q.ndim == 3
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    if three_d:
        q, k, v = to_4d(q, q_heads), to_4d(k, kv_heads), to_4d(v, kv_heads)
    if past_k is not None:
        k = np.concatenate([past_k.astype(np.float64), k], axis=2)
        v = np.concatenate([past_v.astype(np.float64), v], axis=2)
    batch, hq, s, d = q.shape
    t = k.shape[2]
    scale = 1 / np.sqrt(d) if scale is None else scale
    offset = nonpad - s if nonpad is not None else (past_k.shape[2] if past_k is not None else 0)
    bias = bias_of((batch, hq, s, t), mask, causal, window, offset, nonpad)
    reps = hq // k.shape[1]
    kr, vr = np.repeat(k, reps, axis=1), np.repeat(v, reps, axis=1)
    scores = q @ kr.transpose(0, 1, 3, 2) * scale
    if softcap > 0:
        scores = softcap * np.tanh(scores / softcap)
    x = scores + bias
    mx = x.max(axis=-1, keepdims=True)
    e = np.exp(x - np.where(np.isneginf(mx), 0, mx))
    total = e.sum(axis=-1, keepdims=True)
    p = e / np.where(total == 0, 1, total)
    p = np.where(np.isneginf(np.broadcast_to(bias, x.shape).max(axis=-1, keepdims=True)), 0, p)
    y = p @ vr
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(batch, s, -1)
    qk = {0: scores, 1: scores, 2: x, 3: p}[mode]
    return y, k, v, qk


NAMES = ["Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"]
OUTS = ["Y", "present_key", "present_value", "qk_matmul_output"]


def write_attention(root, name, inputs, outputs, attrs, opset):
    """inputs: {index: array}; outputs: the indices of the outputs asked for."""
    ref_args = {key: inputs.get(k) for key, k in {"mask": 3, "past_k": 4, "past_v": 5, "nonpad": 6}.items()}
    ref_attrs = {"q_heads": attrs.get("q_num_heads"), "kv_heads": attrs.get("kv_num_heads"),
                 "scale": attrs.get("scale"), "causal": attrs.get("is_causal", 0),
                 "softcap": attrs.get("softcap", 0.0), "mode": attrs.get("qk_matmul_output_mode", 0),
                 "window": (attrs.get("left_window_size", -1), attrs.get("right_window_size", -1))}
    results = attention(inputs[0], inputs[1], inputs[2], **ref_args, **ref_attrs)
    dtypes = [inputs[0].dtype, inputs[1].dtype, inputs[2].dtype, inputs[0].dtype]
    ins = [(NAMES[k], inputs.get(k)) for k in range(max(inputs) + 1)]
    outs = [(OUTS[k], results[k].astype(dtypes[k]) if k in outputs else None) for k in range(max(outputs) + 1)]
    write_case(root, name, "Attention", ins, outs, attrs, opset)


def main(root):
    rng = np.random.default_rng(23)

    def r(*shape, dtype=np.float32):
        return rng.random(shape).astype(dtype)

    cases = [
        ("4d", {0: r(2, 3, 4, 8), 1: r(2, 3, 6, 8), 2: r(2, 3, 6, 8)}, [0], {}, 23),
        ("3d_gqa_causal", {0: r(2, 4, 72), 1: r(2, 6, 24), 2: r(2, 6, 24)}, [0],
         {"q_num_heads": 9, "kv_num_heads": 3, "is_causal": 1}, 23),
        ("4d_diff_heads_scaled", {0: r(2, 3, 4, 8), 1: r(2, 3, 6, 8), 2: r(2, 3, 6, 10)}, [0], {"scale": 0.1}, 23),
        ("4d_gqa_softcap", {0: r(2, 9, 4, 8), 1: r(2, 3, 6, 8), 2: r(2, 3, 6, 8)}, [0], {"softcap": 2.0}, 23),
        ("4d_mask_bias_scores", {0: r(2, 3, 4, 8), 1: r(2, 3, 6, 8), 2: r(2, 3, 6, 8), 3: r(4, 6)}, [0, 3],
         {"qk_matmul_output_mode": 2}, 23),
        ("4d_mask_softcap_scores", {0: r(2, 3, 4, 8), 1: r(2, 3, 6, 8), 2: r(2, 3, 6, 8), 3: r(4, 6)}, [0, 3],
         {"qk_matmul_output_mode": 1, "softcap": 2.0}, 23),
        ("4d_short_mask_softmax_scores", {0: r(2, 3, 4, 8), 1: r(2, 3, 6, 8), 2: r(2, 3, 6, 8), 3: r(2, 1, 4, 4)},
         [0, 3], {"qk_matmul_output_mode": 3}, 23),
        ("4d_bool_mask_4d", {0: r(2, 3, 4, 8), 1: r(2, 3, 6, 8), 2: r(2, 3, 6, 8), 3: rng.random((2, 3, 4, 6)) > 0.3},
         [0], {}, 23),
        ("bool_mask_fully_masked_row", {0: r(1, 2, 2, 8), 1: r(1, 2, 2, 8), 2: r(1, 2, 2, 8),
                                        3: np.array([[True, False], [False, False]])}, [0, 3],
         {"qk_matmul_output_mode": 3}, 23),
        ("3d_diff_heads_past_present", {0: r(2, 4, 24), 1: r(2, 6, 24), 2: r(2, 6, 30), 3: r(4, 18),
                                        4: r(2, 3, 12, 8), 5: r(2, 3, 12, 10)}, [0, 1, 2],
         {"q_num_heads": 3, "kv_num_heads": 3}, 23),
        ("4d_causal_past_present", {0: r(2, 3, 4, 8), 1: r(2, 3, 4, 8), 2: r(2, 3, 4, 8), 4: r(2, 3, 3, 8),
                                    5: r(2, 3, 3, 8)}, [0, 1, 2], {"is_causal": 1}, 24),
        ("4d_causal_nonpad", {0: r(3, 2, 2, 8), 1: r(3, 2, 6, 8), 2: r(3, 2, 6, 8),
                              6: np.array([6, 4, 2], dtype=np.int64)}, [0], {"is_causal": 1}, 24),
        ("4d_softcap_neginf_mask", {0: r(1, 1, 4, 8), 1: r(1, 1, 6, 8), 2: r(1, 1, 6, 8),
                                    3: np.where(rng.random((4, 6)) > 0.5, -np.inf, 0).astype(np.float32)}, [0],
         {"softcap": 0.5}, 23),
        ("local_window_causal", {0: r(2, 3, 4, 8), 1: r(2, 3, 6, 8), 2: r(2, 3, 6, 8)}, [0],
         {"is_causal": 1, "left_window_size": 2}, 25),
        ("bidirectional_window_nonpad", {0: r(2, 2, 5, 4), 1: r(2, 2, 7, 4), 2: r(2, 2, 7, 4),
                                         6: np.array([7, 5], dtype=np.int64)}, [0],
         {"left_window_size": 1, "right_window_size": 2}, 25),
        ("4d_causal_fp16", {0: r(2, 3, 4, 8, dtype=np.float16), 1: r(2, 3, 6, 8, dtype=np.float16),
                            2: r(2, 3, 6, 8, dtype=np.float16)}, [0], {"is_causal": 1}, 23),
    ]
    for name, inputs, outputs, attrs, opset in cases:
        write_attention(root, "test_attention_ls_" + name, inputs, outputs, attrs, opset)
        print("test_attention_ls_" + name)


if __name__ == "__main__":
    main(sys.argv[1])
