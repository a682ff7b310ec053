#!/usr/bin/env python3
"""Writes Einsum cases for what Debian's onnx 1.12 cases leave out (implicit output, an
ellipsis that broadcasts, three operands, integers) in ONNX's backend-test layout,
expected outputs from numpy.einsum in float64 (int64 for integers):

    python3 tools/onnxcases/einsum.py OUT_DIR"""
import sys

import numpy as np
from case import write_case


def main(root):
    rng = np.random.default_rng(12)
    r = lambda *s: rng.standard_normal(s).astype(np.float32)
    cases = [("implicit_output", "ij,jk", [r(3, 4), r(4, 2)]),
             ("ellipsis_broadcast", "...ij,...jk->...ik", [r(2, 1, 3, 4), r(3, 4, 5)]),
             ("three_operands", "ab,bc,cd->ad", [r(2, 3), r(3, 4), r(4, 2)]),
             ("diagonal_trace", "ii", [r(4, 4)]),
             ("int32_outer", "i,j->ij", [rng.integers(-9, 9, 4).astype(np.int32), rng.integers(-9, 9, 3).astype(np.int32)])]
    for name, eq, xs in cases:
        wide = [x.astype(np.float64 if x.dtype.kind == "f" else np.int64) for x in xs]
        y = np.asarray(np.einsum(eq, *wide)).astype(xs[0].dtype)
        write_case(root, "test_einsum_ls_" + name, "Einsum", [(f"x{k}", x) for k, x in enumerate(xs)], [("y", y)],
                   {"equation": eq}, 12)
    print("done")


if __name__ == "__main__":
    main(sys.argv[1])
