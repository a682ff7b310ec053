#!/usr/bin/env python3
"""Writes CenterCropPad cases (opset 18) in ONNX's backend-test layout, expected outputs by
slicing and zero-padding about each axis's centre (an odd difference leaves the extra element
at the end):

    python3 tools/onnxcases/center_crop_pad.py OUT_DIR"""
import sys

import numpy as np
from case import write_case


def center_crop_pad(x, shape, axes):
    out_shape = list(x.shape)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for a, want in zip(axes, shape):
        dim = x.shape[a]
        out_shape[a] = want
        lo = abs(dim - want) // 2
        if want < dim:
            src[a] = slice(lo, lo + want)
        else:
            dst[a] = slice(lo, lo + dim)
    y = np.zeros(out_shape, dtype=x.dtype)
    y[tuple(dst)] = x[tuple(src)]
    return y


def main(root):
    rng = np.random.default_rng(18)
    cases = [("crop_and_pad_odd", rng.standard_normal((5, 4, 3)).astype(np.float32), [2, 7], [0, 1]),
             ("all_axes_int32", rng.integers(-9, 9, (3, 6)).astype(np.int32), [6, 3], None),
             ("negative_axis_pad", rng.standard_normal((2, 3, 4)).astype(np.float32), [7], [-1])]
    for name, x, shape, axes in cases:
        y = center_crop_pad(x, shape, axes if axes else range(x.ndim))
        axes = [a % x.ndim for a in axes] if axes and name != "negative_axis_pad" else axes
        write_case(root, "test_center_crop_pad_ls_" + name, "CenterCropPad",
                   [("x", x), ("shape", np.array(shape, dtype=np.int64))], [("y", y)],
                   {"axes": axes} if axes else {}, 18)
    print("done")


if __name__ == "__main__":
    main(sys.argv[1])
