"""Helpers shared by the vector tests: machines with a filled UB, comparisons, hypothesis strategies."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from pto_core import Machine, MachineOptions

REGION = 16384          # bytes of UB the randomised tests use
BASE_MAX = 8192         # operand bases are multiples of 32 below this


def machine(target="A2A3", *, overflow_mode=None, seed=0, uninitialized="raise"):
    """A machine whose UB holds random (initialised) bytes; the randomised tests use the first REGION bytes."""
    m = Machine(target, options=MachineOptions(overflow_mode=overflow_mode, uninitialized=uninitialized))
    ub = m.context(0).core.buffer("ub")
    rng = np.random.default_rng(seed)
    ub.data[:] = rng.integers(0, 256, ub.size, dtype=np.uint8)
    ub.written[:] = True
    return m


def ub_bytes(m) -> np.ndarray:
    return m.context(0).core.buffer("ub").data


def same_values(a: np.ndarray, b: np.ndarray, dt) -> np.ndarray:
    """Element-wise equality of two byte arrays viewed as ``dt``, all NaNs equal."""
    x = a.view(dt)
    y = b.view(dt)
    eq = x.view(np.dtype(f"u{x.itemsize}")) == y.view(np.dtype(f"u{y.itemsize}"))
    if np.issubdtype(np.dtype(dt), np.floating) or np.dtype(dt).kind == "V" or "bfloat" in str(dt):
        with np.errstate(invalid="ignore"):
            eq |= np.isnan(x.astype(np.float64)) & np.isnan(y.astype(np.float64))
    return eq


def assert_same(got: np.ndarray, want: np.ndarray, dt, what="") -> None:
    n = (min(len(got), len(want)) // np.dtype(dt).itemsize) * np.dtype(dt).itemsize
    eq = same_values(got[:n], want[:n], dt)
    if not eq.all():
        i = int(np.argmin(eq))
        raise AssertionError(f"{what}: first mismatch at element {i} (byte {i * np.dtype(dt).itemsize}): "
                             f"got {got[:n].view(dt)[i]!r} want {want[:n].view(dt)[i]!r}; "
                             f"{int((~eq).sum())} mismatches")


def bases(n: int):
    return st.lists(st.integers(0, BASE_MAX // 32 - 1).map(lambda k: 32 * k), min_size=n, max_size=n)


def masks(par: int):
    """None (all lanes), a count, or nonzero lane bits in TIK's spelling."""
    count = st.integers(1, par)
    if par == 256:
        bits = st.lists(st.integers(0, 2 ** 64 - 1), min_size=4, max_size=4).filter(any).map(tuple)
    elif par == 128:
        bits = st.tuples(st.integers(0, 2 ** 64 - 1), st.integers(0, 2 ** 64 - 1)).filter(any)
    elif par == 64:
        bits = st.tuples(st.just(0), st.integers(1, 2 ** 64 - 1))
    else:
        bits = st.tuples(st.just(0), st.integers(1, 2 ** 32 - 1))
    return st.one_of(st.none(), count, bits)
