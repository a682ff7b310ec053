#!/usr/bin/env python3
"""Writes GroupNormalization cases (opset 18: scale and bias per group; 21: per channel) in
ONNX's backend-test layout, expected outputs from a float64 numpy reading of the spec:

    python3 tools/onnxcases/group_norm.py OUT_DIR"""
import sys

import numpy as np
from case import write_case


def group_norm(x, groups, scale, bias, eps, per_group):
    n, c = x.shape[:2]
    rows = x.astype(np.float64).reshape(n, groups, -1)
    y = ((rows - rows.mean(axis=2, keepdims=True)) / np.sqrt(rows.var(axis=2, keepdims=True) + eps)).reshape(x.shape)
    if per_group:
        scale, bias = np.repeat(scale, c // groups), np.repeat(bias, c // groups)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return y * scale.astype(np.float64).reshape(shape) + bias.astype(np.float64).reshape(shape)


def main(root):
    rng = np.random.default_rng(21)
    r = lambda *s: rng.standard_normal(s).astype(np.float32)
    cases = [("per_channel_3d", r(2, 6, 5), 3, r(6), r(6), 1e-5, 21),
             ("per_channel_eps", r(3, 4, 2, 3), 2, r(4), r(4), 0.01, 21),
             ("per_group_opset18", r(2, 6, 3, 2), 3, r(3), r(3), 1e-5, 18)]
    for name, x, groups, scale, bias, eps, opset in cases:
        y = group_norm(x, groups, scale, bias, eps, opset < 21).astype(np.float32)
        write_case(root, "test_group_normalization_ls_" + name, "GroupNormalization",
                   [("x", x), ("scale", scale), ("bias", bias)], [("y", y)], {"num_groups": groups, "epsilon": eps},
                   opset)
    print("done")


if __name__ == "__main__":
    main(sys.argv[1])
