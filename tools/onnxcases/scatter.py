#!/usr/bin/env python3
"""Writes ScatterElements and ScatterND cases with the max and min reductions (opset 18, newer
than Debian's onnx 1.12 can generate) in ONNX's backend-test layout, expected outputs from a
numpy loop over the updates in order:

    python3 tools/onnxcases/scatter.py OUT_DIR"""
import sys

import numpy as np
from case import write_case

FOLD = {"max": np.maximum, "min": np.minimum, "add": np.add, "mul": np.multiply}


def scatter_elements(data, idx, upd, axis, reduction):
    out = data.copy()
    for p in np.ndindex(*idx.shape):
        at = list(p)
        at[axis] = idx[p] % data.shape[axis]
        out[tuple(at)] = FOLD[reduction](out[tuple(at)], upd[p])
    return out


def scatter_nd(data, idx, upd, reduction):
    out = data.copy()
    for p in np.ndindex(*idx.shape[:-1]):
        at = tuple(i % n for i, n in zip(idx[p], data.shape))
        out[at] = FOLD[reduction](out[at], upd[p])
    return out


def main(root):
    rng = np.random.default_rng(18)
    for red in ("max", "min"):
        data = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
        idx = np.array([[1, 1, 0], [3, -1, 2], [0, 0, 0]], dtype=np.int64)  # repeats, a negative index
        upd = rng.uniform(-2, 2, (3, 3)).astype(np.float32)
        out = scatter_elements(data, idx, upd, 1, red)
        write_case(root, f"test_scatter_elements_ls_reduction_{red}", "ScatterElements",
                   [("data", data), ("indices", idx), ("updates", upd)], [("y", out)],
                   {"axis": 1, "reduction": red}, 18)
        data = rng.integers(-50, 50, (4, 2, 3)).astype(np.int32)
        idx = np.array([[[0], [2]], [[2], [-4]]], dtype=np.int64)
        upd = rng.integers(-50, 50, (2, 2, 2, 3)).astype(np.int32)
        out = scatter_nd(data, idx, upd, red)
        write_case(root, f"test_scatternd_ls_int32_{red}", "ScatterND",
                   [("data", data), ("indices", idx), ("updates", upd)], [("y", out)], {"reduction": red}, 18)
        print(red)


if __name__ == "__main__":
    main(sys.argv[1])
