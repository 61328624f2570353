#!/usr/bin/env python3
"""Derives the polynomial coefficients of src/codegen/cpu/vmath.inc (a developer tool; needs mpmath).

Each approximation is a weighted minimax fit (Remez exchange) of a function by a sum of
basis functions, followed by rounding the coefficients to float one at a time, lowest order
first, refitting the rest after each rounding (what Sollya's fpminimax does, simply). The
weight turns the fitted error into the error that matters for the float result: relative
error of exp, log, erf and tanh, or erf's absolute error where erf is computed as
1 - exp(g). Prints each fit's error and its coefficients as C hex-float literals.

    python3 scripts/vmath_coefficients.py
"""
import struct

import mpmath as mp

mp.mp.dps = 50


def to_float(v):
    """v rounded to the nearest IEEE binary32."""
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def hexf(v):
    """C hex-float literal of a float value, without trailing zero digits."""
    mantissa, exponent = float(v).hex().split("p")
    return mantissa.rstrip("0").rstrip(".") + "p" + exponent


def solve_reference(f, w, basis, xs):
    """Coefficients and levelled error E with w(x)(f(x) - sum c_i b_i(x)) = (-1)^j E on xs."""
    n = len(basis)
    a = mp.matrix(n + 1, n + 1)
    rhs = mp.matrix(n + 1, 1)
    for j, x in enumerate(xs):
        for i, b in enumerate(basis):
            a[j, i] = b(x)
        a[j, n] = (-1) ** j / w(x)
        rhs[j] = f(x)
    sol = mp.lu_solve(a, rhs)
    return [sol[i] for i in range(n)], sol[n]


def error_at(f, w, basis, c, x):
    return w(x) * (f(x) - sum(ci * b(x) for ci, b in zip(c, basis)))


def extrema(f, w, basis, c, lo, hi, grid=2000):
    """Alternating extrema of the weighted error on a grid, refined by golden-section search."""
    xs = [lo + (hi - lo) * mp.mpf(k) / grid for k in range(grid + 1)]
    es = [error_at(f, w, basis, c, x) for x in xs]
    # Group consecutive points of one sign; keep the largest |e| of each group.
    groups, cur = [], [0]
    for k in range(1, len(xs)):
        if (es[k] >= 0) == (es[cur[-1]] >= 0):
            cur.append(k)
        else:
            groups.append(cur)
            cur = [k]
    groups.append(cur)
    points = []
    for g in groups:
        k = max(g, key=lambda i: abs(es[i]))
        a, b = xs[max(k - 1, 0)], xs[min(k + 1, grid)]
        sign = 1 if es[k] >= 0 else -1
        phi = (mp.sqrt(5) - 1) / 2
        for _ in range(40):
            m1, m2 = b - phi * (b - a), a + phi * (b - a)
            if sign * error_at(f, w, basis, c, m1) > sign * error_at(f, w, basis, c, m2):
                b = m2
            else:
                a = m1
        x = (a + b) / 2
        if sign * error_at(f, w, basis, c, xs[k]) > sign * error_at(f, w, basis, c, x):
            x = xs[k]
        points.append(x)
    return points


def remez(f, w, basis, lo, hi, iterations=12):
    n = len(basis)
    # Chebyshev extrema, interior points nudged off the middle, where a weight may vanish.
    xs = [(lo + hi) / 2 - (hi - lo) / 2 * mp.cos(mp.pi * j / n) for j in range(n + 1)]
    xs = [x if j in (0, n) else x + (hi - lo) / 1000 for j, x in enumerate(xs)]
    c = None
    for _ in range(iterations):
        try:
            c, _ = solve_reference(f, w, basis, xs)
        except ZeroDivisionError:  # the exchange produced a degenerate reference: keep the last fit
            if c is None:
                raise
            break
        ext = extrema(f, w, basis, c, lo, hi)
        if len(ext) < n + 1:
            break
        # Keep n + 1 alternating points holding the largest errors.
        while len(ext) > n + 1:
            e0 = abs(error_at(f, w, basis, c, ext[0]))
            e1 = abs(error_at(f, w, basis, c, ext[-1]))
            ext = ext[1:] if e0 < e1 else ext[:-1]
        xs = ext
    err = max(abs(error_at(f, w, basis, c, lo + (hi - lo) * mp.mpf(k) / 4000)) for k in range(4001))
    return c, err


