"""GM atomic max/min of +0 and -0 (named choice ATOMIC_MAXMIN_SIGNED_ZERO, fixpipe_semantics.md #37): -0 < +0 on
every path -- FIXPIPE ``atomic(op = max|min)`` and MTE moves into GM under ``pto.set_atomic_max`` / ``_min`` -- for
f16, f32 and bf16, whichever zero is in GM first (IEEE 754-2019 maximum / minimum)."""
import ml_dtypes
import numpy as np
import pytest

from fixpipe_support import load_acc
from pto_core import Machine, dtype, pto
from pto_core.numerics import minmax

#: (GM value, incoming value) pairs: every order of two zeros, and a zero against a nonzero / NaN
OLD = [0.0, -0.0, 0.0, -0.0, 0.0, -0.0, -1.0, 2.0, np.nan, 0.0, -0.0, 3.0, -0.0, 0.0, -2.0, 1.0]
NEW = [-0.0, 0.0, 0.0, -0.0, 1.0, -1.0, -0.0, 0.0, -0.0, np.nan, -0.0, 0.0, 0.0, -0.0, -0.0, -0.0]
STORAGE = {"f16": np.float16, "f32": np.float32, "bf16": ml_dtypes.bfloat16}


def _want(op: str, name: str) -> np.ndarray:
    """IEEE 754-2019 by hand: NaN propagates; of two zeros max is -0 only if both are, min +0 only if both are."""
    out = []
    for a, b in zip(OLD, NEW):
        if np.isnan(a) or np.isnan(b):
            out.append(np.nan)
        elif a == b == 0.0:
            neg = (np.signbit(a) and np.signbit(b)) if op == "max" else (np.signbit(a) or np.signbit(b))
            out.append(-0.0 if neg else 0.0)
        else:
            out.append(max(a, b) if op == "max" else min(a, b))
    return np.array(out, dtype=STORAGE[name])


def _same(got: np.ndarray, want: np.ndarray) -> None:
    g, w = got.astype(np.float64), want.astype(np.float64)
    assert np.array_equal(np.isnan(g), np.isnan(w)), (got, want)
    keep = ~np.isnan(w)
    assert np.array_equal(g[keep], w[keep]) and np.array_equal(np.signbit(g[keep]), np.signbit(w[keep])), \
        (list(zip(OLD, NEW, g, w)))


@pytest.mark.parametrize("name", ["f16", "f32", "bf16"])
@pytest.mark.parametrize("op", ["max", "min"])
def test_mte_atomic_max_min_order_minus_zero_below_plus_zero(name, op):
    m = Machine("A2A3")
    gm = m.gm_tensor(np.array(OLD, dtype=STORAGE[name]), name="y")
    ub = m.ptr("ub", name, 0)
    m.write(ub, np.array(NEW, dtype=STORAGE[name]))
    getattr(pto, f"set_atomic_{name}")()
    getattr(pto, f"set_atomic_{op}")()
    nbytes = len(OLD) * dtype(name).bits // 8
    pto.mte_ub_gm(ub, gm, nbytes, nburst=(1, nbytes, nbytes))
    _same(m.read(gm, len(OLD)), _want(op, name))


@pytest.mark.parametrize("name", ["f16", "f32", "bf16"])
@pytest.mark.parametrize("op", ["max", "min"])
def test_fixpipe_atomic_max_min_order_minus_zero_below_plus_zero(name, op):
    m = Machine("A5")
    n = len(OLD)
    src, ss = load_acc(m, np.array([NEW], dtype=np.float32))
    out = m.gm_tensor(np.array([OLD], dtype=STORAGE[name]), name="out", dtype=name)
    mode = {"f32": None, "f16": "f32_f16", "bf16": "f32_bf16"}[name]
    kw = {} if mode is None else {"pre_quant": (0.0, {"mode": mode})}
    pto.mte_l0c_gm(src, out, 1, n, ss, n, 0, 0, **kw, nz2nd=True, sat="preserve_nan",
                   atomic={"type": name, "op": op})
    _same(m.read(out, (1, n))[0], _want(op, name))


@pytest.mark.parametrize("op", ["max", "min"])
def test_the_other_choice_keeps_the_gm_zero(monkeypatch, op):
    """With ATOMIC_MAXMIN_SIGNED_ZERO = "gm_value" two zeros compare equal and the GM one stays, on both paths."""
    monkeypatch.setattr(minmax, "ATOMIC_MAXMIN_SIGNED_ZERO", "gm_value")
    old = np.array([0.0, -0.0, 0.0, -0.0, np.nan, 1.0, -1.0, 0.0], np.float32)
    new = np.array([-0.0, 0.0, 0.0, -0.0, 0.0, np.nan, -0.0, 5.0], np.float32)
    got = minmax.atomic_maxmin(old, new, op)
    want = np.where(np.isnan(old), old, np.where(np.isnan(new), new, np.where(
        (new > old) if op == "max" else (new < old), new, old)))
    assert np.array_equal(np.signbit(got[:4]), np.signbit(old[:4]))
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
