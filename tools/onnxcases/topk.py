#!/usr/bin/env python3
"""Writes TopK cases for what Debian's onnx 1.12 cases leave out (ties, NaN, uint64, k as an
attribute at opset 9) in ONNX's backend-test layout, expected outputs from numpy's stable sort:

    python3 tools/onnxcases/topk.py OUT_DIR"""
import sys

import numpy as np
from case import write_case


def topk(x, k, axis, largest):
    """Ties keep index order; NaN above every number (numpy's order)."""
    key = np.where(np.isnan(x), np.inf, x) if x.dtype.kind == "f" else x
    nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    if largest:  # descending by (nan, value), ascending by index: a stable sort of the negation
        order = np.lexsort((np.indices(x.shape)[axis], -key.astype(np.float64) if x.dtype.kind == "f" else
                            (np.iinfo(x.dtype).max - x), ~nan), axis=axis)
    else:
        order = np.lexsort((np.indices(x.shape)[axis], key, nan), axis=axis)
    order = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, order, axis=axis), order.astype(np.int64)


def main(root):
    rng = np.random.default_rng(10)
    ties = rng.integers(0, 3, (3, 6)).astype(np.float32)
    nans = rng.uniform(-1, 1, (2, 7)).astype(np.float32)
    nans[0, [1, 4]] = np.nan
    nans[1, 2] = np.inf
    nans[1, 5] = -0.0
    nans[1, 6] = 0.0
    u64 = np.array([[2**64 - 1, 5, 2**63, 5, 0]], dtype=np.uint64)
    cases = [("ties_largest", ties, 4, 1, 1), ("ties_smallest", ties, 4, 1, 0), ("nan_largest", nans, 5, 1, 1),
             ("nan_smallest", nans, 5, 1, 0), ("uint64", u64, 3, 1, 1), ("axis0", ties, 2, 0, 0)]
    for name, x, k, axis, largest in cases:
        v, i = topk(x, k, axis, largest)
        write_case(root, "test_top_k_ls_" + name, "TopK", [("x", x), ("k", np.array([k], dtype=np.int64))],
                   [("values", v), ("indices", i)], {"axis": axis, "largest": largest}, 11)
        print(name)
    v, i = topk(ties, 3, 1, 1)
    write_case(root, "test_top_k_ls_opset9_attribute", "TopK", [("x", ties)], [("values", v), ("indices", i)],
               {"axis": 1, "k": 3}, 9)


if __name__ == "__main__":
    main(sys.argv[1])