def fit_float(f, w, basis, lo, hi):
    """Remez fit, then float coefficients: round the lowest-order one, refit the rest, repeat."""
    fixed = []
    for k in range(len(basis)):
        rest = basis[k:]
        g = (lambda fx: (lambda x: fx(x) - sum(ci * b(x) for ci, b in zip(fixed, basis))))(f)
        c, _ = remez(g, w, rest, lo, hi)
        fixed.append(mp.mpf(to_float(c[0])))
    err = max(abs(error_at(f, w, basis, fixed, lo + (hi - lo) * mp.mpf(k) / 4000))
              for k in range(4001))
    return fixed, err


def report(name, coeffs, err):
    print(f"{name}: max weighted error {mp.nstr(err, 4)} = 2^{mp.nstr(mp.log(err, 2), 4)}")
    for i, cf in enumerate(coeffs):
        print(f"  c{i} = {hexf(cf)}f  /* {mp.nstr(cf, 9)} */")


def powers(start, count, var=lambda x: x):
    return [(lambda k: (lambda x: var(x) ** k))(start + i) for i in range(count)]


def fit_exp():
    # e^r = 1 + r + r^2 P(r) on |r| <= ln2/2 (plus slack for the rounded reduction);
    # relative error of e^r.
    h = mp.log(2) / 2 + mp.mpf("1e-4")
    f = lambda r: (mp.exp(r) - 1 - r) / r**2 if r != 0 else mp.mpf(1) / 2
    w = lambda r: r**2 / mp.exp(r)
    return fit_float(f, w, powers(0, 5), -h, h)


def fit_log():
    # log1p(f) = f - f^2/2 + f^3 P(f) on [sqrt(1/2) - 1, sqrt(2) - 1]; relative error.
    lo, hi = mp.sqrt(mp.mpf(1) / 2) - 1, mp.sqrt(2) - 1
    f = lambda x: (mp.log1p(x) - x + x**2 / 2) / x**3 if x != 0 else mp.mpf(1) / 3
    w = lambda x: x**3 / mp.log1p(x) if x != 0 else mp.mpf(0)
    return fit_float(f, w, powers(0, 8), lo, hi)


def fit_erf_small(t):
    # erf(x) = x + x R(x^2) for |x| <= t, R(s) = sum c_i s^i; relative error of erf.
    f = lambda s: mp.erf(mp.sqrt(s)) / mp.sqrt(s) - 1 if s != 0 else 2 / mp.sqrt(mp.pi) - 1
    w = lambda s: mp.sqrt(s) / mp.erf(mp.sqrt(s)) if s != 0 else mp.sqrt(mp.pi) / 2
    return fit_float(f, w, powers(0, 7), mp.mpf("1e-12"), t * t)


def fit_erf_large(t, top):
    # erf(x) = 1 - exp(g(x)), g(x) = log(erfc(x)) = sum c_i x^i on [t, top]; an error d in g
    # is an error erfc(x) d in erf, relative to erf(x).
    f = lambda x: mp.log(mp.erfc(x))
    w = lambda x: mp.erfc(x) / mp.erf(x)
    return fit_float(f, w, powers(0, 7), t, top)


def fit_tanh(t):
    # tanh(x) = x + x^3 P(x^2) for |x| <= t; relative error of tanh.
    f = lambda s: (mp.tanh(mp.sqrt(s)) - mp.sqrt(s)) / s**mp.mpf(1.5) if s != 0 else -mp.mpf(1) / 3
    w = lambda s: s**mp.mpf(1.5) / mp.tanh(mp.sqrt(s)) if s != 0 else mp.mpf(0)
    return fit_float(f, w, powers(0, 6), mp.mpf("1e-12"), t * t)


if __name__ == "__main__":
    report("exp P(r)", *fit_exp())
    report("log P(f)", *fit_log())
    report("erf small R(x^2)", *fit_erf_small(mp.mpf("0.921875")))
    report("erf large g(x)", *fit_erf_large(mp.mpf("0.921875"), mp.mpf(4)))
    report("tanh P(x^2)", *fit_tanh(mp.mpf("0.75")))
