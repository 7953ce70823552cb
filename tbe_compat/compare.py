"""Output comparison with a readable report (``tik-migrate --check``, the pytest plugin), and the
legacy-``fixpipe`` comparison API of ``tik-compare-fixpipe`` (`FIXPIPE_API`, from
`tbe_compat.fixpipe_compare` / `tbe_compat.fixpipe_sweep`).

`compare_arrays` answers None when ``actual`` matches ``expected`` and otherwise a short
report: the dtype/shape difference, or the number of differing elements, the first one
(index and both values), the largest absolute difference and the largest difference in
units in the last place (ULP). Bit-exact by default: the bytes must be equal (so NaN
payloads and the sign of zero count); with a tolerance (``atol``/``rtol`` as in
`numpy.isclose`, or ``ulp``) finite values may differ by that much, NaNs must sit at the
same positions and infinities must be equal.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

#: unsigned integer view of each float width (ULP distances are computed on these bits)
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def is_float(dtype) -> bool:
    """True for numpy/ml_dtypes floating types (float16/32/64, bfloat16, float8 ...)."""
    dt = np.dtype(dtype)
    return dt.kind == "f" or (dt.kind == "V" and "float" in dt.name) or dt.name in (
        "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3", "float8_e8m0fnu", "float4_e2m1fn")


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Number of representable values between ``a`` and ``b`` (same float dtype) as float64 (exact up
    to 2^53 steps). +0 and -0 are 0 apart; a NaN operand gives NaN."""
    width = np.dtype(a.dtype).itemsize
    u = _UINT[width]
    sign_bit = np.uint64(1 << (8 * width - 1))

    def split(x):
        raw = np.ascontiguousarray(x).view(u).astype(np.uint64)
        return (raw & sign_bit) != 0, (raw & ~sign_bit).astype(np.int64)      # sign, magnitude bits

    sa, ma = split(a)
    sb, mb = split(b)
    same = sa == sb
    out = np.where(same, np.abs(ma - np.where(same, mb, 0)).astype(np.float64),
                   ma.astype(np.float64) + mb.astype(np.float64))
    nan = np.isnan(a.astype(np.float64)) | np.isnan(b.astype(np.float64))
    return np.where(nan, np.nan, out)


def compare_arrays(name: str, expected, actual, *, atol: float = 0.0, rtol: float = 0.0,
                   ulp: int = 0) -> Optional[str]:
    """None if ``actual`` matches ``expected`` (bit-exact unless a tolerance is given), else a report."""
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    if expected.dtype != actual.dtype:
        return f"{name}: dtype {actual.dtype}, expected {expected.dtype}"
    if expected.shape != actual.shape:
        return f"{name}: shape {actual.shape}, expected {expected.shape}"
    tolerant = bool(atol or rtol or ulp)
    fl = is_float(expected.dtype)
    if not tolerant:
        view = _UINT.get(expected.dtype.itemsize)
        e, a = np.ascontiguousarray(expected), np.ascontiguousarray(actual)
        bad = e.view(view) != a.view(view) if view is not None and e.dtype.kind != "b" else e != a
    elif fl:
        e64, a64 = expected.astype(np.float64), actual.astype(np.float64)
        finite = np.isfinite(e64) & np.isfinite(a64)
        close = (np.isnan(e64) & np.isnan(a64)) | (np.isinf(e64) & (e64 == a64))
        if atol or rtol:
            close |= finite & np.isclose(a64, e64, rtol=rtol, atol=atol)
        if ulp:
            close |= finite & (ulp_distance(expected, actual) <= ulp)
        bad = ~close
    else:                                    # integers and bool: |a - e| <= atol + rtol * |e|
        e64, a64 = expected.astype(np.float64), actual.astype(np.float64)
        bad = ~(np.abs(a64 - e64) <= atol + rtol * np.abs(e64))
    count = int(np.count_nonzero(bad))
    if count == 0:
        return None
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    idx = first if len(first) != 1 else first[0]
    msg = (f"{name}: {count} of {expected.size} elements differ; first at index {idx}: "
           f"got {_show(actual[first])}, expected {_show(expected[first])}")
    if fl or expected.dtype.kind in "iu":
        e64 = expected.astype(np.float64)[bad]
        a64 = actual.astype(np.float64)[bad]
        both = np.isfinite(e64) & np.isfinite(a64)
        if both.any():
            msg += f"; max abs diff {float(np.max(np.abs(a64[both] - e64[both]))):.6g}"
            if fl:
                u = ulp_distance(expected[bad][both], actual[bad][both])
                msg += f", max ulp diff {int(np.nanmax(u))}"
    return msg


def _show(x) -> str:
    x = np.asarray(x)
    if is_float(x.dtype) and x.dtype.itemsize in _UINT:
        bits = int(np.ascontiguousarray(x).reshape(1).view(_UINT[x.dtype.itemsize])[0])
        return f"{float(x.astype(np.float64))!r} (0x{bits:0{2 * x.dtype.itemsize}x})"
    return repr(x.item())


#: The fixpipe comparison API (``tik-compare-fixpipe``), implemented in `tbe_compat.fixpipe_compare`
#: and `tbe_compat.fixpipe_sweep`, importable from here (loaded on first use).
FIXPIPE_API = ("ValueDiff", "Mismatch", "FixpipeComparison", "KernelWatch", "KernelRun", "ScriptComparison",
               "diff_values", "watch_kernel", "compare_kernel", "compare_script", "generated_feed", "load_feed",
               "format_comparisons", "verdict", "sweep", "format_sweep", "fmt_metric")


def __getattr__(name: str):
    if name in FIXPIPE_API:
        from . import fixpipe_compare
        return getattr(fixpipe_compare, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["compare_arrays", "ulp_distance", "is_float", *FIXPIPE_API]
