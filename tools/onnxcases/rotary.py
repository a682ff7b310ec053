#!/usr/bin/env python3
"""Writes RotaryEmbedding conformance cases (opset 23) in ONNX's backend-test layout, expected
outputs from a float64 numpy reading of the spec:

    python3 tools/onnxcases/rotary.py OUT_DIR"""
import sys

import numpy as np
from case import write_case


def rotary(x, cos, sin, pos=None, interleaved=0, dim=0, heads=0):
    shape = x.shape
    x = x.astype(np.float64)
    if x.ndim == 3:
        x = x.reshape(shape[0], shape[1], heads, -1)
    else:
        x = x.transpose(0, 2, 1, 3)  # [B, S, H, D]
    dim = dim or x.shape[3]
    if pos is not None:
        cos, sin = cos[pos], sin[pos]
    c = cos.astype(np.float64)[:, :, None, :]
    s = sin.astype(np.float64)[:, :, None, :]
    rot = x[..., :dim].copy()
    first = rot[..., 0::2] if interleaved else rot[..., : dim // 2]
    second = rot[..., 1::2] if interleaved else rot[..., dim // 2:]
    a, b = c * first - s * second, s * first + c * second
    if interleaved:
        rot[..., 0::2], rot[..., 1::2] = a, b
    else:
        rot = np.concatenate([a, b], axis=-1)
    y = np.concatenate([rot, x[..., dim:]], axis=-1)
    return y.reshape(shape) if len(shape) == 3 else y.transpose(0, 2, 1, 3)


def main(root):
    rng = np.random.default_rng(24)

    def r(*shape, dtype=np.float32):
        return rng.uniform(-1, 1, shape).astype(dtype)

    def angles(rows, half, dtype=np.float32):
        t = rng.uniform(0, 2 * np.pi, (rows, half))
        return np.cos(t).astype(dtype), np.sin(t).astype(dtype)

    cases = []
    cos, sin = angles(10, 4)
    cases.append(("4d_positions", r(2, 3, 5, 8), cos, sin, rng.integers(0, 10, (2, 5)), {}))
    cases.append(("3d_positions_interleaved", r(2, 5, 24), cos, sin, rng.integers(0, 10, (2, 5)),
                  {"num_heads": 3, "interleaved": 1}))
    c3, s3 = angles(2 * 5, 2)
    cases.append(("4d_no_positions_rotary_dim", r(2, 3, 5, 8), c3.reshape(2, 5, 2), s3.reshape(2, 5, 2), None,
                  {"rotary_embedding_dim": 4}))
    cases.append(("3d_interleaved_rotary_dim", r(1, 4, 12), *angles(6, 2), rng.integers(0, 6, (1, 4)),
                  {"num_heads": 2, "interleaved": 1, "rotary_embedding_dim": 4}))
    c16, s16 = angles(8, 4, np.float16)
    cases.append(("4d_float16", r(1, 2, 3, 8, dtype=np.float16), c16, s16, rng.integers(0, 8, (1, 3)), {}))
    for name, x, cos, sin, pos, attrs in cases:
        kw = {"interleaved": attrs.get("interleaved", 0), "dim": attrs.get("rotary_embedding_dim", 0),
              "heads": attrs.get("num_heads", 0)}
        y = rotary(x, cos, sin, pos, **kw).astype(x.dtype)
        ins = [("input", x), ("cos_cache", cos), ("sin_cache", sin)]
        if pos is not None:
            ins.append(("position_ids", pos.astype(np.int64)))
        write_case(root, "test_rotary_embedding_ls_" + name, "RotaryEmbedding", ins, [("output", y)], attrs, 23)
        print("test_rotary_embedding_ls_" + name)


if __name__ == "__main__":
    main(sys.argv[1])
