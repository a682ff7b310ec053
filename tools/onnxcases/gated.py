#!/usr/bin/env python3
"""Writes SwiGLU (opset 28) and CausalConvWithState (opset 27) cases in ONNX's backend-test
layout, expected outputs from float64 numpy readings of the two specs:

    python3 tools/onnxcases/gated.py OUT_DIR"""
import sys

import numpy as np
from case import write_case


def swiglu(a, b, alpha=1.0):
    a64 = a.astype(np.float64)
    return a64 / (1 + np.exp(-alpha * a64)) * b.astype(np.float64)


def causal_conv(x, w, bias=None, past=None, silu=False):
    batch, ch, length = x.shape
    k = w.shape[2]
    state = np.zeros((batch, ch, k - 1)) if past is None else past.astype(np.float64)
    seq = np.concatenate([state, x.astype(np.float64)], axis=2)
    y = np.zeros((batch, ch, length))
    for t in range(length):
        y[:, :, t] = (seq[:, :, t:t + k] * w[:, 0, :].astype(np.float64)).sum(axis=2)
    if bias is not None:
        y += bias.astype(np.float64)[None, :, None]
    if silu:
        y = y / (1 + np.exp(-y))
    return y, seq[:, :, length:]


def main(root):
    rng = np.random.default_rng(27)
    r = lambda *s, dtype=np.float32: rng.uniform(-1, 1, s).astype(dtype)
    for name, a, b, attrs in [("default", r(3, 5), r(3, 5), {}), ("alpha", r(2, 3, 4), r(2, 3, 4), {"alpha": 0.5}),
                              ("float16", r(4, 6, dtype=np.float16), r(4, 6, dtype=np.float16), {})]:
        write_case(root, "test_swiglu_ls_" + name, "SwiGLU", [("a", a), ("b", b)],
                   [("y", swiglu(a, b, **attrs).astype(a.dtype))], attrs, 28)
    cases = [("basic", r(2, 3, 7), r(3, 1, 3), None, None, {}),
             ("bias_past_silu", r(2, 4, 5), r(4, 1, 4), r(4), r(2, 4, 3), {"activation": "silu"}),
             ("one_tap", r(1, 2, 4), r(2, 1, 1), r(2), None, {}),
             ("short_input_past", r(1, 3, 2), r(3, 1, 5), None, r(1, 3, 4), {"activation": "swish"}),
             ("float16", r(2, 3, 6, dtype=np.float16), r(3, 1, 3, dtype=np.float16), None, None, {})]
    for name, x, w, bias, past, attrs in cases:
        y, state = causal_conv(x, w, bias, past, "activation" in attrs)
        write_case(root, "test_causal_conv_with_state_ls_" + name, "CausalConvWithState",
                   [("input", x), ("weight", w), ("bias", bias), ("past_state", past)],
                   [("output", y.astype(x.dtype)), ("present_state", state.astype(x.dtype))], attrs, 27)
    print("done")


if __name__ == "__main__":
    main(sys.argv[1])
