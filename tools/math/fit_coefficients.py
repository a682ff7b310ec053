#!/usr/bin/python3
"""Fits the float32 polynomial coefficients of src/codegen/math_library.cpp.

Each polynomial is fitted in float64 by Lawson's iteratively reweighted least squares (which
converges to the minimax fit) on many points of its interval, then rounded to float32 one
coefficient at a time, lowest order first, refitting the higher ones after each rounding so
that they absorb its error. Prints each coefficient as a hex float literal with the largest
error of the float32 polynomial (evaluated exactly) relative to the target. Needs numpy
(Debian: python3-numpy). Run: /usr/bin/python3 tools/math/fit_coefficients.py
"""
import math

import numpy as np


def lawson(A, b, w0, iterations=60):
    w = np.ones(len(b))
    c = None
    for _ in range(iterations):
        sw = np.sqrt(w) * w0
        c, *_ = np.linalg.lstsq(A * sw[:, None], b * sw, rcond=None)
        r = np.abs(A @ c - b) * w0
        w = w * (r + 1e-300)
        w /= w.sum()
    return c


def fit(name, g, lo, hi, degree, first=0, relative=True, fixed=()):
    """Coefficients c_first..c_degree of sum c_k t^k ~ g(t) on [lo, hi], float32, after the
    float32 constants `fixed` (c_0.. c_{first-1}) are taken as given."""
    n = 4000
    t = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    t = np.concatenate([t, [lo, hi]])
    target = np.array([g(v) for v in t])
    w0 = 1 / np.maximum(np.abs(target), 1e-300) if relative else np.ones(len(t))
    base = np.zeros(len(t))
    for k, c in enumerate(fixed):
        base += float(c) * t**k
    cs = list(fixed)
    for k in range(first, degree + 1):
        powers = np.stack([t**j for j in range(k, degree + 1)], axis=1)
        scale = np.max(np.abs(powers), axis=0)
        sol = lawson(powers / scale, target - base, w0) / scale
        ck = float(np.float32(sol[0]))
        cs.append(ck)
        base = base + ck * t**k
    err = np.max(np.abs(base - target) * w0)
    print(f"{name}: [{lo:.6g}, {hi:.6g}] degree {degree}: max {'rel' if relative else 'abs'} error "
          f"{err:.3g} (2^{math.log2(err) if err > 0 else -999:.1f})")
    for k, c in enumerate(cs):
        print(f"  c{k} = {float(c).hex()}  ({c:.9g})")
    return cs


def series(terms):
    return lambda t: sum(c * t**k for k, c in enumerate(terms))


if __name__ == "__main__":
    ln2 = math.log(2)
    # ls_exp: e^r = 1 + r + r^2 P(r) on |r| <= ln2/2 (a little more: n is rounded in float32).
    fit("exp P(r) = (e^r - 1 - r) / r^2", series([1 / math.factorial(k + 2) for k in range(20)]), -0.3467, 0.3467, 5)
    # ls_log: log(1+f) = f - f^2/2 + s (f^2/2 + z P(z)), s = f / (2 + f), z = s^2, |s| <= 0.1716.
    fit("log P(z) = (2 atanh(s) - 2 s) / s^3", series([2 / (2 * k + 3) for k in range(40)]), 0.0, 0.1716**2, 3)
    # ls_tanh near 0: tanh(x) = x + x w P(w), w = x^2, |x| < 0.55.
    def tanhP(w):
        if w < 1e-3:
            return -1 / 3 + 2 * w / 15 - 17 * w**2 / 315 + 62 * w**3 / 2835 - 1382 * w**4 / 155925
        x = math.sqrt(w)
        return (math.tanh(x) / x - 1) / w
    fit("tanh P(w) = (tanh(x)/x - 1) / w", tanhP, 0.0, 0.55**2, 6, relative=False)
    # ls_erf near 0: erf(x) = x + x R(w), w = x^2, |x| < 0.84.
    def erfR(w):
        x = math.sqrt(w)
        return math.erf(x) / x - 1 if w else 2 / math.sqrt(math.pi) - 1
    fit("erf R(w) = erf(x)/x - 1", erfR, 0.0, 0.84**2, 7, relative=False)
    # ls_erf middle: erf(a) = C + P(a - x0) on [0.84, 1.5], x0 = 1.171875 (a float32, so that a - x0
    # is exact), C = erf(x0) in float32.
    x0 = 1.171875
    C = float(np.float32(math.erf(x0)))
    print(f"erf middle C = {C.hex()} ({C:.9g})")
    fit("erf P(s) = erf(x0 + s) - C", lambda s: math.erf(x0 + s) - C, 0.84 - x0, 1.5 - x0, 10, relative=False)
    # ls_erf tail: erfc(a) = exp(-a^2) F(1/a) on [1.5, 4].
    fit("erfc F(t) = erfc(1/t) exp(1/t^2)", lambda t: math.erfc(1 / t) * math.exp(1 / (t * t)), 0.25, 1 / 1.5, 9)
    # ls_pow, log2: atanh(s) = s + s z (1/3 + z P(z)), z = s^2, |s| <= 0.1716.
    fit("atanh P(z) = (atanh(s)/s - 1 - z/3) / z^2", series([1 / (2 * k + 5) for k in range(40)]), 0.0, 0.1716**2, 3,
        relative=False)
    # ls_pow, exp2: 2^r = 1 + r ln2 + r^2 Q(r) on |r| <= 1/2 (and a little).
    fit("exp2 Q(r) = (2^r - 1 - r ln2) / r^2", series([ln2 ** (k + 2) / math.factorial(k + 2) for k in range(20)]),
        -0.50001, 0.50001, 5, relative=False)
